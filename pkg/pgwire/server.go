package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/tandemdb/tandem/pkg/readtrace"
	"github.com/tandemdb/tandem/pkg/scram"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Config configures a Server.
type Config struct {
	// Passwords maps user names to passwords (the bootstrap superuser's).
	// When it is not empty every connection authenticates with
	// SCRAM-SHA-256: these users with these passwords, every other user
	// against the SCRAM verifier of its role in the engine's catalog (a
	// role without LOGIN or without a password cannot log in). When
	// empty, any user may connect without a password, but only over
	// loopback unless AllowRemoteWithoutAuth, and a catalog role without
	// LOGIN is still refused.
	Passwords map[string]string
	// AllowRemoteWithoutAuth accepts unauthenticated connections from
	// non-loopback addresses (for a trusted network, e.g. inside a pod).
	AllowRemoteWithoutAuth bool
	// TLS, when set, is offered to clients that ask for it (SSLRequest).
	TLS *tls.Config
	// RequireTLS refuses connections that do not use TLS.
	RequireTLS bool
	// Logger receives connection-level events; nil discards them.
	Logger *slog.Logger
	// MaxMessageBytes bounds one client message (default 64 MiB).
	MaxMessageBytes int
	// KeepAlive is the TCP keepalive idle time of accepted connections:
	// after KeepAlive without traffic the kernel probes the client every
	// KeepAlive/3, and three unanswered probes end the connection, so a
	// client that vanished without closing (host gone, network cut) is
	// noticed within about 2×KeepAlive and its running statement
	// cancelled. Zero means DefaultKeepAlive; negative disables probes.
	KeepAlive time.Duration
	// ReadStages, when set, receives the stage times of every statement
	// that read from a replica (pkg/readtrace), once the last row went to
	// the client's connection.
	ReadStages ReadStages
}

// ReadStages records the stage times of one read.
type ReadStages interface {
	Record(t *readtrace.Trace)
}

// DefaultKeepAlive is Config.KeepAlive's default: a vanished client is
// noticed within about a minute.
const DefaultKeepAlive = 30 * time.Second

// keepAliveConfig is the TCP keepalive setting for Config.KeepAlive d.
func keepAliveConfig(d time.Duration) net.KeepAliveConfig {
	if d < 0 {
		return net.KeepAliveConfig{Enable: false}
	}
	if d == 0 {
		d = DefaultKeepAlive
	}
	return net.KeepAliveConfig{Enable: true, Idle: d, Interval: max(d/3, time.Second), Count: 3}
}

// Server serves the PostgreSQL wire protocol over a sql.Engine.
type Server struct {
	engine  *sql.Engine
	cfg     Config
	secrets map[string]scram.Verifier
	// mockKey derives the fake salt shown to an unknown user, so that the
	// exchange of an unknown user looks like a wrong password's.
	mockKey []byte
	log     *slog.Logger

	mu      sync.Mutex
	conns   map[string]*conn // by cancelKey, for CancelRequest
	nextPID uint32
	// active counts connections admitted under max_connections, from
	// their StartupMessage to their end.
	active int
	// serving is true while Serve accepts connections; stopErr says why
	// it stopped otherwise (Health).
	serving bool
	stopErr error
	wg      sync.WaitGroup
}

// Accept backoff after a temporary error (out of file descriptors, a
// connection aborted before it was accepted): doubled on each error in a
// row up to the maximum, as net/http does, so the listener neither spins
// nor gives up while the condition lasts.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// MaxConnectionsParam is the system parameter bounding concurrent client
// connections (PostgreSQL's max_connections); the engine's backend owns
// its value, read at each connection's startup.
const MaxConnectionsParam = "max_connections"

