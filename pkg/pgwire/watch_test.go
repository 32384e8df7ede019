package pgwire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// subscribeCounter is the fake backend counting subscriptions still open
// and the Next calls that ended because their context was cancelled.
type subscribeCounter struct {
	*sqltest.Fake
	mu        sync.Mutex
	open      int
	cancelled int
}

func (b *subscribeCounter) Subscribe(ctx context.Context, req sql.SubscribeRequest) (sql.Subscription, error) {
	s, err := b.Fake.Subscribe(ctx, req)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.open++
	b.mu.Unlock()
	return &countedSubscription{Subscription: s, b: b}, nil
}

func (b *subscribeCounter) counts() (open, cancelled int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open, b.cancelled
}

// waitCounts polls until the counts are as wanted, for at most 30 s.
func (b *subscribeCounter) waitCounts(t *testing.T, open, cancelled int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		o, c := b.counts()
		if o == open && c == cancelled {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscriptions: %d open, %d cancelled; want %d open, %d cancelled", o, c, open, cancelled)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type countedSubscription struct {
	sql.Subscription
	b    *subscribeCounter
	once sync.Once
}

func (s *countedSubscription) Next(ctx context.Context) (sql.SubscribeBatch, error) {
	batch, err := s.Subscription.Next(ctx)
	if err != nil && ctx.Err() != nil {
		s.b.mu.Lock()
		s.b.cancelled++
		s.b.mu.Unlock()
	}
	return batch, err
}

func (s *countedSubscription) Close() {
	s.once.Do(func() {
		s.b.mu.Lock()
		s.b.open--
		s.b.mu.Unlock()
	})
	s.Subscription.Close()
}

// rawClient speaks the protocol message by message, so that tests decide
// exactly what is pipelined and see every message the server sends.
type rawClient struct {
	t   *testing.T
	nc  *net.TCPConn
	fe  *pgproto3.Frontend
	key *pgproto3.BackendKeyData
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
	c := &rawClient{t: t, nc: nc.(*net.TCPConn), fe: pgproto3.NewFrontend(nc, nc)}
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "alice", "database": "tandem"}})
	for {
		switch m := c.receive().(type) {
		case *pgproto3.BackendKeyData:
			c.key = &pgproto3.BackendKeyData{ProcessID: m.ProcessID, SecretKey: bytes.Clone(m.SecretKey)}
		case *pgproto3.ReadyForQuery:
			return c
		case *pgproto3.ErrorResponse:
			t.Fatalf("startup: %s", m.Message)
		}
	}
}

// send sends msgs in one write, as a pipelining client does.
func (c *rawClient) send(msgs ...pgproto3.FrontendMessage) {
	c.t.Helper()
	for _, m := range msgs {
		c.fe.Send(m)
	}
	if err := c.fe.Flush(); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawClient) receive() pgproto3.BackendMessage {
	c.t.Helper()
	m, err := c.fe.Receive()
	if err != nil {
		c.t.Fatalf("receive: %v", err)
	}
	return m
}

