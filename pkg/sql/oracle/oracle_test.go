package oracle

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/pkg/pgwire"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestOracle runs every script under pkg/sql/testdata against a throwaway
// PostgreSQL and against Tandem (the wire protocol server over the fake
// backend). It skips when PostgreSQL is not installed, unless
// TANDEM_ORACLE_REQUIRED is set (as `make test-sql-oracle` does).
func TestOracle(t *testing.T) {
	scripts, err := filepath.Glob("../testdata/*.slt")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	// Generated scripts come first so that a longer run (more cases)
	// gets a longer deadline: 5 minutes plus 10 s per generated query.
	gens := generatedScripts(t)
	budget := 5 * time.Minute
	for _, g := range gens {
		budget += 10 * time.Second * time.Duration(strings.Count(g.text, "CREATE VIEW"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	pg, err := StartPostgres(ctx, t.TempDir())
	if errors.Is(err, ErrNoPostgres) && os.Getenv("TANDEM_ORACLE_REQUIRED") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	admin, err := pg.Connect(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)

	total := 0
	// Generated scripts (generated_test.go) run after the files, each in
	// its own database like them.
	for i := range len(scripts) + len(gens) {
		var name, path string
		var text []byte
		var replay func(int) string
		if i < len(scripts) {
			path = scripts[i]
			name = strings.TrimSuffix(filepath.Base(path), ".slt")
		} else {
			gen := gens[i-len(scripts)]
			name, path, text, replay = gen.name, gen.name, []byte(gen.text), gen.replay
		}
		t.Run(name, func(t *testing.T) {
			if text == nil {
				var err error
				if text, err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
			}
			recs, err := ParseScript(string(text))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			db := fmt.Sprintf("oracle_%d", i)
			if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
				t.Fatal(err)
			}
			pconn, err := pg.Connect(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer pconn.Close(ctx)
			tconn := tandemTarget(t, ctx)
			n, err := Run(ctx, recs, tconn.PgConn(), pconn.PgConn())
			var m *Mismatch
			if errors.As(err, &m) && replay != nil {
				t.Fatalf("%s: %v\nreplay (PostgreSQL and Tandem):\n%s", path, err, replay(m.Record.Line))
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if n == 0 {
				t.Fatalf("%s compared no query", path)
			}
			total += n
		})
	}
	t.Logf("compared %d queries over %d scripts", total, len(scripts)+len(gens))
}

// tandemTarget connects to the Tandem under test: the running server at
// TANDEM_ORACLE_ADDR (host:port, e.g. a controller from `make run`) when
// set, whose tables created by the script are dropped afterwards;
// otherwise a fresh wire protocol server over the fake backend.
func tandemTarget(t *testing.T, ctx context.Context) *pgx.Conn {
	t.Helper()
	addr := os.Getenv("TANDEM_ORACLE_ADDR")
	if addr == "" {
		return startTandem(t, ctx)
	}
	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://oracle@%s/tandem?sslmode=disable", addr))
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]bool{}
	for _, n := range tableNames(t, ctx, c) {
		before[n] = true
	}
	t.Cleanup(func() {
		for _, n := range tableNames(t, ctx, c) {
			if !before[n] {
				if _, err := c.Exec(ctx, "DROP TABLE "+n+" CASCADE"); err != nil {
					t.Errorf("clean up %s: %v", n, err)
				}
			}
		}
		c.Close(context.Background())
	})
	return c
}

func tableNames(t *testing.T, ctx context.Context, c *pgx.Conn) []string {
	rows, err := c.Query(ctx, "SHOW TABLES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// startTandem serves a fresh fake backend and connects to it.
func startTandem(t *testing.T, ctx context.Context) *pgx.Conn {
	t.Helper()
	srv, err := pgwire.NewServer(sql.NewEngine(sqltest.New()), pgwire.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	c, err := pgx.Connect(ctx, fmt.Sprintf("host=127.0.0.1 port=%d user=oracle database=tandem sslmode=disable", ln.Addr().(*net.TCPAddr).Port))
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close(context.Background())
		stop()
		<-done
	})
	return c
}
