package mesh

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// Config configures one process's end of the mesh.
type Config struct {
	// Process is this process's index into Peers.
	Process int
	// Peers are the compute addresses of every process, in process order.
	Peers []string
	// Workers is the number of workers per process; all must agree.
	Workers int
	// Listener, if set, is used instead of listening on Peers[Process].
	Listener net.Listener
	// OnLost is called once when an established connection is lost.
	OnLost func(error)
	// MaxFrame bounds one message; zero means 256 MiB. A larger frame is a
	// protocol error (and so a lost peer).
	MaxFrame uint32
	Log      logr.Logger
	// ServerTLS and ClientTLS, when set, wrap every accepted and dialled
	// connection in TLS before the hello (mutual TLS when ServerTLS
	// requires client certificates); a failed TLS handshake fails the
	// mesh like a bad hello, and is reported to OnRefused.
	ServerTLS, ClientTLS *tls.Config
	OnRefused            func(error)
}

// Mesh is one process's connections to its peers. It implements
// runtime.Fabric.
type Mesh struct {
	cfg    Config
	peers  []*peer // by process index; nil at Process
	closed chan struct{}

	lostOnce  sync.Once
	closeOnce sync.Once
	recvOnce  sync.Once
	wg        sync.WaitGroup
}

// Errors of Connect and Send.
var (
	ErrHandshake = errors.New("mesh handshake failed")
	ErrClosed    = errors.New("mesh closed")
)