// expect receives messages up to and including one of type T, and
// returns their type names, ParameterStatus excepted.
func expect[T pgproto3.BackendMessage](c *rawClient) (T, []string) {
	c.t.Helper()
	var names []string
	for {
		m := c.receive()
		if _, ok := m.(*pgproto3.ParameterStatus); ok {
			continue
		}
		names = append(names, strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3."))
		if want, ok := m.(T); ok {
			return want, names
		}
	}
}

// query runs text with the simple protocol and returns what came back,
// failing on an error.
func (c *rawClient) query(text string) []string {
	c.t.Helper()
	c.send(&pgproto3.Query{String: text})
	_, names := expect[*pgproto3.ReadyForQuery](c)
	for _, n := range names {
		if n == "ErrorResponse" {
			c.t.Fatalf("%s: %v", text, names)
		}
	}
	return names
}

// subscribeRaw starts SUBSCRIBE over COPY on a quiet table t of one row
// with the given protocol and returns once its snapshot row arrived.
func subscribeRaw(c *rawClient, protocol string) {
	c.t.Helper()
	switch protocol {
	case "simple":
		c.send(&pgproto3.Query{String: "COPY (SUBSCRIBE t) TO STDOUT"})
	case "extended":
		// What pgx sends: everything up to and including Sync at once.
		c.send(&pgproto3.Parse{Query: "SUBSCRIBE t"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{}, &pgproto3.Sync{})
	}
	expect[*pgproto3.CopyOutResponse](c)
	if d, _ := expect[*pgproto3.CopyData](c); !strings.HasSuffix(string(d.Data), "\t1\t1\n") {
		c.t.Fatalf("snapshot row %q", d.Data)
	}
}

// TestClientCloseCancelsSubscribe: a client that closes its connection in
// the middle of SUBSCRIBE over COPY on a table that does not change, over
// either protocol and with a FIN or a reset, gets its statement's
// context cancelled and the subscription closed, without any write to the
// connection failing first. Without the read-ahead watcher the
// subscription stays open forever here.
func TestClientCloseCancelsSubscribe(t *testing.T) {
	for _, protocol := range []string{"simple", "extended"} {
		for _, reset := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/reset=%v", protocol, reset), func(t *testing.T) {
				b := &subscribeCounter{Fake: sqltest.New()}
				addr := startServerOn(t, b, Config{})
				c := dialRaw(t, addr)
				c.query("CREATE TABLE t (a bigint); INSERT INTO t VALUES (1)")
				subscribeRaw(c, protocol)
				b.waitCounts(t, 1, 0)
				if reset {
					// Linger 0 makes Close send RST instead of FIN.
					if err := c.nc.SetLinger(0); err != nil {
						t.Fatal(err)
					}
				}
				c.nc.Close()
				b.waitCounts(t, 0, 1)
			})
		}
	}
}

// TestPipelinedSyncAfterExecute: the messages a client pipelines behind a
// running statement are processed once each, in order, after it: a
// streamed SELECT sent as Parse/Bind/Execute/Sync followed by a simple
// Query in the same write answers with exactly one ReadyForQuery per
// Sync/Query; a SUBSCRIBE over the extended protocol with its Sync
// pipelined, stopped by a CancelRequest, answers 57014 then one
// ReadyForQuery, and the connection stays usable.
func TestPipelinedSyncAfterExecute(t *testing.T) {
	b := &subscribeCounter{Fake: sqltest.New()}
	addr := startServerOn(t, b, Config{})
	c := dialRaw(t, addr)
	c.query("CREATE TABLE t (a bigint); INSERT INTO t VALUES (1)")
	var values []string
	for i := range 600 {
		values = append(values, fmt.Sprintf("(%d)", i))
	}
	c.query("CREATE TABLE kv (k bigint); INSERT INTO kv VALUES " + strings.Join(values, ", "))
	b.StreamPeeks()

	c.send(&pgproto3.Parse{Query: "SELECT k FROM kv"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{}, &pgproto3.Sync{}, &pgproto3.Query{String: "SELECT 1"})
	_, first := expect[*pgproto3.ReadyForQuery](c)
	_, second := expect[*pgproto3.ReadyForQuery](c)
	counts := map[string]int{}
	for _, n := range first {
		counts[n]++
	}
	if counts["DataRow"] != 600 || counts["CommandComplete"] != 1 || len(first) != 600+5 ||
		first[0] != "ParseComplete" || first[len(first)-2] != "CommandComplete" {
		t.Fatalf("extended SELECT answered %v", counts)
	}
	if got := strings.Join(second, " "); got != "RowDescription DataRow CommandComplete ReadyForQuery" {
		t.Fatalf("pipelined query answered %s", got)
	}

	subscribeRaw(c, "extended")
	b.waitCounts(t, 1, 0)
	// A CancelRequest comes on a connection of its own, instead of a
	// startup message.
	cn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	cancelMsg, err := (&pgproto3.CancelRequest{ProcessID: c.key.ProcessID, SecretKey: c.key.SecretKey}).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cn.Write(cancelMsg); err != nil {
		t.Fatal(err)
	}
	e, _ := expect[*pgproto3.ErrorResponse](c)
	if e.Code != "57014" {
		t.Fatalf("cancelled SUBSCRIBE: %s %s", e.Code, e.Message)
	}
	if m := c.receive(); fmt.Sprintf("%T", m) != "*pgproto3.ReadyForQuery" {
		t.Fatalf("after the error: %T", m)
	}
	b.waitCounts(t, 0, 1)
	if got := strings.Join(c.query("SELECT 1"), " "); got != "RowDescription DataRow CommandComplete ReadyForQuery" {
		t.Fatalf("query after cancel answered %s", got)
	}
}

// TestClientReader: the read-ahead delivers exactly the bytes sent, in
// order and then the end, however the reads are split, also when the
// sender outruns the reader by more than readAheadBytes; it reports the
// end of input once; stop ends it.
func TestClientReader(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 3*readAheadBytes/16+7)
	tests := []struct {
		name string
		src  func() io.Reader
		want []byte
		err  error
	}{
		{"small", func() io.Reader { return strings.NewReader("hello") }, []byte("hello"), io.EOF},
		{"one byte reads", func() io.Reader { return iotest.OneByteReader(strings.NewReader("pipelined")) }, []byte("pipelined"), io.EOF},
		{"more than read-ahead", func() io.Reader { return bytes.NewReader(big) }, big, io.EOF},
		{"error after data", func() io.Reader {
			return io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(errors.New("reset")))
		}, []byte("partial"), errors.New("reset")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newClientReader(tc.src())
			ends := make(chan error, 2)
			r.watch(func(err error) { ends <- err })
			// Let the read-ahead run first so that it fills its buffer.
			time.Sleep(10 * time.Millisecond)
			got, err := io.ReadAll(iotest.HalfReader(r))
			if tc.err != io.EOF && (err == nil || err.Error() != tc.err.Error()) {
				t.Fatalf("read error %v, want %v", err, tc.err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("read %d bytes, want %d", len(got), len(tc.want))
			}
			if end := <-ends; end.Error() != tc.err.Error() {
				t.Fatalf("end reported as %v", end)
			}
			r.stop()
			if len(ends) != 0 {
				t.Fatal("end reported twice")
			}
		})
	}
	// stop ends a read-ahead that waits for its reader to consume.
	r := newClientReader(bytes.NewReader(big))
	r.watch(func(error) {})
	time.Sleep(10 * time.Millisecond)
	r.stop()
}

