package scripttest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// stream is one gRPC stream to one process, with the responses not yet
// consumed by an expectation and the invariant checks over all of them.
type stream struct {
	proc   int
	cc     *grpc.ClientConn
	s      computepb.Compute_CommandStreamClient
	cancel context.CancelFunc

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	buf     []*computepb.Response
	ended   bool
	endErr  error
	// resumed, when not nil, holds the receiver until it is closed
	// (pause): responses then back up in gRPC flow control, and the
	// replica's sender blocks, as with a slow controller.
	resumed    chan struct{}
	violations []string
	// Invariant state.
	frontiers map[string]*[3]frontier.Frontier
	reported  map[string]*[3]bool
	terminal  map[string]bool
	stashSeq  map[string]uint64
	cancelled map[string]bool // CancelPeek sent
}

func dial(ctx context.Context, proc int, addr string) (*stream, error) {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		return nil, fmt.Errorf("dial process %d at %s: %w", proc, addr, err)
	}
	sctx, cancel := context.WithCancel(ctx)
	s, err := computepb.NewComputeClient(cc).CommandStream(sctx, grpc.WaitForReady(true))
	if err != nil {
		cancel()
		cc.Close()
		return nil, fmt.Errorf("open stream to process %d: %w", proc, err)
	}
	st := &stream{
		proc: proc, cc: cc, s: s, cancel: cancel, changed: make(chan struct{}),
		frontiers: map[string]*[3]frontier.Frontier{}, reported: map[string]*[3]bool{},
		terminal: map[string]bool{}, stashSeq: map[string]uint64{}, cancelled: map[string]bool{},
	}
	go st.receive()
	return st, nil
}

func (st *stream) receive() {
	for {
		st.mu.Lock()
		gate := st.resumed
		st.mu.Unlock()
		if gate != nil {
			<-gate
		}
		r, err := st.s.Recv()
		st.mu.Lock()
		if err != nil {
			st.ended, st.endErr = true, err
		} else {
			st.check(r)
			st.buf = append(st.buf, r)
		}
		close(st.changed)
		st.changed = make(chan struct{})
		st.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (st *stream) send(c *computepb.Command) error {
	st.mu.Lock()
	if u := c.GetCancelPeek().GetUuid(); u != "" {
		st.cancelled[u] = true
	}
	st.mu.Unlock()
	if err := st.s.Send(c); err != nil {
		return fmt.Errorf("process %d: send %s: %w", st.proc, protocol.CommandKind(c), err)
	}
	return nil
}

// pause stops receiving (after a Recv already under way).
func (st *stream) pause() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.resumed == nil {
		st.resumed = make(chan struct{})
	}
}

// resume receives again.
func (st *stream) resume() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.resumed != nil {
		close(st.resumed)
		st.resumed = nil
	}
}

func (st *stream) close() {
	st.resume()
	_ = st.s.CloseSend()
	st.cancel()
	st.cc.Close()
}

// check records invariant violations of r; st.mu is held.
func (st *stream) check(r *computepb.Response) {
	fail := func(format string, args ...any) {
		st.violations = append(st.violations, fmt.Sprintf("process %d: ", st.proc)+fmt.Sprintf(format, args...))
	}
	switch k := r.GetKind().(type) {
	case *computepb.Response_Frontiers:
		f := k.Frontiers
		id := printID(f.GetId())
		if id == "" {
			fail("frontiers without a valid id: %v", f.GetId())
			return
		}
		last := st.frontiers[id]
		seen := st.reported[id]
		if last == nil {
			last, seen = &[3]frontier.Frontier{}, &[3]bool{}
			st.frontiers[id], st.reported[id] = last, seen
		}
		for i, p := range []*computepb.Frontier{f.GetWrite(), f.GetInput(), f.GetOutput()} {
			if p == nil {
				continue
			}
			next := protocol.FrontierFromProto(p)
			if seen[i] && next.LessEqual(last[i]) {
				fail("frontier %d of %s did not advance: %s after %s", i, id, next, last[i])
			}
			last[i], seen[i] = next, true
		}
	case *computepb.Response_PeekResponse:
		p := k.PeekResponse
		uuid := p.GetUuid()
		if st.terminal[uuid] {
			fail("second response for peek %s: %v", uuid, p)
			return
		}
		switch res := p.GetResult().(type) {
		case *computepb.PeekResponse_Stashed:
			if want := st.stashSeq[uuid]; res.Stashed.GetSequence() != want {
				fail("peek %s: stashed chunk %d, want %d", uuid, res.Stashed.GetSequence(), want)
			}
			st.stashSeq[uuid]++
			st.terminal[uuid] = res.Stashed.GetFinal()
		case *computepb.PeekResponse_Canceled:
			if !st.cancelled[uuid] {
				fail("peek %s canceled without a CancelPeek", uuid)
			}
			st.terminal[uuid] = true
		default:
			st.terminal[uuid] = true
		}
	}
}

// take waits until a buffered response satisfies match, removes it and
// returns it.
func (st *stream) take(ctx context.Context, what string, match func(*computepb.Response) bool) (*computepb.Response, error) {
	for {
		st.mu.Lock()
		for i, r := range st.buf {
			if match(r) {
				st.buf = append(st.buf[:i:i], st.buf[i+1:]...)
				st.mu.Unlock()
				return r, nil
			}
		}
		ended, endErr, changed := st.ended, st.endErr, st.changed
		st.mu.Unlock()
		if ended {
			return nil, fmt.Errorf("process %d: stream ended (%v) while waiting for %s", st.proc, endErr, what)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("process %d: timed out waiting for %s; unconsumed: %s", st.proc, what, st.pending())
		}
	}
}

// waitEnd waits for the stream to end and returns its error.
func (st *stream) waitEnd(ctx context.Context) (error, bool) {
	for {
		st.mu.Lock()
		ended, endErr, changed := st.ended, st.endErr, st.changed
		st.mu.Unlock()
		if ended {
			return endErr, true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// pending summarizes unconsumed responses for error messages.
func (st *stream) pending() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	const most = 8
	s := ""
	n := 0
	for i := len(st.buf) - 1; i >= 0 && n < most; i-- {
		if st.buf[i].GetFrontiers() != nil {
			continue
		}
		s = fmt.Sprintf("%v; ", st.buf[i]) + s
		n++
	}
	return fmt.Sprintf("[%s] (+frontier reports)", s)
}

func (st *stream) takeViolations() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	v := st.violations
	st.violations = nil
	return v
}

// waitQuiet waits d and reports whether any buffered response matches.
func (st *stream) anyWithin(d time.Duration, match func(*computepb.Response) bool) *computepb.Response {
	time.Sleep(d)
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, r := range st.buf {
		if match(r) {
			return r
		}
	}
	return nil
}

// drain removes and returns every buffered response that matches.
func (st *stream) drain(match func(*computepb.Response) bool) []*computepb.Response {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*computepb.Response
	kept := st.buf[:0]
	for _, r := range st.buf {
		if match(r) {
			out = append(out, r)
		} else {
			kept = append(kept, r)
		}
	}
	st.buf = kept
	return out
}