// NewServer returns a server executing statements with engine.
func NewServer(engine *sql.Engine, cfg Config) (*Server, error) {
	s := &Server{engine: engine, cfg: cfg, secrets: map[string]scram.Verifier{}, conns: map[string]*conn{}, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.cfg.MaxMessageBytes == 0 {
		s.cfg.MaxMessageBytes = 64 << 20
	}
	if cfg.RequireTLS && cfg.TLS == nil {
		return nil, errors.New("pgwire: RequireTLS without a TLS config")
	}
	s.mockKey = make([]byte, 32)
	if _, err := rand.Read(s.mockKey); err != nil {
		return nil, fmt.Errorf("pgwire: mock authentication key: %w", err)
	}
	for user, pw := range cfg.Passwords {
		sec, err := scram.NewVerifier(pw)
		if err != nil {
			return nil, fmt.Errorf("pgwire: user %s: %w", user, err)
		}
		s.secrets[user] = sec
	}
	return s, nil
}

// Serve accepts connections on ln until ctx is done or ln fails, then
// closes ln, cancels running statements and waits for every connection
// to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	defer s.wg.Wait()
	s.setServing(nil)
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				s.setStopped(errors.New("pgwire: server shut down"))
				return nil
			}
			if !temporaryAcceptError(err) {
				err = fmt.Errorf("pgwire: accept: %w", err)
				s.setStopped(err)
				return err
			}
			backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
			s.log.Warn("Accepting a connection failed; retrying", "err", err, "retry_in", backoff.String())
			select {
			case <-ctx.Done():
				s.setStopped(errors.New("pgwire: server shut down"))
				return nil
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if tc, ok := nc.(*net.TCPConn); ok {
			if err := tc.SetKeepAliveConfig(keepAliveConfig(s.cfg.KeepAlive)); err != nil {
				s.log.Debug("Setting TCP keepalive failed", "remote", nc.RemoteAddr().String(), "err", err)
			}
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(ctx, nc)
		}()
	}
}

// temporaryAcceptError reports whether an Accept error is worth retrying:
// a resource shortage that may pass (file descriptors, buffers, memory) or
// a connection that failed before it was accepted. A closed listener and
// anything unknown are permanent.
func temporaryAcceptError(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED, syscall.ECONNRESET,
		syscall.ENOBUFS, syscall.ENOMEM, syscall.EAGAIN, syscall.EINTR, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (s *Server) setServing(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serving, s.stopErr = true, err
}

func (s *Server) setStopped(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serving, s.stopErr = false, err
}

// Health returns nil while Serve accepts connections (retrying temporary
// accept errors counts as accepting), and otherwise why it does not: not
// started, shut down, or its listener failed for good.
func (s *Server) Health() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serving {
		return nil
	}
	if s.stopErr == nil {
		return errors.New("pgwire: not serving yet")
	}
	return s.stopErr
}

// admit counts a new connection against max_connections; false means the
// limit is reached and the connection must be refused.
func (s *Server) admit(ctx context.Context) bool {
	limit := s.maxConnections(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if limit > 0 && s.active >= limit {
		return false
	}
	s.active++
	return true
}

func (s *Server) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
}

// maxConnections reads max_connections from the backend; 0 (no limit)
// when the backend does not know the parameter.
func (s *Server) maxConnections(ctx context.Context) int {
	v, err := s.engine.SystemParameter(ctx, MaxConnectionsParam)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		s.log.Warn("Ignoring an invalid max_connections", "value", v)
		return 0
	}
	return n
}

func isLoopback(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

// serveConn runs one connection from startup to termination.
func (s *Server) serveConn(ctx context.Context, nc net.Conn) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		nc.Close()
	}()
	c, err := s.startup(ctx, nc)
	if err != nil {
		s.log.Debug("Connection startup failed", "remote", nc.RemoteAddr().String(), "err", err)
		return
	}
	if c == nil {
		return
	}
	defer s.release()
	defer s.unregister(c)
	defer c.session.Close()
	// From here on the client's input is read ahead, so that its end
	// cancels connCtx, and with it the running statement, even while the
	// loop is busy streaming results and reads nothing.
	connCtx, gone := context.WithCancelCause(ctx)
	defer gone(nil)
	c.in.watch(func(err error) {
		gone(fmt.Errorf("%w: %w", errClientGone, err))
	})
	defer func() {
		nc.Close()
		c.in.stop()
	}()
	if err := c.run(connCtx); err != nil && ctx.Err() == nil {
		s.log.Debug("Connection ended", "remote", nc.RemoteAddr().String(), "err", err)
	}
}

