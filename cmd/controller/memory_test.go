package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestReplicaNearMemoryLimitRefusesNewDataflows: a one-process replica
// given a memory limit it is always above (TANDEM_MEMORY_LIMIT, its
// --memory-limit, inherited from the controller's environment) refuses
// every new dataflow: a slow-path read and a read of a new index fail at
// the SQL client with 53200 naming the refusal, a constant SELECT still
// answers, and the replica stays up (same process, never restarted).
func TestReplicaNearMemoryLimitRefusesNewDataflows(t *testing.T) {
	bin := buildBinaries(t)
	t.Setenv("TANDEM_MEMORY_LIMIT", "1MiB")
	rc := startController(t, bin, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, "postgres://tandem@"+rc.pgwireAddr+"/tandem?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"CREATE TABLE t (a bigint, b text)", "INSERT INTO t VALUES (1, 'x'), (2, 'y')", "CREATE INDEX t_a ON t (a)"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var pids []int
	for deadline := time.Now().Add(60 * time.Second); len(pids) == 0 && time.Now().Before(deadline); {
		pids = rc.replicaPIDs(t)
		time.Sleep(20 * time.Millisecond)
	}
	if len(pids) == 0 {
		t.Fatal("no replica process running")
	}
	for _, q := range []string{
		"SELECT b, count(*) FROM t GROUP BY b", // a one-shot dataflow
		"SELECT b FROM t WHERE a = 1",          // the index's dataflow
	} {
		var b string
		err := conn.QueryRow(ctx, q).Scan(&b)
		if sqlState(err) != "53200" || !strings.Contains(err.Error(), "refusing a new dataflow") {
			t.Fatalf("%s on a replica above its memory limit: %v, want 53200 refusing a new dataflow", q, err)
		}
	}
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %d, %v", one, err)
	}
	after := rc.replicaPIDs(t)
	slices.Sort(pids)
	slices.Sort(after)
	if !slices.Equal(pids, after) {
		t.Fatalf("replica processes %v became %v: the replica restarted instead of refusing", pids, after)
	}
}
