package pgwire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// panickingBackend panics in Peek while panicPeeks is set: a bug hit by
// one statement, injected without package-level state.
type panickingBackend struct {
	*sqltest.Fake
	mu         sync.Mutex
	panicPeeks bool
}

func (b *panickingBackend) setPanic(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.panicPeeks = on
}

func (b *panickingBackend) Peek(ctx context.Context, req sql.PeekRequest) (sql.PeekRows, error) {
	b.mu.Lock()
	on := b.panicPeeks
	b.mu.Unlock()
	if on {
		var m map[string]int
		m["boom"]++ // a nil map write: a runtime panic, as a real bug would be
	}
	return b.Fake.Peek(ctx, req)
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestPanicEndsOnlyTheStatement(t *testing.T) {
	be := &panickingBackend{Fake: sqltest.New()}
	var logs syncBuffer
	addr := startServerOn(t, be, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c := connect(t, addr, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "CREATE TABLE t (a bigint)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO t VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	be.setPanic(true)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		_, err := c.Exec(ctx, "SELECT a FROM t", mode)
		if pgCode(err) != "XX000" || !strings.Contains(err.Error(), "internal error: assignment to entry in nil map") {
			t.Fatalf("%v: got %v, want XX000 internal error", mode, err)
		}
	}
	// Inside a transaction block the panic aborts the block, as any error.
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SELECT a FROM t"); pgCode(err) != "XX000" {
		t.Fatalf("in block: %v", err)
	}
	if _, err := c.Exec(ctx, "SELECT 1"); pgCode(err) != "25P02" {
		t.Fatalf("after the panic in a block: %v, want 25P02", err)
	}
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	be.setPanic(false)
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("connection after the panic: n=%d err=%v", n, err)
	}
	if l := logs.String(); !strings.Contains(l, "Statement panicked") || !strings.Contains(l, "robust_test.go") {
		t.Fatalf("log has no panic line with the stack:\n%s", l)
	}
}

func TestMaxConnections(t *testing.T) {
	addr := startServer(t, Config{})
	admin := connect(t, addr, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := admin.Exec(ctx, "ALTER SYSTEM SET max_connections = 2"); err != nil {
		t.Fatal(err)
	}
	second := connect(t, addr, "")
	host, port, _ := net.SplitHostPort(addr)
	_, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=alice database=tandem sslmode=disable", host, port))
	if pgCode(err) != "53300" || !strings.Contains(err.Error(), "sorry, too many clients already") {
		t.Fatalf("third connection: %v, want 53300", err)
	}
	// A closed connection frees its slot.
	if err := second.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var third *pgx.Conn
	deadline := time.Now().Add(10 * time.Second)
	for {
		third, err = pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=alice database=tandem sslmode=disable", host, port))
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the server notices the close asynchronously
	}
	if err != nil {
		t.Fatalf("connection after one closed: %v", err)
	}
	defer third.Close(ctx)
	if _, err := admin.Exec(ctx, "ALTER SYSTEM SET max_connections = 'many'"); pgCode(err) != "22023" {
		t.Fatalf("invalid value: %v", err)
	}
}

// flakyListener fails Accept with err the first n times.
type flakyListener struct {
	net.Listener
	mu  sync.Mutex
	n   int
	err error
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.n > 0 {
		l.n--
		l.mu.Unlock()
		return nil, l.err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

func TestListenerSurvivesTemporaryAcceptErrors(t *testing.T) {
	srv, err := NewServer(sql.NewEngine(sqltest.New()), Config{})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	ln := &flakyListener{Listener: inner, n: 5, err: emfile}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	c := connect(t, inner.Addr().String(), "")
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := srv.Health(); err != nil {
		t.Fatalf("health while serving: %v", err)
	}
	c.Close(ctx)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if srv.Health() == nil {
		t.Fatal("health after shutdown is ok")
	}
}

func TestListenerPermanentErrorStopsAndReports(t *testing.T) {
	srv, err := NewServer(sql.NewEngine(sqltest.New()), Config{})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	ln := &flakyListener{Listener: inner, n: 1, err: errors.New("listener is broken")}
	err = srv.Serve(context.Background(), ln)
	if err == nil || !strings.Contains(err.Error(), "listener is broken") {
		t.Fatalf("serve: %v", err)
	}
	if h := srv.Health(); h == nil || !strings.Contains(h.Error(), "listener is broken") {
		t.Fatalf("health: %v", h)
	}
}

func TestTemporaryAcceptError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)}, true},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENFILE)}, true},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)}, true},
		{net.ErrClosed, false},
		{fmt.Errorf("accept: %w", net.ErrClosed), false},
		{errors.New("something else"), false},
	} {
		if got := temporaryAcceptError(tc.err); got != tc.want {
			t.Errorf("temporaryAcceptError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
