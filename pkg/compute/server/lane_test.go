package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/peeklane"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// testLane is the controller's end of a lane to the harness's server.
type testLane struct {
	t    *testing.T
	cl   *peeklane.Client
	resp chan *computepb.Response
}

// serveLanes serves the harness's server's lanes on a unix socket.
func (h *harness) serveLanes() string {
	h.t.Helper()
	lis, addr, cleanup, err := peeklane.ListenUnix(h.t.TempDir())
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = peeklane.Serve(ctx, lis, peeklane.ServeConfig{SameUser: true}, h.srv.AttachLane)
	}()
	h.t.Cleanup(func() { cancel(); wg.Wait(); cleanup() })
	return addr
}

func (h *harness) dialLane(addr, nonce string) *testLane {
	h.t.Helper()
	network, address, err := peeklane.Resolve(addr, "")
	if err != nil {
		h.t.Fatal(err)
	}
	l := &testLane{t: h.t, resp: make(chan *computepb.Response, 64)}
	l.cl, err = peeklane.Dialer{}.Dial(context.Background(), network, address, nonce, func(r *computepb.Response) { l.resp <- r })
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(l.cl.Close)
	return l
}

func (l *testLane) recv() *computepb.Response {
	l.t.Helper()
	select {
	case r := <-l.resp:
		return r
	case <-time.After(5 * time.Second):
		l.t.Fatal("no response on the lane within 5s")
	}
	return nil
}

func (l *testLane) expectNone() {
	l.t.Helper()
	select {
	case r := <-l.resp:
		l.t.Fatalf("unexpected response on the lane %v", r)
	case <-time.After(50 * time.Millisecond):
	}
}

func (l *testLane) down() {
	l.t.Helper()
	select {
	case <-l.cl.Done():
	case <-time.After(5 * time.Second):
		l.t.Fatal("the lane stayed up")
	}
}

var laneRows = []row.RowCount{{Row: row.Pack(row.Int64(1)), Count: 1}}

// laneReady opens connection n1 with df1 and a lane attached to it.
func (h *harness) laneReady() (*stream, *testLane) {
	h.t.Helper()
	s := h.ready("n1", &computepb.CreateInstance{}, df1)
	h.rt.expect(h.t, "create d1")
	return s, h.dialLane(h.serveLanes(), "n1")
}

// wantRows checks that r answers uuid with rows.
func wantRows(t *testing.T, r *computepb.Response, uuid string) {
	t.Helper()
	if p := r.GetPeekResponse(); p.GetUuid() != uuid || len(p.GetRows().GetRows()) == 0 {
		t.Fatalf("got %v, want the rows of %s", r, uuid)
	}
}

func TestLanePeekIsAnsweredOnTheLane(t *testing.T) {
	h := newHarness(t)
	s, l := h.laneReady()

	l.cl.Send(peekCmd(uuidN(1), "u1", 6))
	h.rt.expect(t, "peek "+uuidN(1))
	h.srv.Deliver(&PeekResult{UUID: uuidN(1), Rows: laneRows})
	wantRows(t, l.recv(), uuidN(1))
	// A cancel on the lane of a pending lane peek: canceled, on the lane.
	l.cl.Send(peekCmd(uuidN(2), "u1", 6))
	l.cl.Send(cancelPeek(uuidN(2)))
	h.rt.expect(t, "peek "+uuidN(2), "cancel "+uuidN(2))
	if l.recv().GetPeekResponse().GetCanceled() == nil {
		t.Fatal("want canceled on the lane")
	}
	// The replica's checks apply on the lane: a peek before the since.
	l.cl.Send(peekCmd(uuidN(3), "u1", 2))
	peekError(t, l.recv(), CodeReadOutOfRange)
	s.expectNone()
}

