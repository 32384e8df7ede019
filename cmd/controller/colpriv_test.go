package main

import (
	"context"
	"testing"
	"time"
)

// columnReadPaths are readPaths over a table whose reader holds SELECT on
// column a only: ok reads only a, denied reads b (or every column).
var columnReadPaths = []struct{ name, ok, denied string }{
	{"fast path", "SELECT a FROM ct WHERE a = 1", "SELECT b FROM ct WHERE a = 1"},
	{"fast path, *", "SELECT a FROM ct WHERE a = 1", "SELECT * FROM ct WHERE a = 1"},
	{"one-shot dataflow", "SELECT sum(a) FROM ct", "SELECT sum(a) FROM ct WHERE b > 0"},
	{"count(*)", "SELECT count(*) FROM ct", "SELECT count(b) FROM ct"},
	{"view", "SELECT a FROM cv", "SELECT b FROM cv"},
	{"subscribe", "DECLARE c CURSOR FOR SUBSCRIBE (SELECT a FROM ct)", "DECLARE c CURSOR FOR SUBSCRIBE ct"},
	{"copy to", "COPY (SUBSCRIBE (SELECT a FROM ct)) TO STDOUT", "COPY (SUBSCRIBE (SELECT b FROM ct)) TO STDOUT"},
}

// TestColumnPrivilegesOnEveryReadPath: a role holding SELECT on one column
// of a table (and of a view) reads that column on every read path on both
// runtimes and gets 42501 for any other column; the column grants survive
// a controller restart (they are stored in the catalog).
func TestColumnPrivilegesOnEveryReadPath(t *testing.T) {
	start := superuserController(t)
	rc := start()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin := connectAs(ctx, t, rc, "tandem", "adm1n")
	mustExec(ctx, t, admin,
		"CREATE USER colr PASSWORD 'c0lr'",
		"CREATE TABLE ct (a int, b int)",
		"INSERT INTO ct VALUES (1, 10), (2, 20)",
		"CREATE INDEX ct_a ON ct (a)",
		"CREATE VIEW cv AS SELECT a, b FROM ct",
		"GRANT SELECT (a) ON ct, cv TO colr")
	check := func(rc *runningController) {
		t.Helper()
		admin := connectAs(ctx, t, rc, "tandem", "adm1n")
		for _, routing := range []string{"maintenance", "interactive"} {
			mustExec(ctx, t, admin, "ALTER SYSTEM SET peek_routing = '"+routing+"'")
			for _, p := range columnReadPaths {
				// Fresh connections: an allowed COPY (SUBSCRIBE) ends by
				// cancelling, which closes its connection.
				if code := tryRead(ctx, connectAs(ctx, t, rc, "colr", "c0lr"), p.ok); code != "" {
					t.Errorf("%s, %s: %s got %q", routing, p.name, p.ok, code)
				}
				if code := tryRead(ctx, connectAs(ctx, t, rc, "colr", "c0lr"), p.denied); code != "42501" {
					t.Errorf("%s, %s: %s got %q, want 42501", routing, p.name, p.denied, code)
				}
			}
		}
	}
	check(rc)
	if err := rc.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = rc.cmd.Wait()
	check(start())
}
