package pgwire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
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
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// startServer serves a fresh fake backend on a loopback port.
func startServer(t *testing.T, cfg Config) string {
	t.Helper()
	return startServerOn(t, sqltest.New(), cfg)
}

func startServerOn(t *testing.T, backend sql.Backend, cfg Config) string {
	t.Helper()
	srv, err := NewServer(sql.NewEngine(backend), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

func connect(t *testing.T, addr, extra string) *pgx.Conn {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=alice database=tandem sslmode=disable %s", host, port, extra))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func TestPgxExtendedProtocol(t *testing.T) {
	c := connect(t, startServer(t, Config{}), "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "CREATE TABLE kv (k bigint NOT NULL, v text, f float8, b bool)"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		// Parameters of every supported type, in pgx's binary encodings.
		if _, err := c.Exec(ctx, "INSERT INTO kv VALUES ($1, $2, $3, $4)", i, fmt.Sprintf("v%d", i), float64(i)/2, i%2 == 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Exec(ctx, "CREATE INDEX kv_k ON kv (k)"); err != nil {
		t.Fatal(err)
	}
	var v string
	var f float64
	var b bool
	if err := c.QueryRow(ctx, "SELECT v, f, b FROM kv WHERE k = $1", 4).Scan(&v, &f, &b); err != nil {
		t.Fatal(err)
	}
	if v != "v4" || f != 2 || !b {
		t.Fatalf("got %q %v %v", v, f, b)
	}
	rows, err := c.Query(ctx, "SELECT k, count(*) FROM kv WHERE k > $1 GROUP BY k ORDER BY k DESC", int32(2))
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for rows.Next() {
		var k, n int64
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
	}
	if rows.Err() != nil || fmt.Sprint(got) != "[5 4 3]" {
		t.Fatalf("rows %v err %v", got, rows.Err())
	}
	// Errors carry their SQLSTATE and the connection stays usable.
	for q, code := range map[string]string{
		"SELECT 1/0":          "22012",
		"SELECT * FROM nope":  "42P01",
		"SELEC":               "42601",
		"SELECT nope FROM kv": "42703",
	} {
		if _, err := c.Exec(ctx, q); pgCode(err) != code {
			t.Fatalf("%s: %v, want %s", q, err, code)
		}
	}
	var version, db string
	if err := c.QueryRow(ctx, "SELECT version(), current_database()").Scan(&version, &db); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(version, "Tandem") || db != "tandem" {
		t.Fatalf("version %q database %q", version, db)
	}
	// Tandem statements through the extended protocol.
	var name, replicas string
	if err := c.QueryRow(ctx, "SHOW CLUSTERS").Scan(&name, &replicas); err != nil || name != "default" || replicas != "r1" {
		t.Fatalf("SHOW CLUSTERS: %q %q %v", name, replicas, err)
	}
	var plan string
	if err := c.QueryRow(ctx, "EXPLAIN SELECT v FROM kv WHERE k = $1", 3).Scan(&plan); err != nil || !strings.Contains(plan, "Fast path") {
		t.Fatalf("EXPLAIN: %q %v", plan, err)
	}
	// The simple protocol too.
	res, err := c.PgConn().Exec(ctx, "SET cluster = default; SHOW cluster").ReadAll()
	if err != nil || len(res) != 2 || string(res[1].Rows[0][0]) != "default" {
		t.Fatalf("simple protocol: %v %v", res, err)
	}
}

func TestSubscribeOverCopyAndCursor(t *testing.T) {
	addr := startServer(t, Config{})
	c := connect(t, addr, "")
	w := connect(t, addr, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "CREATE TABLE t (a bigint); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	// COPY: a writer that stops the stream once it saw the second update.
	copyCtx, stop := context.WithCancel(ctx)
	out := &lineWriter{onLine: func(n int) {
		if n == 1 {
			if _, err := w.Exec(ctx, "INSERT INTO t VALUES (7)"); err != nil {
				t.Error(err)
			}
		}
		if n == 2 {
			stop()
		}
	}}
	_, err := c.PgConn().CopyTo(copyCtx, out, "SUBSCRIBE t")
	if err == nil {
		t.Fatal("a cancelled SUBSCRIBE reported success")
	}
	lines := out.lines()
	if len(lines) < 2 || !strings.HasSuffix(lines[0], "\t1\t1") || !strings.HasSuffix(lines[1], "\t1\t7") {
		t.Fatalf("copy lines %q", lines)
	}
	// Cursor.
	c2 := connect(t, addr, "")
	tx, err := c2.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "DECLARE cur CURSOR FOR SUBSCRIBE (SELECT a FROM t WHERE a > 5)"); err != nil {
		t.Fatal(err)
	}
	var ts, diff, a int64
	if err := tx.QueryRow(ctx, "FETCH 1 cur").Scan(&ts, &diff, &a); err != nil {
		t.Fatal(err)
	}
	if diff != 1 || a != 7 {
		t.Fatalf("fetched %d %d %d", ts, diff, a)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

type lineWriter struct {
	mu     sync.Mutex
	buf    strings.Builder
	onLine func(n int)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	n := strings.Count(w.buf.String(), "\n")
	w.mu.Unlock()
	w.onLine(n)
	return len(p), nil
}

func (w *lineWriter) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Split(strings.TrimSpace(w.buf.String()), "\n")
}

func TestSCRAM(t *testing.T) {
	addr := startServer(t, Config{Passwords: map[string]string{"alice": "s3cret"}})
	c := connect(t, addr, "password=s3cret")
	var one int64
	if err := c.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select after SCRAM: %v", err)
	}
	host, port, _ := net.SplitHostPort(addr)
	_, err := pgx.Connect(context.Background(), fmt.Sprintf("host=%s port=%s user=alice password=wrong sslmode=disable", host, port))
	if pgCode(err) != "28P01" {
		t.Fatalf("wrong password: %v", err)
	}
}

func TestTLSAndDatabase(t *testing.T) {
	addr := startServer(t, Config{TLS: selfSigned(t), RequireTLS: true})
	c := connect(t, addr, "sslmode=require")
	if !c.PgConn().Conn().(*tls.Conn).ConnectionState().HandshakeComplete {
		t.Fatal("no TLS")
	}
	host, port, _ := net.SplitHostPort(addr)
	_, err := pgx.Connect(context.Background(), fmt.Sprintf("host=%s port=%s user=alice sslmode=disable", host, port))
	if pgCode(err) != "28000" {
		t.Fatalf("plaintext with RequireTLS: %v", err)
	}
	_, err = pgx.Connect(context.Background(), fmt.Sprintf("host=%s port=%s user=alice database=other sslmode=require", host, port))
	if pgCode(err) != "3D000" {
		t.Fatalf("other database: %v", err)
	}
}

func selfSigned(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func TestAppendCopyRow(t *testing.T) {
	got := string(appendCopyRow(nil, nil, []row.Datum{row.Int64(1), row.Null(), row.Text("a\tb\\c\nd")}, time.UTC))
	if want := "1\t\\N\ta\\tb\\\\c\\nd\n"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

// TestPsql drives the real psql client (installed with PostgreSQL by
// hack/postgres.sh), when it is available.
func TestPsql(t *testing.T) {
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
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, psql, append([]string{"-h", host, "-p", port, "-U", "alice", "-d", "tandem", "-X", "-A", "-t"}, args...)...)
		cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=5")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	out := run("-c", "CREATE TABLE t (a bigint)", "-c", "INSERT INTO t VALUES (41)", "-c", "SELECT a + 1 FROM t")
	if !strings.Contains(out, "42") {
		t.Fatalf("psql query:\n%s", out)
	}
	out = run("-c", `\dt`)
	if !strings.Contains(out, "public|t|table|alice") {
		t.Fatalf(`psql \dt does not list t:\n%s`, out)
	}
	out = run("-c", `\d t`)
	if !strings.Contains(out, "SHOW COLUMNS") {
		t.Fatalf(`psql \d t does not give a clear message:\n%s`, out)
	}
	out = run("-c", "SELECT 1/0")
	if !strings.Contains(out, "division by zero") {
		t.Fatalf("psql error:\n%s", out)
	}
	// SUBSCRIBE over COPY, stopped with Ctrl-C (psql sends a
	// CancelRequest, the server ends the COPY with 57014).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, psql, "-h", host, "-p", port, "-U", "alice", "-d", "tandem", "-X",
		"-c", "COPY (SUBSCRIBE t) TO STDOUT")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	// Ctrl-C once the row is out (psql may take a while to connect on a
	// loaded machine: a fixed wait raced it); ctx bounds the wait.
	seen := make(chan struct{})
	var once sync.Once
	sub := &lineWriter{}
	sub.onLine = func(int) {
		if strings.Contains(strings.Join(sub.lines(), "\n"), "\t1\t41") {
			once.Do(func() { close(seen) })
		}
	}
	cmd.Stdout, cmd.Stderr = sub, sub
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
	case <-ctx.Done():
	}
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	if got := strings.Join(sub.lines(), "\n"); !strings.Contains(got, "\t1\t41") || !strings.Contains(got, "canceling statement") {
		t.Fatalf("psql COPY (SUBSCRIBE):\n%s", got)
	}
}

// TestPgbench runs pgbench's point-lookup workload against an index, with
// the extended protocol and prepared statements, when pgbench is
// installed.
func TestPgbench(t *testing.T) {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	if len(bins) == 0 {
		t.Skip("pgbench not installed")
	}
	addr := startServer(t, Config{})
	c := connect(t, addr, "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE kv (k bigint NOT NULL, v text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO kv SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, 'c')) v"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE INDEX kv_k ON kv (k)"); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "lookup.sql")
	if err := os.WriteFile(script, []byte("\\set k random(1, 3)\nSELECT v FROM kv WHERE k = :k;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(addr)
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(tctx, bins[0], "-h", host, "-p", port, "-U", "bench", "-n", "-f", script,
		"-t", "200", "-M", "prepared", "tandem").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "number of transactions actually processed: 200/200") {
		t.Fatalf("pgbench: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "tps") || strings.HasPrefix(line, "latency average") {
			t.Log(line)
		}
	}
}

// TestSCRAMUnknownUserLooksLikeWrongPassword: an unknown user gets a
// server-first message like a known one, with a salt that is the same at
// every attempt, and fails at the proof with the same error; before, the
// server refused it right after the client's first message, so user names
// could be told apart from wrong passwords.
func TestSCRAMUnknownUserLooksLikeWrongPassword(t *testing.T) {
	addr := startServer(t, Config{Passwords: map[string]string{"alice": "s3cret"}})
	exchange := func(user string) (serverFirst string, code string) {
		t.Helper()
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		fe := pgproto3.NewFrontend(nc, nc)
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": user}})
		fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=clientnonce")})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatalf("%s: %v", user, err)
			}
			switch m := msg.(type) {
			case *pgproto3.AuthenticationSASL:
			case *pgproto3.AuthenticationSASLContinue:
				serverFirst = string(m.Data)
				nonce, _, _ := strings.Cut(strings.TrimPrefix(serverFirst, "r="), ",")
				proof := base64.StdEncoding.EncodeToString(make([]byte, 32))
				fe.Send(&pgproto3.SASLResponse{Data: []byte("c=biws,r=" + nonce + ",p=" + proof)})
				if err := fe.Flush(); err != nil {
					t.Fatal(err)
				}
			case *pgproto3.ErrorResponse:
				return serverFirst, m.Code
			default:
				t.Fatalf("%s: unexpected %T", user, msg)
			}
		}
	}
	salt := func(serverFirst string) string {
		_, rest, _ := strings.Cut(serverFirst, ",s=")
		s, _, _ := strings.Cut(rest, ",")
		return s
	}
	knownFirst, knownCode := exchange("alice")
	unknownFirst, unknownCode := exchange("mallory")
	againFirst, _ := exchange("mallory")
	if unknownFirst == "" || !strings.Contains(unknownFirst, ",i=4096") {
		t.Fatalf("unknown user got no server-first message like a known user's (%q vs %q)", unknownFirst, knownFirst)
	}
	if unknownCode != knownCode || knownCode != "28P01" {
		t.Fatalf("unknown user fails with %s, wrong password with %s; want both 28P01", unknownCode, knownCode)
	}
	if salt(unknownFirst) == "" || salt(unknownFirst) != salt(againFirst) {
		t.Fatalf("unknown user's salt changes between attempts (%q, %q): that tells it apart", salt(unknownFirst), salt(againFirst))
	}
}