// startup negotiates TLS, authenticates and starts the session; it
// returns nil for connections that were only cancel requests.
func (s *Server) startup(ctx context.Context, nc net.Conn) (*conn, error) {
	in := newClientReader(nc)
	be := pgproto3.NewBackend(in, nc)
	be.SetMaxBodyLen(s.cfg.MaxMessageBytes)
	usingTLS := false
	for {
		msg, err := be.ReceiveStartupMessage()
		if err != nil {
			return nil, fmt.Errorf("receive startup: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if s.cfg.TLS == nil || usingTLS {
				if _, err := nc.Write([]byte{'N'}); err != nil {
					return nil, err
				}
				continue
			}
			if _, err := nc.Write([]byte{'S'}); err != nil {
				return nil, err
			}
			tc := tls.Server(nc, s.cfg.TLS)
			if err := tc.HandshakeContext(ctx); err != nil {
				return nil, fmt.Errorf("tls handshake: %w", err)
			}
			nc, usingTLS = tc, true
			in = newClientReader(nc)
			be = pgproto3.NewBackend(in, nc)
			be.SetMaxBodyLen(s.cfg.MaxMessageBytes)
		case *pgproto3.GSSEncRequest:
			if _, err := nc.Write([]byte{'N'}); err != nil {
				return nil, err
			}
		case *pgproto3.CancelRequest:
			s.cancel(m.ProcessID, m.SecretKey)
			return nil, nil
		case *pgproto3.StartupMessage:
			return s.open(ctx, nc, in, be, m, usingTLS)
		default:
			return nil, fmt.Errorf("unexpected startup message %T", msg)
		}
	}
}

// fatal sends a FATAL error and gives up on the connection.
func fatal(be *pgproto3.Backend, code, msg string) error {
	be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg})
	_ = be.Flush()
	return errors.New(msg)
}

// open admits, authenticates and starts a session. A connection beyond
// max_connections gets PostgreSQL's FATAL 53300 before authentication, so
// a flood of clients costs no authentication work.
func (s *Server) open(ctx context.Context, nc net.Conn, in *clientReader, be *pgproto3.Backend, m *pgproto3.StartupMessage, usingTLS bool) (c *conn, err error) {
	if !s.admit(ctx) {
		return nil, fatal(be, sqlerr.TooManyConnections, "sorry, too many clients already")
	}
	defer func() {
		if c == nil {
			s.release()
		}
	}()
	user := m.Parameters["user"]
	if user == "" {
		return nil, fatal(be, sqlerr.InvalidAuthorization, "no user name given")
	}
	if db := m.Parameters["database"]; db != "" && db != sql.Database {
		return nil, fatal(be, sqlerr.InvalidCatalogName, fmt.Sprintf("database %q does not exist (the database is %q)", db, sql.Database))
	}
	if s.cfg.RequireTLS && !usingTLS {
		return nil, fatal(be, sqlerr.InvalidAuthorization, "TLS is required")
	}
	role, known, err := s.engine.Role(ctx, user)
	if err != nil {
		s.log.Error("Reading the catalog's roles failed", "err", err)
		return nil, fatal(be, sqlerr.InternalError, "could not read the catalog's roles")
	}
	if len(s.secrets) > 0 {
		verifier, ok := s.verifier(user, role, known)
		if err := s.authenticate(be, user, verifier, ok); err != nil {
			return nil, err
		}
	} else if !isLoopback(nc.RemoteAddr()) && !s.cfg.AllowRemoteWithoutAuth {
		return nil, fatal(be, sqlerr.InvalidAuthorization, "no authentication is configured, so only loopback connections are accepted")
	}
	if known && !role.Login {
		return nil, fatal(be, sqlerr.InvalidAuthorization, fmt.Sprintf("role %q is not permitted to log in", user))
	}
	c = &conn{server: s, nc: nc, in: in, be: be, session: s.engine.NewSession(user),
		stmts: map[string]*prepared{}, portals: map[string]*portal{}, parses: parse.NewCache(simpleParseCacheSize)}
	// Large SELECT results without ORDER BY are sent as they are read
	// (runStatement), never held whole.
	c.session.EnableRowStreaming()
	for k, v := range m.Parameters {
		switch k {
		case "user", "database", "options", "replication":
		default:
			// Clients set e.g. application_name or DateStyle at startup;
			// values the session cannot take are ignored, as they only
			// describe client preferences.
			_, _ = c.session.Vars().Set(k, v)
		}
	}
	be.Send(&pgproto3.AuthenticationOk{})
	for k, v := range c.session.Vars().Reported() {
		be.Send(&pgproto3.ParameterStatus{Name: k, Value: v})
	}
	s.register(c)
	be.Send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret})
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := be.Flush(); err != nil {
		s.unregister(c)
		return nil, err
	}
	return c, nil
}

