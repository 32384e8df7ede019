package main

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
)

// replicaMetricsAddrs returns the internal HTTP addresses of the running
// replica processes, from /api/status.
func (rc *runningController) replicaMetricsAddrs(t *testing.T) []string {
	t.Helper()
	var st struct {
		Orchestrator []struct {
			Processes []struct {
				PID              int
				InternalHTTPAddr string
			}
		} `json:"orchestrator"`
	}
	rc.status(t, &st)
	var out []string
	for _, r := range st.Orchestrator {
		for _, p := range r.Processes {
			if p.PID > 0 {
				out = append(out, p.InternalHTTPAddr)
			}
		}
	}
	return out
}

// TestSystemParametersFromEnvironment pins that the run's
// TANDEM_TEST_SYSTEM_PARAMETERS reach the system, so that `make
// test-flag-on` cannot silently be a flag-off run: SHOW reports the flag
// as the run asked, the replica runs one runtime (solo) or two
// (maintenance and interactive), and with the flag on a one-shot read is
// answered by a dataflow on the interactive runtime.
func TestSystemParametersFromEnvironment(t *testing.T) {
	bin := buildBinaries(t)
	rc := startController(t, bin, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, "postgres://tandem@"+rc.pgwireAddr+"/tandem?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var shown string
	if err := conn.QueryRow(ctx, "SHOW enable_compute_interactive_dataflows").Scan(&shown); err != nil {
		t.Fatal(err)
	}
	if want := testparams.Expected(t); shown != want {
		t.Fatalf("SHOW enable_compute_interactive_dataflows = %q, but %s=%q asks for %q",
			shown, testparams.EnvVar, testparams.Parameters(t), want)
	}
	if _, err := conn.Exec(ctx, "CREATE SOURCE kv FROM LOAD GENERATOR KEY VALUE (KEYS 100)"); err != nil {
		t.Fatal(err)
	}
	// A one-shot read: no index, so the controller builds a dataflow for
	// it (OneShotRead with the flag on). Retried until the source's first
	// tick is readable.
	for {
		var n int64
		err := conn.QueryRow(ctx, "SELECT count(*) FROM kv").Scan(&n)
		if err == nil && n == 100 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("one-shot read never answered 100 rows: %d, %v", n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	addrs := rc.replicaMetricsAddrs(t)
	if len(addrs) == 0 {
		t.Fatal("no running replica process in /api/status")
	}
	want := []string{"solo"}
	if testparams.Interactive(t) {
		want = []string{"interactive", "maintenance"}
	}
	for _, addr := range addrs {
		rts, err := testparams.Runtimes(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(maps.Keys(rts)); !slices.Equal(got, want) {
			t.Fatalf("replica %s runs runtimes %v, want %v (%s=%q)", addr, got, want, testparams.EnvVar, testparams.Parameters(t))
		}
		if testparams.Interactive(t) && rts["interactive"] == 0 {
			t.Fatalf("replica %s: the one-shot read did not run on the interactive runtime: peeks by runtime %v", addr, rts)
		}
		t.Logf("replica %s: peeks by runtime %v", addr, rts)
	}
	if len(addrs) == 1 {
		checkPeekDurationsCoverRuntimes(ctx, t, conn, addrs[0])
	}
}

// checkPeekDurationsCoverRuntimes: introspection.peek_durations counts the
// peeks of every runtime of the replica, the interactive one included
// (which keeps no logging of its own), so it eventually counts at least
// the peeks the replica's metrics report as finished. With two runtimes,
// every later peek is routed to the interactive runtime first, so that the
// introspection reads themselves cannot make up the count through the
// maintenance runtime's own logging.
func checkPeekDurationsCoverRuntimes(ctx context.Context, t *testing.T, conn *pgx.Conn, addr string) {
	t.Helper()
	if testparams.Interactive(t) {
		if _, err := conn.Exec(ctx, "ALTER SYSTEM SET peek_routing = 'interactive'"); err != nil {
			t.Fatal(err)
		}
	}
	rts, err := testparams.Runtimes(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	var finished int64
	for _, n := range rts {
		finished += int64(n)
	}
	for {
		var logged int64
		rows, err := conn.Query(ctx, "SELECT * FROM introspection.peek_durations")
		if err == nil {
			for rows.Next() {
				var process, le, n int64
				if err = rows.Scan(&process, &le, &n); err != nil {
					break
				}
				logged += n
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		if err == nil && logged >= finished {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("introspection.peek_durations counts %d peeks, the replica's metrics %d (%v): %v", logged, finished, rts, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
