package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestCrossJoinHitsLimitsServerStaysUp is the bounded-queries acceptance
// test against the real system (controller binary, replica processes):
// SELECT * FROM t a, t b, t c ORDER BY 1 over a table whose cube is far
// above max_result_size ends with 54000 while a concurrent SELECT 1
// answers, and the controller and its replicas stay up; under a small
// max_query_memory the same ORDER BY (its answer allowed) is sorted on
// disk and answered in order, and a cursor that must hold it fails with
// 53200; max_connections refuses one client too many with 53300.
func TestCrossJoinHitsLimitsServerStaysUp(t *testing.T) {
	bin := buildBinaries(t)
	rc := startController(t, bin, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dsn := "postgres://tandem@" + rc.pgwireAddr + "/tandem?sslmode=disable"
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(q string) {
		t.Helper()
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE TABLE t (a bigint, b text)")
	var values []string
	const n = 60 // 216,000 rows in the cube, about 10 MB encoded
	for i := range n {
		values = append(values, fmt.Sprintf("(%d, 'row %d of the table')", i, i))
	}
	exec("INSERT INTO t VALUES " + strings.Join(values, ", "))
	exec("ALTER SYSTEM SET max_result_size = '1MB'")
	var pids []int
	for deadline := time.Now().Add(60 * time.Second); len(pids) == 0 && time.Now().Before(deadline); {
		pids = rc.replicaPIDs(t)
		time.Sleep(20 * time.Millisecond)
	}
	slices.Sort(pids)

	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	crossErr := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "SELECT * FROM t a, t b, t c ORDER BY 1")
		crossErr <- err
	}()
	answered := 0
	for done := false; !done; {
		select {
		case err := <-crossErr:
			if sqlState(err) != "54000" || !strings.Contains(err.Error(), "exceeds max") {
				t.Fatalf("cross join over max_result_size: %v, want 54000", err)
			}
			done = true
		default:
			qctx, qcancel := context.WithTimeout(ctx, 20*time.Second)
			var one int
			err := other.QueryRow(qctx, "SELECT 1").Scan(&one)
			qcancel()
			if err != nil || one != 1 {
				t.Fatalf("SELECT 1 during the cross join: %v", err)
			}
			answered++
		}
	}
	if answered == 0 {
		t.Fatal("no SELECT 1 ran while the cross join did")
	}
	checkUp(t, rc, pids, conn)

	// Its answer allowed, the ORDER BY is sorted beyond max_query_memory
	// on disk and answered in order.
	exec("ALTER SYSTEM SET max_result_size = '64MB'")
	exec("ALTER SYSTEM SET max_query_memory = '1MB'")
	rows, err := conn.Query(ctx, "SELECT a.a, b.a, c.a FROM t a, t b, t c ORDER BY 1 DESC, 3, 2", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	count, prev := 0, [3]int64{n, -1, -1}
	for rows.Next() {
		var r [3]int64
		if err := rows.Scan(&r[0], &r[1], &r[2]); err != nil {
			t.Fatal(err)
		}
		if r[0] > prev[0] || r[0] == prev[0] && (r[2] < prev[2] || r[2] == prev[2] && r[1] <= prev[1]) {
			t.Fatalf("row %d %v after %v: out of order", count, r, prev)
		}
		prev = r
		count++
	}
	if err := rows.Err(); err != nil || count != n*n*n {
		t.Fatalf("sorted cross join: %d rows, %v", count, err)
	}
	// A cursor holds its rows in memory: over max_query_memory, 53200.
	if _, err := conn.Exec(ctx, "DECLARE c CURSOR FOR SELECT * FROM t a, t b, t c"); sqlState(err) != "53200" ||
		!strings.Contains(err.Error(), "max_query_memory") {
		t.Fatalf("cursor over max_query_memory: %v, want 53200", err)
	}
	checkUp(t, rc, pids, conn)

	// max_connections: conn and other are two; a third is one too many.
	exec("ALTER SYSTEM SET max_connections = 2")
	if _, err := pgx.Connect(ctx, dsn); sqlState(err) != "53300" {
		t.Fatalf("connection over max_connections: %v, want 53300", err)
	}
	exec("ALTER SYSTEM RESET max_connections")
	third, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("after RESET max_connections: %v", err)
	}
	third.Close(ctx)
}

// checkUp checks that the controller serves SQL and /healthz and that
// its replica processes are the ones it started with.
func checkUp(t *testing.T, rc *runningController, pids []int, conn *pgx.Conn) {
	t.Helper()
	var c int64
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM t").Scan(&c); err != nil || c == 0 {
		t.Fatalf("controller after the query: %d, %v", c, err)
	}
	resp, err := http.Get("http://" + rc.httpAddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %s", resp.Status)
	}
	now := rc.replicaPIDs(t)
	slices.Sort(now)
	if !slices.Equal(now, pids) {
		t.Fatalf("replica processes %v, want %v (a replica restarted)", now, pids)
	}
}
