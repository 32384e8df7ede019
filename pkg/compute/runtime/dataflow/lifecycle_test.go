package dataflow

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// pipelineFixture: two feeds unioned into one probe operator on W workers.
type pipelineFixture struct {
	ws      *Workers
	feeds   [2]*feed
	probeFs chan frontier.Frontier
	steps   atomic.Int64
	dropped chan struct{}
}

func newPipeline(t *testing.T) *pipelineFixture {
	t.Helper()
	fx := &pipelineFixture{probeFs: make(chan frontier.Frontier, 100), dropped: make(chan struct{}, 1)}
	ws, err := New(Config{Workers: 1, ObserveStep: func(int, time.Duration) { fx.steps.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	fx.ws = ws
	built := make(chan error, 1)
	ws.Install("union", func(b *Builder) error {
		var conns []Connection
		for i := range fx.feeds {
			f := &feed{upper: frontier.Minimum()}
			op := b.AddOperator("feed", nil, 1, f)
			f.act = op.Activator()
			fx.feeds[i] = f
			conns = append(conns, Connection{From: op.Stream(0)})
		}
		var last frontier.Frontier
		b.AddOperator("probe", conns, 0, LogicFunc(func(op *Operator) {
			if f := op.InputFrontier(); f != last {
				last = f
				fx.probeFs <- f
			}
		}))
		b.OnDrop(func() { fx.dropped <- struct{}{} })
		return nil
	}, func(_ *Worker, err error) { built <- err })
	ctx, cancel := context.WithCancel(context.Background())
	ws.Start(ctx)
	t.Cleanup(func() { cancel(); ws.Stop() })
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	return fx
}

func (fx *pipelineFixture) next(t *testing.T) frontier.Frontier {
	t.Helper()
	select {
	case f := <-fx.probeFs:
		return f
	case <-time.After(5 * time.Second):
		t.Fatal("no frontier change")
		return frontier.Frontier{}
	}
}

func TestFrontierIsMeetOfInputs(t *testing.T) {
	fx := newPipeline(t)
	fx.feeds[0].push(nil, frontier.At(10))
	fx.feeds[1].push(nil, frontier.At(4))
	if f := fx.next(t); f != frontier.At(4) {
		t.Fatalf("got %v, want [4]", f)
	}
	fx.feeds[1].push(nil, frontier.Closed())
	if f := fx.next(t); f != frontier.At(10) {
		t.Fatalf("got %v, want [10] (held by the slower input)", f)
	}
	fx.feeds[0].push(nil, frontier.Closed())
	if f := fx.next(t); !f.IsClosed() {
		t.Fatalf("got %v, want closed", f)
	}
}

func TestIdleWorkerParks(t *testing.T) {
	fx := newPipeline(t)
	fx.feeds[0].push(nil, frontier.At(1))
	fx.feeds[1].push(nil, frontier.At(1))
	fx.next(t)
	// The worker may still be finishing the steps that followed the
	// frontier change (slowly, on a loaded machine): wait until no step
	// happens for 100ms. A worker that never parks never gets there.
	deadline := time.Now().Add(30 * time.Second)
	for before := fx.steps.Load(); ; {
		time.Sleep(100 * time.Millisecond)
		after := fx.steps.Load()
		if after == before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("idle worker still stepping after 30s (%d steps in the last 100ms)", after-before)
		}
		before = after
	}
	fx.feeds[0].push(nil, frontier.At(2))
	fx.feeds[1].push(nil, frontier.At(2))
	if f := fx.next(t); f != frontier.At(2) {
		t.Fatalf("got %v after wake", f)
	}
}

func TestDropRunsHooksAndDiscardsLateMessages(t *testing.T) {
	fx := newPipeline(t)
	fx.ws.Drop(1)
	select {
	case <-fx.dropped:
	case <-time.After(5 * time.Second):
		t.Fatal("drop hook did not run")
	}
	// Activations after the drop are ignored, not buffered forever.
	fx.feeds[0].push(nil, frontier.At(3))
	done := make(chan struct{})
	fx.ws.Broadcast(func(w *Worker) {
		if len(w.early) != 0 || w.Dataflows() != 0 {
			t.Errorf("worker kept %d early messages, %d dataflows", len(w.early), w.Dataflows())
		}
		close(done)
	})
	<-done
	if !fx.feeds[0].dropped || !fx.feeds[1].dropped {
		t.Fatal("operator Drop not called")
	}
}

func TestBuildErrorIsReportedAndDiscarded(t *testing.T) {
	ws, err := New(Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ws.Start(ctx)
	defer func() { cancel(); ws.Stop() }()
	var mu sync.Mutex
	var errs []error
	done := make(chan struct{}, 2)
	boom := errors.New("boom")
	ws.Install("bad", func(b *Builder) error { return boom }, func(_ *Worker, err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		done <- struct{}{}
	})
	<-done
	<-done
	for _, err := range errs {
		if !errors.Is(err, boom) {
			t.Fatalf("got %v", err)
		}
	}
}

func TestFabricFailureIsFatal(t *testing.T) {
	fabrics := NewLocalFabrics(2)
	fatal := make(chan error, 1)
	var procs []*Workers
	for i := 0; i < 2; i++ {
		ws, err := New(Config{Workers: 1, Processes: 2, Process: i, Fabric: fabrics[i], OnFatal: func(err error) { fatal <- err }})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, ws)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		for _, ws := range procs {
			ws.Stop()
		}
	}()
	fabrics[0].Close()
	for _, ws := range procs {
		ws.Install("x", func(b *Builder) error {
			src := b.AddOperator("src", nil, 1, LogicFunc(func(op *Operator) { op.SetHold(frontier.Closed()) }))
			b.AddOperator("sink", []Connection{{From: src.Stream(0), Exchange: keyHash}}, 0, LogicFunc(func(*Operator) {}))
			return nil
		}, nil)
		ws.Start(ctx)
	}
	select {
	case err := <-fatal:
		if !errors.Is(err, ErrFabricClosed) {
			t.Fatalf("got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no fatal error after the fabric closed")
	}
}

func TestWireRoundTrip(t *testing.T) {
	for _, m := range []wireMessage{
		{kind: wireFrontier, target: 3, from: 1, seq: 7, op: 2, port: 1, front: frontier.At(99)},
		{kind: wireFrontier, target: 0, from: 5, seq: 1, front: frontier.Closed()},
		{kind: wireData, target: 2, from: 0, seq: 9, op: 4, updates: []Update{{Key: []byte("k"), Val: []byte("vv"), Time: 5, Diff: -3}, {Time: frontier.MaxTime, Diff: 1}}},
	} {
		b := m.encode(nil)
		got, err := decodeWire(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.kind != m.kind || got.target != m.target || got.from != m.from || got.seq != m.seq || got.op != m.op || got.port != m.port || got.front != m.front || len(got.updates) != len(m.updates) {
			t.Fatalf("round trip: got %+v want %+v", got, m)
		}
		for i := range m.updates {
			a, b := got.updates[i], m.updates[i]
			if string(a.Key) != string(b.Key) || string(a.Val) != string(b.Val) || a.Time != b.Time || a.Diff != b.Diff {
				t.Fatalf("update %d: got %+v want %+v", i, a, b)
			}
		}
		for cut := 0; cut < len(b); cut++ {
			if _, err := decodeWire(b[:cut]); err == nil {
				t.Fatalf("truncated message (%d of %d bytes) decoded", cut, len(b))
			}
		}
	}
}

func FuzzDecodeWire(f *testing.F) {
	f.Add((&wireMessage{kind: wireData, updates: []Update{{Key: []byte("a"), Diff: 1}}}).encode(nil))
	f.Add((&wireMessage{kind: wireFrontier, front: frontier.At(3)}).encode(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeWire(b)
		if err != nil {
			return
		}
		again, err := decodeWire(m.encode(nil))
		if err != nil || again.kind != m.kind || len(again.updates) != len(m.updates) {
			t.Fatalf("re-encode of a decoded message failed: %v", err)
		}
	})
}
