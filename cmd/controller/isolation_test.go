package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// hydrating reports whether any replica has a collection that is not yet
// hydrated, from /api/status.
func (rc *runningController) hydrating(t *testing.T) bool {
	t.Helper()
	var st struct {
		Clusters []struct {
			Replicas []struct {
				NotHydrated []string `json:"not_hydrated"`
			} `json:"replicas"`
		} `json:"clusters"`
	}
	rc.status(t, &st)
	for _, c := range st.Clusters {
		for _, r := range c.Replicas {
			if len(r.NotHydrated) > 0 {
				return true
			}
		}
	}
	return false
}

// TestReadsDuringHydration is the SQL-level acceptance of the interactive
// runtime: while an index of millions of rows hydrates on the replica, a
// serializable point read on another index and an introspection read
// answer before the hydration ends with enable_compute_interactive_dataflows
// on. The assertion is on order (did the read return while the index was
// still hydrating?), not on latency. With the flag off the same reads wait
// behind the worker's run-to-completion snapshot step; that arm logs what
// it saw (the isolation benchmark in hack/bench measures the difference)
// but asserts nothing about time.
func TestReadsDuringHydration(t *testing.T) {
	bin := buildBinaries(t)
	for _, arm := range []struct {
		name        string
		interactive bool
	}{{"solo", false}, {"two_runtime", true}} {
		t.Run(arm.name, func(t *testing.T) {
			param := "enable_compute_interactive_dataflows=off"
			if arm.interactive {
				param = "enable_compute_interactive_dataflows=on"
			}
			rc := startController(t, bin, t.TempDir(), "--system-parameter-default="+param)
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			conn, err := pgx.Connect(ctx, "postgres://tandem@"+rc.pgwireAddr+"/tandem?sslmode=disable")
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			exec := func(sql string) {
				t.Helper()
				if _, err := conn.Exec(ctx, sql); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
			}
			exec("CREATE SOURCE small FROM LOAD GENERATOR KEY VALUE (KEYS 1000)")
			exec("CREATE INDEX small_key ON small (key)")
			exec("CREATE SOURCE big FROM LOAD GENERATOR KEY VALUE (KEYS 2000000, VALUE SIZE 16)")
			exec("SET transaction_isolation = 'serializable'")
			point := func() (time.Duration, error) {
				t0 := time.Now()
				var k int64
				err := conn.QueryRow(ctx, "SELECT key FROM small WHERE key = 7").Scan(&k)
				return time.Since(t0), err
			}
			introspect := func() (time.Duration, error) {
				t0 := time.Now()
				var n int64
				err := conn.QueryRow(ctx, "SELECT count(*) FROM introspection.arrangements").Scan(&n)
				return time.Since(t0), err
			}
			// Warm up: both reads work before the churn.
			for !func() bool { _, err := point(); return err == nil }() {
				time.Sleep(100 * time.Millisecond)
			}
			if _, err := introspect(); err != nil {
				t.Fatalf("introspection read before hydration: %v", err)
			}
			exec("CREATE INDEX big_key ON big (key)")
			deadline := time.Now().Add(30 * time.Second)
			for !rc.hydrating(t) {
				if time.Now().After(deadline) {
					t.Fatal("the big index never showed as hydrating")
				}
				time.Sleep(20 * time.Millisecond)
			}
			pd, err := point()
			if err != nil {
				t.Fatalf("point read during hydration: %v", err)
			}
			pointDuring := rc.hydrating(t)
			id, err := introspect()
			if err != nil {
				t.Fatalf("introspection read during hydration: %v", err)
			}
			introDuring := rc.hydrating(t)
			t.Logf("%s: point read %v (returned while hydrating: %v), introspection read %v (returned while hydrating: %v)",
				arm.name, pd, pointDuring, id, introDuring)
			if arm.interactive && (!pointDuring || !introDuring) {
				t.Fatalf("with the interactive runtime a read waited for hydration (point %v, introspection %v)", pointDuring, introDuring)
			}
		})
	}
}
