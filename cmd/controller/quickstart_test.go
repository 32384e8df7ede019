package main

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestQuickstartReadsRightAfterDDL runs the README's quickstart as a new
// user would, one statement right after the other, at both isolation
// levels: a read right after CREATE SOURCE / CREATE INDEX sees the
// source's snapshot (the data its inputs had when the statements creating
// them returned), never an empty answer at a time before the load
// generator's first tick; and a read right after an INSERT sees the row.
// Every read is issued once: no retry loop hides an early empty answer.
func TestQuickstartReadsRightAfterDDL(t *testing.T) {
	bin := buildBinaries(t)
	for _, iso := range []string{"strict serializable", "serializable"} {
		t.Run(iso, func(t *testing.T) {
			rc := startController(t, bin, t.TempDir())
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			conn := connectPG(ctx, t, rc)
			mustExec(ctx, t, conn,
				"SET transaction_isolation = '"+iso+"'",
				"CREATE SOURCE kv FROM LOAD GENERATOR KEY VALUE (KEYS 100000, VALUE SIZE 16)",
				"CREATE VIEW per_partition AS SELECT partition, count(*) AS n FROM kv GROUP BY partition",
			)
			// A one-shot read of the source straight after CREATE SOURCE.
			if got := queryRows(ctx, t, conn, "SELECT * FROM per_partition"); !slices.Equal(got, []string{"0|100000"}) {
				t.Fatalf("per_partition right after CREATE SOURCE = %v, want the snapshot's [0|100000]", got)
			}
			mustExec(ctx, t, conn, "CREATE INDEX kv_key ON kv (key)")
			if got := queryRows(ctx, t, conn, "SELECT key, partition FROM kv WHERE key = 42"); !slices.Equal(got, []string{"42|0"}) {
				t.Fatalf("SELECT ... WHERE key = 42 right after CREATE INDEX = %v, want [42|0]", got)
			}
			mustExec(ctx, t, conn, "CREATE INDEX per_partition_idx ON per_partition (partition)")
			if got := queryRows(ctx, t, conn, "SELECT * FROM per_partition ORDER BY partition"); !slices.Equal(got, []string{"0|100000"}) {
				t.Fatalf("per_partition right after its index = %v, want [0|100000]", got)
			}
			mustExec(ctx, t, conn,
				"CREATE TABLE t (a bigint, b text)",
				"CREATE INDEX t_a ON t (a)",
				"INSERT INTO t VALUES (1, 'x'), (2, 'y')",
			)
			if iso != "strict serializable" {
				return // a serializable read may rightly miss the insert
			}
			if got := queryRows(ctx, t, conn, "SELECT a, b FROM t WHERE a = 2"); !slices.Equal(got, []string{"2|y"}) {
				t.Fatalf("index read right after INSERT = %v, want [2|y]", got)
			}
			if got := queryRows(ctx, t, conn, "SELECT b, count(*) FROM t GROUP BY b"); !slices.Equal(got, []string{"x|1", "y|1"}) {
				t.Fatalf("one-shot read right after INSERT = %v, want [x|1 y|1]", got)
			}
		})
	}
}