// Connect listens, connects to every peer and completes every handshake,
// retrying dials until ctx ends. With a single process it connects nothing.
func Connect(ctx context.Context, cfg Config) (*Mesh, error) {
	n := len(cfg.Peers)
	if n == 0 || cfg.Process < 0 || cfg.Process >= n {
		return nil, fmt.Errorf("mesh: process %d out of range for %d peers", cfg.Process, n)
	}
	if cfg.Workers <= 0 {
		return nil, fmt.Errorf("mesh: %d workers per process", cfg.Workers)
	}
	if cfg.MaxFrame == 0 {
		cfg.MaxFrame = 256 << 20
	}
	if cfg.OnLost == nil {
		cfg.OnLost = func(error) {}
	}
	m := &Mesh{cfg: cfg, peers: make([]*peer, n), closed: make(chan struct{})}
	if n == 1 {
		return m, nil
	}
	lis := cfg.Listener
	if lis == nil {
		var err error
		if lis, err = (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Peers[cfg.Process]); err != nil {
			return nil, fmt.Errorf("mesh: listen: %w", err)
		}
	}
	type result struct {
		p   *peer
		err error
	}
	results := make(chan result, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Accept from higher indexes.
	accepts := n - 1 - cfg.Process
	go func() {
		for range accepts {
			c, err := lis.Accept()
			if err != nil {
				results <- result{err: fmt.Errorf("mesh: accept: %w", err)}
				return
			}
			go func() {
				p, err := m.handshake(ctx, c, -1)
				results <- result{p, err}
			}()
		}
	}()
	// Dial lower indexes.
	for j := range cfg.Process {
		go func() {
			c, err := dialRetry(ctx, cfg.Peers[j])
			if err != nil {
				results <- result{err: fmt.Errorf("mesh: dial process %d at %s: %w", j, cfg.Peers[j], err)}
				return
			}
			p, err := m.handshake(ctx, c, j)
			results <- result{p, err}
		}()
	}
	var errs []error
	for range n - 1 {
		var r result
		select {
		case r = <-results:
		case <-ctx.Done():
			r.err = fmt.Errorf("mesh: waiting for peers: %w", ctx.Err())
		}
		if r.err != nil {
			errs = append(errs, r.err)
			break
		}
		if m.peers[r.p.index] != nil {
			r.p.conn.Close()
			errs = append(errs, fmt.Errorf("%w: two connections from process %d", ErrHandshake, r.p.index))
			break
		}
		m.peers[r.p.index] = r.p
	}
	if err := errors.Join(errs...); err != nil {
		cancel()
		lis.Close()
		for _, p := range m.peers {
			if p != nil {
				p.conn.Close()
			}
		}
		return nil, err
	}
	// Every peer is connected: nobody else may join.
	lis.Close()
	for _, p := range m.peers {
		if p != nil {
			m.wg.Add(1)
			go m.write(p)
		}
	}
	cfg.Log.Info("Connected compute mesh", "process", cfg.Process, "processes", n, "workers", cfg.Workers)
	return m, nil
}

func dialRetry(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	backoff := 20 * time.Millisecond
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// hello is the handshake both sides send.
const (
	magic        = "TNDM"
	version      = 1
	helloLen     = 4 + 2 + 4 + 4 + 4
	handshakeTTL = 10 * time.Second
)

// handshake exchanges hellos on c; want is the expected peer index, or -1
// for an accepted connection (which must come from a higher index).
func (m *Mesh) handshake(ctx context.Context, c net.Conn, want int) (*peer, error) {
	deadline := time.Now().Add(handshakeTTL)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	if tc := m.wrapTLS(c, want); tc != nil {
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			if m.cfg.OnRefused != nil {
				m.cfg.OnRefused(err)
			}
			return nil, fmt.Errorf("%w with %s: TLS: %w", ErrHandshake, c.RemoteAddr(), err)
		}
		c = tc
	}
	out := make([]byte, helloLen)
	copy(out, magic)
	binary.BigEndian.PutUint16(out[4:], version)
	binary.BigEndian.PutUint32(out[6:], uint32(len(m.cfg.Peers)))
	binary.BigEndian.PutUint32(out[10:], uint32(m.cfg.Process))
	binary.BigEndian.PutUint32(out[14:], uint32(m.cfg.Workers))
	fail := func(format string, args ...any) (*peer, error) {
		c.Close()
		return nil, fmt.Errorf("%w with %s: %s", ErrHandshake, c.RemoteAddr(), fmt.Sprintf(format, args...))
	}
	if _, err := c.Write(out); err != nil {
		return fail("send hello: %v", err)
	}
	in := make([]byte, helloLen)
	if _, err := io.ReadFull(c, in); err != nil {
		return fail("read hello: %v", err)
	}
	if string(in[:4]) != magic {
		return fail("not a tandem compute peer")
	}
	if v := binary.BigEndian.Uint16(in[4:]); v != version {
		return fail("peer speaks mesh version %d, this process %d", v, version)
	}
	count := int(binary.BigEndian.Uint32(in[6:]))
	index := int(binary.BigEndian.Uint32(in[10:]))
	workers := int(binary.BigEndian.Uint32(in[14:]))
	switch {
	case count != len(m.cfg.Peers):
		return fail("peer process %d has %d processes, this process %d", index, count, len(m.cfg.Peers))
	case workers != m.cfg.Workers:
		return fail("peer process %d has %d workers, this process %d", index, workers, m.cfg.Workers)
	case want >= 0 && index != want:
		return fail("dialed process %d but reached process %d", want, index)
	case want < 0 && (index <= m.cfg.Process || index >= count):
		return fail("unexpected connection from process %d", index)
	}
	_ = c.SetDeadline(time.Time{})
	return &peer{index: index, conn: c, notify: make(chan struct{}, 1)}, nil
}

// wrapTLS returns c wrapped in TLS when the mesh is configured for it:
// the server side for an accepted connection (want < 0), the client side
// for a dialled one; nil without TLS.
func (m *Mesh) wrapTLS(c net.Conn, want int) *tls.Conn {
	switch {
	case want < 0 && m.cfg.ServerTLS != nil:
		return tls.Server(c, m.cfg.ServerTLS)
	case want >= 0 && m.cfg.ClientTLS != nil:
		return tls.Client(c, m.cfg.ClientTLS)
	}
	return nil
}

// peer is the connection to one other process.
type peer struct {
	index  int
	conn   net.Conn
	mu     sync.Mutex
	queue  [][]byte
	notify chan struct{}
}

// Send implements runtime.Fabric. It queues msg for the peer's writer and
// never blocks; an error means the mesh is closed or to is not a peer.
func (m *Mesh) Send(to int, msg []byte) error {
	if to < 0 || to >= len(m.peers) || m.peers[to] == nil {
		return fmt.Errorf("mesh: send to process %d: not a peer of process %d", to, m.cfg.Process)
	}
	select {
	case <-m.closed:
		return ErrClosed
	default:
	}
	if uint64(len(msg)) > uint64(m.cfg.MaxFrame) {
		return fmt.Errorf("mesh: send to process %d: message of %d bytes exceeds the frame limit", to, len(msg))
	}
	p := m.peers[to]
	p.mu.Lock()
	p.queue = append(p.queue, msg)
	p.mu.Unlock()
	select {
	case p.notify <- struct{}{}:
	default:
	}
	return nil
}

func (m *Mesh) write(p *peer) {
	defer m.wg.Done()
	w := bufio.NewWriterSize(p.conn, 64<<10)
	var hdr [4]byte
	for {
		select {
		case <-m.closed:
			return
		case <-p.notify:
		}
		p.mu.Lock()
		batch := p.queue
		p.queue = nil
		p.mu.Unlock()
		for _, msg := range batch {
			binary.BigEndian.PutUint32(hdr[:], uint32(len(msg)))
			if _, err := w.Write(hdr[:]); err != nil {
				m.lost(p, fmt.Errorf("write: %w", err))
				return
			}
			if _, err := w.Write(msg); err != nil {
				m.lost(p, fmt.Errorf("write: %w", err))
				return
			}
		}
		// Flush once the queue is drained, so a burst goes out in few
		// syscalls and a lone message goes out at once.
		if err := w.Flush(); err != nil {
			m.lost(p, fmt.Errorf("write: %w", err))
			return
		}
	}
}

// Receive implements runtime.Fabric: it starts one reader per peer calling
// handler in arrival order. Only the first call has an effect.
func (m *Mesh) Receive(handler func(from int, msg []byte)) {
	m.recvOnce.Do(func() {
		for _, p := range m.peers {
			if p != nil {
				m.wg.Add(1)
				go m.read(p, handler)
			}
		}
	})
}

func (m *Mesh) read(p *peer, handler func(from int, msg []byte)) {
	defer m.wg.Done()
	r := bufio.NewReaderSize(p.conn, 64<<10)
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			m.lost(p, fmt.Errorf("read: %w", err))
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > m.cfg.MaxFrame {
			m.lost(p, fmt.Errorf("read: frame of %d bytes exceeds the limit of %d", n, m.cfg.MaxFrame))
			return
		}
		msg := make([]byte, n)
		if _, err := io.ReadFull(r, msg); err != nil {
			m.lost(p, fmt.Errorf("read: %w", err))
			return
		}
		handler(p.index, msg)
	}
}

// lost reports the first lost connection, unless the mesh is closing.
func (m *Mesh) lost(p *peer, err error) {
	select {
	case <-m.closed:
		return
	default:
	}
	m.lostOnce.Do(func() {
		err = fmt.Errorf("mesh: lost connection to process %d (%s): %w", p.index, p.conn.RemoteAddr(), err)
		m.cfg.Log.Error(err, "Lost a peer process of this replica; the replica cannot continue")
		m.cfg.OnLost(err)
	})
}

// Close ends every connection without reporting a loss and waits for the
// mesh's goroutines. Messages still queued are dropped.
func (m *Mesh) Close() error {
	m.closeOnce.Do(func() {
		close(m.closed)
		for _, p := range m.peers {
			if p != nil {
				p.conn.Close()
			}
		}
	})
	m.wg.Wait()
	return nil
}