// verifier returns the SCRAM verifier user authenticates against: its
// configured password's, else its catalog role's; ok is false when there
// is none (unknown user, no password, an unreadable stored verifier).
func (s *Server) verifier(user string, role sql.Role, known bool) (scram.Verifier, bool) {
	if v, ok := s.secrets[user]; ok {
		return v, true
	}
	if !known || role.Password == "" {
		return scram.Verifier{}, false
	}
	v, err := scram.Parse(role.Password)
	if err != nil {
		s.log.Error("A role's stored password verifier does not parse", "role", user, "err", err)
		return scram.Verifier{}, false
	}
	return v, true
}

// authenticate runs SCRAM-SHA-256 against secret; without one (known
// false) the exchange runs in full against a mock and fails at the proof.
func (s *Server) authenticate(be *pgproto3.Backend, user string, secret scram.Verifier, known bool) error {
	fail := func() error {
		return fatal(be, sqlerr.InvalidPassword, fmt.Sprintf("password authentication failed for user %q", user))
	}
	be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
	if err := be.Flush(); err != nil {
		return err
	}
	if err := be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	msg, err := be.Receive()
	if err != nil {
		return fmt.Errorf("receive SASL initial response: %w", err)
	}
	init, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok || init.AuthMechanism != "SCRAM-SHA-256" {
		return fatal(be, sqlerr.ProtocolViolation, "expected a SCRAM-SHA-256 SASL initial response")
	}
	if !known {
		// Run the whole exchange against a secret no proof matches, with a
		// salt that is the same at every attempt, so that a client cannot
		// tell an unknown user from a wrong password.
		secret = scram.Mock(s.mockKey, user)
	}
	srv := &scram.Server{Verifier: secret}
	first, err := srv.First(string(init.Data))
	if err != nil {
		return fatal(be, sqlerr.ProtocolViolation, err.Error())
	}
	be.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(first)})
	if err := be.Flush(); err != nil {
		return err
	}
	if err := be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	msg, err = be.Receive()
	if err != nil {
		return fmt.Errorf("receive SASL response: %w", err)
	}
	resp, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return fatal(be, sqlerr.ProtocolViolation, "expected a SASL response")
	}
	final, err := srv.Final(string(resp.Data))
	if err != nil {
		return fail()
	}
	be.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte(final)})
	return nil
}

// cancelKey is the map key of a connection's cancel identity.
func cancelKey(pid uint32, secret []byte) string {
	return string(binary.BigEndian.AppendUint32(nil, pid)) + string(secret)
}

func (s *Server) register(c *conn) {
	c.secret = make([]byte, 4)
	_, _ = rand.Read(c.secret)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextPID++
	c.pid = s.nextPID
	s.conns[cancelKey(c.pid, c.secret)] = c
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, cancelKey(c.pid, c.secret))
}

// cancel cancels the running statement of the connection with the given
// key, if any.
func (s *Server) cancel(pid uint32, secret []byte) {
	s.mu.Lock()
	c := s.conns[cancelKey(pid, secret)]
	s.mu.Unlock()
	if c != nil {
		c.cancelRunning()
	}
}

// simpleParseCacheSize bounds each connection's cache of parsed simple
// query statements (parse.Cache): a client cycling through more distinct
// statement shapes than this empties it and parses again.
const simpleParseCacheSize = 64
