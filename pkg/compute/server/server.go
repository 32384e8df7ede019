package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/tandemdb/tandem/pkg/compute/peeklane"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// Config configures a Server.
type Config struct {
	Backend Backend
	Codec   Codec
	Log     logr.Logger
	Metrics Metrics // nil records nothing
	// DefaultStashChunkSize bounds a stashed chunk when CreateInstance does
	// not; zero means 1 MiB.
	DefaultStashChunkSize uint64
	// Now is the clock for peek durations; nil means time.Now.
	Now func() time.Time
	// Memory, when set, refuses new peeks (53200) while the process is
	// near its memory limit, and new dataflows when its Dataflows is set;
	// with its Report set the process reports its memory to the
	// controller instead (MemoryStatus).
	Memory *MemoryGuard
	// LaneAddress, when set, is the peek lane this process serves
	// (peeklane.Serve with AttachLane), advertised to each controller
	// connection in the stream's header.
	LaneAddress string
}

// Server implements computepb.ComputeServer. Create it with New and run its
// loop with Run before serving.
type Server struct {
	computepb.UnimplementedComputeServer

	rt      Backend
	codec   Codec
	log     logr.Logger
	metrics Metrics
	now     func() time.Time
	chunk   uint64
	memory  *MemoryGuard
	lane    string

	requests chan request // connections to the loop
	events   inbox[Event] // runtime to the loop
	// lanes carries the lanes' commands and closes to the loop, in each
	// lane's order. A lane's reader never waits for the loop (an
	// unbuffered send would park it whenever the loop is busy, and the
	// loop would then have to wake it): it goes back to its socket.
	lanes    inbox[request]
	loopDone chan struct{}

	// Everything below is owned by the loop goroutine.
	st state
}

// errSuperseded ends a connection replaced by a newer one.
var errSuperseded = errors.New("superseded by a newer controller connection")

// New returns a server driving cfg.Backend.
func New(cfg Config) *Server {
	s := &Server{
		rt:       cfg.Backend,
		codec:    cfg.Codec,
		memory:   cfg.Memory,
		lane:     cfg.LaneAddress,
		log:      cfg.Log,
		metrics:  cfg.Metrics,
		now:      cfg.Now,
		chunk:    cfg.DefaultStashChunkSize,
		requests: make(chan request),
		loopDone: make(chan struct{}),
	}
	if s.metrics == nil {
		s.metrics = nopMetrics{}
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.chunk == 0 {
		s.chunk = 1 << 20
	}
	s.events, s.lanes = newInbox[Event](), newInbox[request]()
	s.st = newState()
	return s
}

// Deliver hands a runtime event to the server. It never blocks; it is safe
// from any goroutine, also before Run and after Run returned (the event is
// then dropped with the rest of the state).
func (s *Server) Deliver(ev Event) { s.events.push(ev) }

// request is one input from a connection goroutine to the loop.
type request struct {
	received time.Time // when a command came off the stream
	conn     *conn
	connect  chan error // set for a new connection: the loop answers on it
	cmd      *computepb.Command
	closed   bool           // the connection's stream (or lane) ended
	lane     *lane          // set for a lane's attach, close or command (lane.go)
	stashed  *stashFinished // a stash job ended
}

type stashFinished struct {
	uuid   string
	result string
}

// Run runs the server loop until ctx ends. Only one Run may be active.
func (s *Server) Run(ctx context.Context) error {
	defer close(s.loopDone)
	var memoryTick <-chan time.Time
	if s.memory.samples() {
		t := time.NewTicker(s.memory.interval())
		defer t.Stop()
		memoryTick = t.C
	}
	for {
		select {
		case <-memoryTick:
			s.reportMemory(false)
		case <-ctx.Done():
			if c := s.st.conn; c != nil {
				c.cancel(errShutdown)
			}
			return nil
		case r := <-s.requests:
			s.handleRequest(ctx, r)
		case <-s.events.notify:
			for _, ev := range s.events.take() {
				s.handleEvent(ctx, ev)
			}
		case <-s.lanes.notify:
			for _, r := range s.lanes.take() {
				s.handleRequest(ctx, r)
			}
		}
	}
}

var errShutdown = errors.New("replica shutting down")

// send hands r to the loop, giving up when the loop or ctx ended.
func (s *Server) send(ctx context.Context, r request) bool {
	select {
	case s.requests <- r:
		return true
	case <-ctx.Done():
		return false
	case <-s.loopDone:
		return false
	}
}

// CommandStream serves one controller connection.
func (s *Server) CommandStream(stream computepb.Compute_CommandStreamServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	hello := first.GetHello()
	if hello == nil {
		return status.Errorf(codes.FailedPrecondition, "first command must be hello, got %s", protocol.CommandKind(first))
	}
	if err := protocol.Validate(first); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	s.metrics.CommandReceived(protocol.KindHello)

	ctx, cancel := context.WithCancelCause(stream.Context())
	defer cancel(nil)
	c := &conn{nonce: hello.GetNonce(), out: newOutQueue(), ctx: ctx, cancel: cancel}
	answer := make(chan error, 1)
	if !s.send(ctx, request{conn: c, connect: answer}) {
		return status.Error(codes.Unavailable, "replica is shutting down")
	}
	if err := <-answer; err != nil {
		return err
	}
	log := s.log.WithValues("nonce", c.nonce)
	log.Info("Accepted controller connection")
	if s.lane != "" {
		if err := stream.SendHeader(metadata.Pairs(peeklane.HeaderKey, s.lane)); err != nil {
			cancel(err)
		}
	}

	// The receiver forwards commands; this goroutine sends responses. gRPC
	// allows one Recv and one Send concurrently on a stream. The receiver
	// ends when the stream does, which gRPC ensures once this handler
	// returns.
	go func() {
		for {
			cmd, err := stream.Recv()
			if err != nil {
				cancel(fmt.Errorf("%w: %w", errReceive, err))
				return
			}
			if !s.send(ctx, request{conn: c, cmd: cmd, received: s.now()}) {
				return
			}
		}
	}()
	err = c.out.drain(ctx, stream.Send)
	cancel(err)
	cause := context.Cause(ctx)
	// Tell the loop, so it forgets the connection's peeks. A loop that ended
	// needs no telling.
	select {
	case s.requests <- request{conn: c, closed: true}:
	case <-s.loopDone:
	}
	switch {
	case errors.Is(cause, errSuperseded):
		log.Info("Closed controller connection superseded by a newer one")
		return status.Error(codes.Aborted, errSuperseded.Error())
	case errors.Is(cause, errShutdown):
		log.Info("Closed controller connection for shutdown")
		return status.Error(codes.Unavailable, errShutdown.Error())
	case errors.Is(cause, io.EOF):
		log.Info("Controller closed its connection")
		return nil
	}
	log.Info("Lost controller connection", "cause", cause.Error())
	return cause
}

var errReceive = errors.New("receive")

// inbox is an unbounded queue to the loop: a push never waits for it.
type inbox[T any] struct {
	mu     sync.Mutex
	items  []T
	notify chan struct{}
}

func newInbox[T any]() inbox[T] { return inbox[T]{notify: make(chan struct{}, 1)} }

func (q *inbox[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

func (q *inbox[T]) take() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}
