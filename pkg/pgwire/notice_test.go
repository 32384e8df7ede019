package pgwire

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestNoticesReachTheClient: a statement's notices arrive as
// NoticeResponse with their severity and SQLSTATE, before the command
// completes, on the simple and the extended protocol, once each.
func TestNoticesReachTheClient(t *testing.T) {
	addr := startServer(t, Config{})
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%s user=alice database=tandem sslmode=disable", host, port))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, n.Severity+" "+n.SeverityUnlocalized+" "+n.Code+" "+n.Message)
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range []string{"CREATE ROLE a", "CREATE ROLE b", "GRANT b TO a"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// Simple protocol, then extended.
	if _, err := c.Exec(ctx, "GRANT b TO a", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "REVOKE b FROM b", pgx.QueryExecModeExec); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{`NOTICE NOTICE 00000 role "a" is already a member of role "b"`, `WARNING WARNING 01000 role "b" is not a member of role "b"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("notices:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPsqlDpAndWarnings runs the real psql: \dp lists the access
// privileges, and a grant that changes nothing prints PostgreSQL's
// WARNING.
func TestPsqlDpAndWarnings(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/psql")
		if len(dirs) == 0 {
			t.Skip("psql not installed")
		}
		psql = dirs[0]
	}
	addr := startServer(t, Config{})
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, psql, "-h", host, "-p", port, "-U", "alice", "-d", "tandem", "-X", "-A",
		"-c", "CREATE ROLE o", "-c", "CREATE ROLE b", "-c", "CREATE TABLE t (a int)", "-c", "ALTER TABLE t OWNER TO o",
		"-c", "GRANT SELECT, UPDATE ON t TO b", "-c", "SET ROLE b", "-c", "GRANT SELECT ON t TO o", "-c", "RESET ROLE",
		"-c", `\dp`)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=5")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	for _, want := range []string{
		`WARNING:  no privileges were granted for "t"`,
		"Access privileges",
		"Schema|Name|Type|Access privileges|Column privileges|Policies",
		"public|t|table|o=arwdDxt/o\nb=rw/o||",
	} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("psql output lacks %q:\n%s", want, out)
		}
	}
}
