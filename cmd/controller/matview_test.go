package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/storage"
)

// queryRows runs q and returns its rows, each formatted as "a|b|c",
// sorted.
func queryRows(ctx context.Context, t *testing.T, conn *pgx.Conn, q string) []string {
	t.Helper()
	rows, err := conn.Query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	slices.Sort(out)
	return out
}

func mustExec(ctx context.Context, t *testing.T, conn *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func connectPG(ctx context.Context, t *testing.T, rc *runningController) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, "postgres://tandem@"+rc.pgwireAddr+"/tandem?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestMaterializedViewIsStoredAcrossRestart checks that a materialized
// view is stored like a table: it is readable from another cluster, its
// contents survive a controller (and replica) restart and are served from
// storage at once, even while nothing maintains it, and once a replica of
// its cluster runs again it catches up with the writes it missed, keeps up
// with new ones, and never duplicates what the shard already held, also
// with two replicas (one of them multi-process) writing at once. DROP
// removes the shard.
func TestMaterializedViewIsStoredAcrossRestart(t *testing.T) {
	bin := buildBinaries(t)
	dataDir := t.TempDir()
	t.Cleanup(func() {
		if t.Failed() {
			logTails(t, dataDir)
		}
	})
	rc := startController(t, bin, dataDir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn := connectPG(ctx, t, rc)
	mustExec(ctx, t, conn,
		"CREATE TABLE t (a bigint, b text)",
		"CREATE CLUSTER mvc REPLICAS (r1 (SIZE '1'))",
		"CREATE MATERIALIZED VIEW mv IN CLUSTER mvc AS SELECT b, count(*) AS n, sum(a) AS s FROM t GROUP BY b",
		"INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'x')",
		"SET transaction_isolation = 'strict serializable'",
	)
	// Read from the default cluster: the view is not maintained there, so
	// the read goes through its storage shard.
	want := []string{"x|2|4", "y|1|2"}
	if got := queryRows(ctx, t, conn, "SELECT * FROM mv"); !slices.Equal(got, want) {
		t.Fatalf("mv before restart = %v, want %v", got, want)
	}
	// Nothing maintains the view any more: writes to t stay invisible in
	// it, and a serializable read gets its last stored contents.
	mustExec(ctx, t, conn,
		"DROP CLUSTER REPLICA mvc.r1",
		"INSERT INTO t VALUES (4, 'y')",
		"SET transaction_isolation = 'serializable'",
	)
	// (A serializable read may be at an earlier time: the controller learns
	// the shard's upper on its next storage poll. It never shows the insert
	// made after the replica was dropped.)
	for deadline := time.Now().Add(30 * time.Second); ; {
		got := queryRows(ctx, t, conn, "SELECT * FROM mv")
		if slices.Equal(got, want) {
			break
		}
		if slices.Contains(got, "y|2|6") || time.Now().After(deadline) {
			t.Fatalf("mv without a replica = %v, want its stored contents %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	shard, upperBefore := onlySink(t, dataDir)

	// Restart the controller (its replicas die with it).
	if err := rc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = rc.cmd.Wait()
	restarted := time.Now()
	rc = startController(t, bin, dataDir)
	conn = connectPG(ctx, t, rc)
	// A strict serializable read would wait for the view to be written up
	// to the oracle's time, which needs a replica of its cluster.
	mustExec(ctx, t, conn, "SET transaction_isolation = 'serializable'")
	// Served from storage although the view's cluster has no replica: no
	// recomputation is involved.
	var got []string
	for {
		rows, err := conn.Query(ctx, "SELECT * FROM mv")
		if err == nil {
			got = nil
			for rows.Next() {
				var b string
				var n, s int64
				if err = rows.Scan(&b, &n, &s); err != nil {
					break
				}
				got = append(got, fmt.Sprintf("%s|%d|%d", b, n, s))
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		if err == nil {
			break
		}
		// Only while the default cluster's replica is starting.
		if time.Since(restarted) > time.Minute {
			t.Fatalf("mv unreadable after restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	slices.Sort(got)
	t.Logf("first read of the view answered %v after the controller restarted", time.Since(restarted).Round(time.Millisecond))
	if !slices.Equal(got, want) {
		t.Fatalf("mv right after restart = %v, want %v", got, want)
	}

	// Replicas of the view's cluster resume its dataflow from the shard's
	// upper and write what the shard lacks. Two of them race for every
	// upper (one of two processes, whose workers' output crosses to the
	// writing worker of process 0): neither duplicates nor loses updates.
	mustExec(ctx, t, conn,
		"CREATE CLUSTER REPLICA mvc.r2 (SIZE '2')",
		"CREATE CLUSTER REPLICA mvc.r3 (SIZE '2x1')",
		"SET transaction_isolation = 'strict serializable'",
	)
	want = []string{"x|2|4", "y|2|6"}
	if got := queryRows(ctx, t, conn, "SELECT * FROM mv"); !slices.Equal(got, want) {
		t.Fatalf("mv after its replica came back = %v, want %v", got, want)
	}
	mustExec(ctx, t, conn, "INSERT INTO t VALUES (5, 'z'), (6, 'x')", "DELETE FROM t WHERE a = 2")
	want = []string{"x|3|10", "y|1|4", "z|1|5"}
	if got := queryRows(ctx, t, conn, "SELECT * FROM mv"); !slices.Equal(got, want) {
		t.Fatalf("mv after more writes = %v, want %v", got, want)
	}
	// The view is importable by other dataflows like a table.
	if got := queryRows(ctx, t, conn, "SELECT sum(n) FROM mv WHERE s > 4"); !slices.Equal(got, []string{"4"}) {
		t.Fatalf("aggregate over mv = %v, want [4]", got)
	}
	// The shard holds each row once at its current upper (a duplicate or a
	// lost update would show here), and its upper never went back.
	if _, upper := onlySink(t, dataDir); upper < upperBefore {
		t.Fatalf("shard upper regressed from %d to %d", upperBefore, upper)
	}

	mustExec(ctx, t, conn, "DROP MATERIALIZED VIEW mv")
	log := filepath.Join(dataDir, "storage", "shards", shard+".log")
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Fatalf("shard log %s after DROP: %v", log, err)
	}

	// A view's errors are stored with it: a read fails with them, and
	// works again once the failing row is gone.
	mustExec(ctx, t, conn,
		"CREATE MATERIALIZED VIEW inv AS SELECT 60 / a AS q FROM t",
		"INSERT INTO t VALUES (0, 'zero')",
	)
	if _, err := conn.Exec(ctx, "SELECT * FROM inv"); err == nil || !strings.Contains(err.Error(), "22012") {
		t.Fatalf("read of a view in error: %v, want division by zero (22012)", err)
	}
	mustExec(ctx, t, conn, "DELETE FROM t WHERE a = 0")
	if got := queryRows(ctx, t, conn, "SELECT * FROM inv"); !slices.Equal(got, []string{"10", "12", "15", "20", "60"}) {
		t.Fatalf("inv after the failing row was deleted = %v", got)
	}
}

// sinkShards copies the shard logs as the controller wrote them, opens the
// copy, and returns every sink shard's upper. It fails the test if a sink
// shard holds a row with a multiplicity other than 1 at its upper (the
// views here have one row per group: a duplicate or a half-applied update
// would show).
func sinkShards(t *testing.T, dataDir string) map[string]uint64 {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "shards"), 0o755); err != nil {
		t.Fatal(err)
	}
	logs, err := filepath.Glob(filepath.Join(dataDir, "storage", "shards", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "shards", filepath.Base(l)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[string]uint64{}
	for _, id := range st.Shards() {
		if sink, _ := st.IsSink(id); !sink {
			continue
		}
		_, upper, err := st.Frontiers(id)
		if err != nil {
			t.Fatal(err)
		}
		ut, _ := upper.Time()
		snap, err := st.Snapshot(context.Background(), id, ut-1)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range snap {
			if u.Diff != 1 {
				d, _ := row.Row(u.Row).Unpack()
				t.Fatalf("shard %s holds %v with multiplicity %d", id, d, u.Diff)
			}
		}
		out[id] = uint64(ut)
	}
	return out
}

// onlySink returns the one sink shard's id and upper.
func onlySink(t *testing.T, dataDir string) (string, uint64) {
	t.Helper()
	sinks := sinkShards(t, dataDir)
	if len(sinks) != 1 {
		t.Fatalf("sink shards %v, want exactly one", sinks)
	}
	for id, u := range sinks {
		return id, u
	}
	panic("unreachable")
}

// logTails logs the end of every controller and replica log of a data
// directory (a failed test's only witness once its directory is removed).
func logTails(t *testing.T, dataDir string) {
	logs, _ := filepath.Glob(filepath.Join(dataDir, "controller-*.log"))
	more, _ := filepath.Glob(filepath.Join(dataDir, "logs", "*.log"))
	for _, l := range append(logs, more...) {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		t.Logf("%s (last lines):\n%s", filepath.Base(l), strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
}
