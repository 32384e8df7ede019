package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// readHolds returns the controller's outstanding read holds, from
// /api/status.
func (rc *runningController) readHolds(t *testing.T) int {
	t.Helper()
	var st struct {
		ReadHolds int `json:"read_holds"`
	}
	rc.status(t, &st)
	return st.ReadHolds
}

// TestTransactionBlockReadsOneSnapshot: every read of an explicit block
// sees the data as of the block's first read, on the fast path and
// through one-shot dataflows, however other sessions write meanwhile; a
// block that writes fails its COMMIT with 40001 when a table it read
// changed after that; the block's holds go with it (COMMIT, ROLLBACK, a
// dropped connection).
func TestTransactionBlockReadsOneSnapshot(t *testing.T) {
	bin := buildBinaries(t)
	rc := startController(t, bin, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a, b := connectPG(ctx, t, rc), connectPG(ctx, t, rc)
	must := func(conn *pgx.Conn, text string) {
		t.Helper()
		if _, err := conn.Exec(ctx, text); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}
	want := func(conn *pgx.Conn, text string, rows ...string) {
		t.Helper()
		if got := queryRows(ctx, t, conn, text); !slices.Equal(got, rows) {
			t.Fatalf("%s: got %q, want %q", text, got, rows)
		}
	}
	for _, st := range []string{
		"CREATE TABLE t1 (k int, v int)", "CREATE TABLE t2 (k int)", "CREATE INDEX t1_k ON t1 (k)",
		"INSERT INTO t1 VALUES (1, 10)", "INSERT INTO t2 VALUES (1)",
	} {
		must(b, st)
	}
	want(b, "SELECT v FROM t1 WHERE k = 1", "10")
	idle := rc.readHolds(t)

	must(a, "BEGIN")
	want(a, "SELECT v FROM t1 WHERE k = 1", "10") // the fast path takes the snapshot
	if held := rc.readHolds(t) - idle; held < 3 {
		t.Errorf("the block holds %d collections, want t1, t2 and t1_k at least", held)
	}
	must(b, "UPDATE t1 SET v = 20 WHERE k = 1")
	must(b, "INSERT INTO t2 VALUES (2)")
	want(b, "SELECT count(*) FROM t2", "2")
	want(a, "SELECT v FROM t1 WHERE k = 1", "10")
	want(a, "SELECT count(*) FROM t2", "1") // a one-shot dataflow at the snapshot
	want(a, "SELECT t2.k, t1.v FROM t1 JOIN t2 ON t1.k = t2.k", "1|10")
	must(a, "COMMIT")
	want(a, "SELECT v FROM t1 WHERE k = 1", "20")
	want(a, "SELECT count(*) FROM t2", "2")

	// A block that writes after reading fails when a table it read was
	// written after its snapshot, even though it read that table later.
	must(a, "BEGIN")
	want(a, "SELECT count(*) FROM t2", "2")
	must(b, "INSERT INTO t1 VALUES (2, 5)")
	want(a, "SELECT count(*) FROM t1", "1")
	must(a, "INSERT INTO t2 VALUES (3)")
	var pe *pgconn.PgError
	if _, err := a.Exec(ctx, "COMMIT"); !errors.As(err, &pe) || pe.Code != "40001" {
		t.Fatalf("COMMIT after a concurrent write to a table read: %v, want 40001", err)
	}
	want(a, "SELECT count(*) FROM t2", "2")

	// ROLLBACK and a dropped connection release the snapshot.
	must(a, "BEGIN")
	want(a, "SELECT count(*) FROM t1", "2")
	must(a, "ROLLBACK")
	c := connectPG(ctx, t, rc)
	must(c, "BEGIN")
	want(c, "SELECT count(*) FROM t1", "2")
	c.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for rc.readHolds(t) != idle {
		if time.Now().After(deadline) {
			t.Fatalf("%d read holds outstanding after the blocks ended, %d before", rc.readHolds(t), idle)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
