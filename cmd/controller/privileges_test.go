package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// connectAs connects to rc as user with password (SCRAM, since the
// controller has a superuser password).
func connectAs(ctx context.Context, t *testing.T, rc *runningController, user, password string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s/tandem?sslmode=disable", user, password, rc.pgwireAddr))
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// readPaths are the ways a client reads a relation: the fast path (an
// index lookup), a one-shot dataflow, a view (inlined), a materialized
// view, SUBSCRIBE through a cursor and COPY (SUBSCRIBE ...) TO STDOUT.
var readPaths = []struct{ name, sql string }{
	{"fast path", "SELECT a FROM t WHERE a = 1"},
	{"one-shot dataflow", "SELECT sum(a) FROM t"},
	{"view", "SELECT * FROM v"},
	{"materialized view", "SELECT * FROM mv"},
	{"subscribe", "DECLARE c CURSOR FOR SUBSCRIBE t"},
	{"copy to", "COPY (SUBSCRIBE t) TO STDOUT"}, // last: see check
}

// tryRead runs one read path and returns its SQLSTATE ("" on success).
func tryRead(ctx context.Context, conn *pgx.Conn, sql string) string {
	var err error
	switch {
	case strings.HasPrefix(sql, "COPY"):
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err = conn.PgConn().CopyTo(cctx, io.Discard, sql)
		if cctx.Err() != nil {
			// The subscription streamed until the deadline: allowed.
			return ""
		}
	case strings.HasPrefix(sql, "DECLARE"):
		tx, berr := conn.Begin(ctx)
		if berr != nil {
			return "begin: " + berr.Error()
		}
		defer tx.Rollback(ctx)
		if _, err = tx.Exec(ctx, sql); err == nil {
			_, err = tx.Exec(ctx, "FETCH 1 c WITH (TIMEOUT = '1s')")
		}
	default:
		var rows pgx.Rows
		rows, err = conn.Query(ctx, sql)
		if err == nil {
			for rows.Next() {
			}
			rows.Close()
			err = rows.Err()
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// TestPrivilegesOnEveryReadPath: a role without SELECT gets 42501 on every
// read path on both runtimes (peeks routed to maintenance, then
// interactive), while a role granted SELECT reads; roles, passwords and
// grants survive a controller restart. A member of a role granted SELECT
// reads on every path as well (the membership survives the restart too).
func TestPrivilegesOnEveryReadPath(t *testing.T) {
	start := superuserController(t)
	rc := start()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin := connectAs(ctx, t, rc, "tandem", "adm1n")
	mustExec(ctx, t, admin,
		"CREATE ROLE reader LOGIN PASSWORD 'r34d'",
		"CREATE USER granted PASSWORD 'gr4nt'",
		"CREATE TABLE t (a int)",
		"INSERT INTO t VALUES (1), (2)",
		"CREATE INDEX t_a ON t (a)",
		"CREATE VIEW v AS SELECT a FROM t WHERE a > 0",
		"CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n FROM t",
		"GRANT SELECT ON t, v, mv TO granted",
		// member reads through its group's grant (role membership).
		"CREATE ROLE readers",
		"GRANT SELECT ON t, v, mv TO readers",
		"CREATE USER member PASSWORD 'm3mb' IN ROLE readers")
	check := func(rc *runningController) {
		t.Helper()
		admin := connectAs(ctx, t, rc, "tandem", "adm1n")
		var reader *pgx.Conn
		for _, routing := range []string{"maintenance", "interactive"} {
			mustExec(ctx, t, admin, "ALTER SYSTEM SET peek_routing = '"+routing+"'")
			// Fresh connections: an allowed COPY (SUBSCRIBE) ends by
			// cancelling, which closes its connection.
			reader = connectAs(ctx, t, rc, "reader", "r34d")
			granted := connectAs(ctx, t, rc, "granted", "gr4nt")
			member := connectAs(ctx, t, rc, "member", "m3mb")
			for _, p := range readPaths {
				if code := tryRead(ctx, reader, p.sql); code != "42501" {
					t.Errorf("%s, %s: reader without SELECT got %q, want 42501", routing, p.name, code)
				}
				if code := tryRead(ctx, granted, p.sql); code != "" {
					t.Errorf("%s, %s: granted reader got %q", routing, p.name, code)
				}
				if code := tryRead(ctx, member, p.sql); code != "" {
					t.Errorf("%s, %s: member of a granted group got %q", routing, p.name, code)
				}
			}
		}
		if code := tryRead(ctx, reader, "INSERT INTO t VALUES (3)"); code != "42501" {
			t.Errorf("insert without INSERT: %q", code)
		}
	}
	check(rc)
	if err := rc.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = rc.cmd.Wait()
	check(start())
}

// superuserController returns a start function for a controller with the
// superuser password adm1n and the interactive runtime on; each call
// starts it on the same data directory (a restart).
func superuserController(t *testing.T) func() *runningController {
	t.Helper()
	bin := buildBinaries(t)
	dataDir := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("adm1n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--superuser-password-file=" + pwFile, "--system-parameter-default=enable_compute_interactive_dataflows=on"}
	return func() *runningController { return startController(t, bin, dataDir, flags...) }
}
