package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestReplicaNearMemoryLimitRefusesNewDataflows: a replica given a memory
// limit it is always above (TANDEM_MEMORY_LIMIT, its --memory-limit,
// inherited from the controller's environment) builds no new dataflow: a
// slow-path read and a read of a new index fail at the SQL client with
// 53200 naming the refused dataflow (not only the refused read), a
// constant SELECT still answers, and the replica stays up (same
// processes, never restarted). A one-process replica refuses the dataflow
// itself; the processes of a two-process replica report their memory and
// the controller holds the dataflow back (server.MemoryGuard.Report,
// pkg/compute/controller/memory.go), also one created right after the
// replica, before any report could arrive: the controller sends no
// dataflow before it has every process's report.
func TestReplicaNearMemoryLimitRefusesNewDataflows(t *testing.T) {
	bin := buildBinaries(t)
	t.Setenv("TANDEM_MEMORY_LIMIT", "1MiB")
	for _, tc := range []struct {
		name    string
		cluster string   // the cluster whose replica refuses
		setup   []string // run before the table is created
		procs   int      // replica processes running
		// reports: the replica's processes report their memory. The test
		// creates the index without waiting for the reports: the
		// controller sends the replica no dataflow before both arrived,
		// and then lists both processes near their limit.
		reports bool
	}{
		{name: "one process", cluster: "default", procs: 1},
		{name: "two processes", cluster: "big", setup: []string{"CREATE CLUSTER big REPLICAS (r1 (SIZE '2x1'))", "SET cluster = big"}, procs: 3, reports: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := t.TempDir()
			t.Cleanup(func() {
				if t.Failed() {
					logTails(t, dataDir)
				}
			})
			rc := startController(t, bin, dataDir)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			conn, err := pgx.Connect(ctx, "postgres://tandem@"+rc.pgwireAddr+"/tandem?sslmode=disable")
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			for _, q := range tc.setup {
				if _, err := conn.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			for _, q := range []string{"CREATE TABLE t (a bigint, b text)", "INSERT INTO t VALUES (1, 'x'), (2, 'y')", "CREATE INDEX t_a ON t (a)"} {
				if _, err := conn.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			want := tc.procs
			var pids []int
			for deadline := time.Now().Add(60 * time.Second); len(pids) < want && time.Now().Before(deadline); {
				pids = rc.replicaPIDs(t)
				time.Sleep(20 * time.Millisecond)
			}
			if len(pids) < want {
				t.Fatalf("%d replica processes running, want %d", len(pids), want)
			}
			for i, q := range []string{
				"SELECT b, count(*) FROM t GROUP BY b", // a one-shot dataflow
				"SELECT b FROM t WHERE a = 1",          // the index's dataflow
			} {
				var b string
				err := conn.QueryRow(ctx, q).Scan(&b)
				if sqlState(err) != "53200" || !strings.Contains(err.Error(), "refusing a new dataflow") {
					t.Fatalf("%s on a replica above its memory limit: %v, want 53200 refusing a new dataflow", q, err)
				}
				if i == 0 {
					// The refusing replica has connected and reported by
					// now. A process restarted before that (the local
					// orchestrator restarts one whose port another
					// program took between its pick and the bind) is not
					// what this test is about; one restarted from here on
					// is.
					pids = rc.clusterPIDs(t, tc.cluster)
				}
			}
			if n := rc.nearLimit(t, "big", "r1"); tc.reports && n != 2 {
				t.Fatalf("%d processes of big.r1 listed near their memory limit, want 2", n)
			}
			var one int
			if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("SELECT 1: %d, %v", one, err)
			}
			after := rc.clusterPIDs(t, tc.cluster)
			slices.Sort(pids)
			slices.Sort(after)
			if !slices.Equal(pids, after) {
				t.Fatalf("replica processes %v became %v: the replica restarted instead of refusing", pids, after)
			}
		})
	}
}

// nearLimit returns how many processes of a replica the controller's
// status lists as near their memory limit.
func (rc *runningController) nearLimit(t *testing.T, cluster, replica string) int {
	t.Helper()
	var st struct {
		Clusters []struct {
			Name     string `json:"name"`
			Replicas []struct {
				Name            string `json:"name"`
				MemoryNearLimit []int  `json:"memory_near_limit"`
			} `json:"replicas"`
		} `json:"clusters"`
	}
	rc.status(t, &st)
	for _, c := range st.Clusters {
		for _, r := range c.Replicas {
			if c.Name == cluster && r.Name == replica {
				return len(r.MemoryNearLimit)
			}
		}
	}
	return 0
}