// TestClientReaderBuffer: a consumer that always leaves a few bytes
// unread keeps the buffer bounded (the consumed prefix is reclaimed).
func TestClientReaderBuffer(t *testing.T) {
	r := newClientReader(nil)
	r.watching = true
	chunk := make([]byte, 1000)
	p := make([]byte, 999)
	var sent, got int
	for range 10000 {
		r.mu.Lock()
		r.appendLocked(chunk)
		r.mu.Unlock()
		sent += len(chunk)
		n, err := r.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	if unread := len(r.data) - r.off; unread != sent-got {
		t.Fatalf("%d bytes unread, want %d", unread, sent-got)
	}
	if c := cap(r.data); c > 4*(sent-got)+2*len(chunk) {
		t.Fatalf("buffer capacity %d for %d unread bytes", c, sent-got)
	}
}

func TestKeepAliveConfig(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want net.KeepAliveConfig
	}{
		{0, net.KeepAliveConfig{Enable: true, Idle: 30 * time.Second, Interval: 10 * time.Second, Count: 3}},
		{90 * time.Second, net.KeepAliveConfig{Enable: true, Idle: 90 * time.Second, Interval: 30 * time.Second, Count: 3}},
		{time.Second, net.KeepAliveConfig{Enable: true, Idle: time.Second, Interval: time.Second, Count: 3}},
		{-1, net.KeepAliveConfig{Enable: false}},
	}
	for _, tc := range tests {
		if got := keepAliveConfig(tc.in); got != tc.want {
			t.Errorf("keepAliveConfig(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// BenchmarkQueryRoundTrip measures one simple-protocol query's round
// trip, which the read-ahead adds a goroutine hand-off to.
func BenchmarkQueryRoundTrip(b *testing.B) {
	srv, err := NewServer(sql.NewEngine(sqltest.New()), Config{})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() {
		cancel()
		<-done
	}()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	c, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=alice database=tandem sslmode=disable", host, port))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol); err != nil {
			b.Fatal(err)
		}
	}
}