// TestLanePeekSentAgainOnTheStreamIsAnsweredOnce: the controller sends a
// peek again on the stream when the lane it took broke on its side; the
// replica, whose end may not know yet, answers once, on the stream.
func TestLanePeekSentAgainOnTheStreamIsAnsweredOnce(t *testing.T) {
	h := newHarness(t)
	s, l := h.laneReady()

	l.cl.Send(peekCmd(uuidN(1), "u1", 6))
	h.rt.expect(t, "peek "+uuidN(1))
	s.send(peekCmd(uuidN(1), "u1", 6))
	h.rt.expectNone(t)
	h.srv.Deliver(&PeekResult{UUID: uuidN(1), Rows: laneRows})
	wantRows(t, s.recv(), uuidN(1))
	s.expectNone()
	l.expectNone()

	// A lane that went down: its pending peeks answer on the stream.
	l.cl.Send(peekCmd(uuidN(2), "u1", 6))
	h.rt.expect(t, "peek "+uuidN(2))
	l.cl.Close()
	s.send(peekCmd(uuidN(2), "u1", 6))
	h.rt.expectNone(t)
	h.srv.Deliver(&PeekResult{UUID: uuidN(2), Rows: laneRows})
	wantRows(t, s.recv(), uuidN(2))
	s.expectNone()
}

func TestLaneRefusesAStaleNonce(t *testing.T) {
	h := newHarness(t)
	s := h.ready("n1", &computepb.CreateInstance{}, df1)
	h.rt.expect(t, "create d1")
	addr := h.serveLanes()

	stale := h.dialLane(addr, "n0")
	stale.cl.Send(peekCmd(uuidN(1), "u1", 6))
	stale.down()
	h.rt.expectNone(t)

	// A lane of the current connection ends when a newer one replaces it.
	l := h.dialLane(addr, "n1")
	l.cl.Send(peekCmd(uuidN(2), "u1", 6))
	h.rt.expect(t, "peek "+uuidN(2))
	h.open("n2")
	l.down()
	if err := s.ended(); err == nil {
		t.Fatal("the superseded stream ended without an error")
	}
}

func TestLaneCarriesPeeksOnly(t *testing.T) {
	h := newHarness(t)
	s, l := h.laneReady()
	l.cl.Send(allowCompaction("u1", frontier.At(7)))
	commandError(t, s.recv(), CodeProtocolViolation)
	h.rt.expectNone(t)
}

// fakeLaneOut is a lane's sending end that records what it is given.
type fakeLaneOut struct {
	mu   sync.Mutex
	sent []*computepb.Response
}

func (f *fakeLaneOut) Send(r *computepb.Response) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, r)
	return true
}

func (f *fakeLaneOut) Close() {}

// TestLaneReaderNeverWaitsForTheLoop: a lane's commands are queued for the
// loop, so its reader goes back to its socket while the loop is busy, and
// the loop handles them, and then the lane's close, in order once free.
func TestLaneReaderNeverWaitsForTheLoop(t *testing.T) {
	h := newHarness(t)
	s := h.ready("n1", &computepb.CreateInstance{}, df1)
	h.rt.expect(t, "create d1")
	out := &fakeLaneOut{}
	recv, detach, err := h.srv.attachLane("n1", out)
	if err != nil {
		t.Fatal(err)
	}
	// Hold the loop: it answers this attach on an unbuffered channel
	// nobody reads until the commands below were handed over.
	hold := make(chan error)
	h.srv.requests <- request{lane: &lane{nonce: "n1"}, connect: hold}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 3; i++ {
			recv(peekCmd(uuidN(i), "u1", 6))
		}
		detach()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		<-hold
		t.Fatal("the lane's reader waited for a busy loop")
	}
	h.rt.expectNone(t)
	<-hold
	h.rt.expect(t, "peek "+uuidN(1), "peek "+uuidN(2), "peek "+uuidN(3))
	// The close came after the peeks: their answers take the stream.
	h.srv.Deliver(&PeekResult{UUID: uuidN(1), Rows: laneRows})
	wantRows(t, s.recv(), uuidN(1))
	out.mu.Lock()
	defer out.mu.Unlock()
	if len(out.sent) != 0 {
		t.Fatalf("answered on a closed lane: %v", out.sent)
	}
}
