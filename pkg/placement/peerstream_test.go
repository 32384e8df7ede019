package placement

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/trace"
	"github.com/tandemdb/tandem/pkg/sharing"
)

// streamFixture is a peer index published by hand on every worker: worker
// w holds rows (k, k%7) for k in [w*n, (w+1)*n) at time 0, sealed to 6.
type streamFixture struct {
	in   *Interactive
	col  *collector
	id   plan.GlobalID
	oks  []*trace.Trace
	owns []*trace.Handle
	pubs []runtime.Publication
}

func newStreamFixture(t *testing.T, workers, n int, cfg InteractiveConfig) *streamFixture {
	t.Helper()
	reg := sharing.NewRegistry()
	f := &streamFixture{col: &collector{ch: make(chan *runtime.PeekResponse, 64)}, id: plan.User(21)}
	cfg.Registry, cfg.Workers, cfg.Respond = reg, workers, f.col.respond
	f.in = newTestInteractive(t, cfg, &nullTarget{})
	t.Cleanup(f.in.Close)
	maint := newTestMaintenance(t, reg, &nullTarget{})
	desc := plan.DataflowDescription{ID: f.id, IndexExports: []plan.IndexExport{{ID: f.id}}, Class: plan.ClassMaintained, AsOf: frontier.At(0)}
	if err := maint.CreateDataflow(desc); err != nil {
		t.Fatal(err)
	}
	if err := f.in.CreateDataflow(desc); err != nil {
		t.Fatal(err)
	}
	for w := range workers {
		ok, errs := trace.New(frontier.Minimum()), trace.New(frontier.Minimum())
		own := ok.NewHandle("export")
		t.Cleanup(func() { own.Release() })
		pub, err := maint.Publish(f.id, w, ok, errs)
		if err != nil {
			t.Fatal(err)
		}
		var kvs []int64
		for k := w * n; k < (w+1)*n; k++ {
			kvs = append(kvs, int64(k), int64(k%7))
		}
		insertRows(t, ok, 0, 2, kvs...)
		sealEmpty(t, ok, 2, 6)
		sealEmpty(t, errs, 0, 6)
		if err := pub.Refresh(); err != nil {
			t.Fatal(err)
		}
		f.oks, f.owns, f.pubs = append(f.oks, ok), append(f.owns, own), append(f.pubs, pub)
	}
	return f
}

// drain reads a stream to its end: its chunks and the error that ended it
// (nil for io.EOF).
func drain(t *testing.T, s *runtime.PeekStream) ([][]peek.RowCount, error) {
	t.Helper()
	wake := make(chan struct{}, 1)
	s.Notify(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	var chunks [][]peek.RowCount
	for {
		rows, ok, err := s.TryNext()
		switch {
		case errors.Is(err, io.EOF):
			return chunks, nil
		case err != nil:
			return chunks, err
		case ok:
			chunks = append(chunks, rows)
			continue
		}
		select {
		case <-wake:
		case <-time.After(10 * time.Second):
			t.Fatal("stream stalled")
		}
	}
}

// takeOne waits for the stream's first chunk and takes it.
func takeOne(t *testing.T, s *runtime.PeekStream) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, ok, err := s.TryNext()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no first chunk")
		}
		time.Sleep(time.Millisecond)
	}
}

func multiset(chunks ...[]peek.RowCount) map[string]int64 {
	m := map[string]int64{}
	for _, c := range chunks {
		for _, r := range c {
			m[string(r.Row)] += r.Count
		}
	}
	return m
}

// TestPeerPeekStreamsLargeResult: a streamable peer peek whose result
// exceeds the stash threshold is answered with a stream whose chunks add up
// to the materialised answer of the same peek; one within a chunk is
// answered with rows as before.
func TestPeerPeekStreamsLargeResult(t *testing.T) {
	const workers, n = 2, 300
	var every3rd [][]byte
	for k := range workers * n {
		if k%3 == 0 {
			every3rd = append(every3rd, row.Pack(row.Int64(int64(k))))
		}
	}
	mfp := expr.Identity(2).Filter(expr.Gt(expr.Column(1), expr.Literal(row.Int64(2)))).Project(0)
	for _, tc := range []struct {
		name   string
		peek   runtime.Peek
		stream bool
	}{
		{name: "all", peek: runtime.Peek{}, stream: true},
		{name: "keys", peek: runtime.Peek{Keys: every3rd}, stream: true},
		{name: "mfp", peek: runtime.Peek{MFP: &mfp}, stream: true},
		{name: "keys and mfp", peek: runtime.Peek{Keys: every3rd, MFP: &mfp}, stream: true},
		{name: "small", peek: runtime.Peek{Keys: every3rd[:3]}, stream: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newStreamFixture(t, workers, n, InteractiveConfig{StashThreshold: 256})
			p := tc.peek
			p.Target, p.Timestamp = f.id, 1
			p.UUID = "rows"
			f.in.Peek(p)
			want := f.col.next(t)
			if want.Error != nil || want.Stream != nil {
				t.Fatalf("materialised peek: %+v", want)
			}
			p.UUID, p.Streamable = "stream", true
			f.in.Peek(p)
			got := f.col.next(t)
			if got.Error != nil || got.Canceled {
				t.Fatalf("streamed peek: %+v", got)
			}
			if (got.Stream != nil) != tc.stream {
				t.Fatalf("stream %v, want %v", got.Stream != nil, tc.stream)
			}
			chunks := [][]peek.RowCount{got.Rows}
			if got.Stream != nil {
				var err error
				if chunks, err = drain(t, got.Stream); err != nil {
					t.Fatal(err)
				}
				if len(chunks) < 4 {
					t.Fatalf("%d chunks for a result of many thresholds", len(chunks))
				}
			}
			if g, w := multiset(chunks...), multiset(want.Rows); fmt.Sprint(g) != fmt.Sprint(w) || len(w) == 0 {
				t.Fatalf("streamed %d distinct rows, materialised %d; differ", len(g), len(w))
			}
			assertQuiet(t, f.col)
		})
	}
}

// assertQuiet fails if another response arrives: each peek has one.
func assertQuiet(t *testing.T, col *collector) {
	t.Helper()
	select {
	case p := <-col.ch:
		t.Fatalf("second response: %+v", p)
	case <-time.After(20 * time.Millisecond):
	}
}

// TestPeerPeekStreamBackpressure: with a consumer that takes nothing, the
// peer walk parks once the stream's buffer is full instead of reading the
// whole result into memory; it resumes as the consumer drains.
func TestPeerPeekStreamBackpressure(t *testing.T) {
	f := newStreamFixture(t, 1, 2000, InteractiveConfig{StashThreshold: 128})
	f.in.Peek(runtime.Peek{UUID: "s", Target: f.id, Timestamp: 1, Streamable: true})
	resp := f.col.next(t)
	if resp.Stream == nil {
		t.Fatalf("want a stream, got %+v", resp)
	}
	for deadline := time.Now().Add(10 * time.Second); resp.Stream.Len() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no chunk buffered")
		}
	}
	time.Sleep(100 * time.Millisecond) // the producer runs ahead as far as it may
	if got := resp.Stream.Len(); got > peerStreamChunks {
		t.Fatalf("%d chunks buffered for a consumer that took none, want at most %d", got, peerStreamChunks)
	}
	chunks, err := drain(t, resp.Stream)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) <= 4*peerStreamChunks {
		t.Fatalf("only %d chunks: the result does not test the bound", len(chunks))
	}
	if got := len(multiset(chunks...)); got != 2000 {
		t.Fatalf("%d distinct rows, want 2000", got)
	}
}

// TestPeerPeekStreamCanceled: a cancel (or the consumer closing the
// stream) mid-stream ends the stream with Canceled and no other response,
// releases the reader holds (the publisher compacts past the peek's time
// afterwards, not before) and leaves no goroutine behind.
func TestPeerPeekStreamCanceled(t *testing.T) {
	for _, byConsumer := range []bool{false, true} {
		t.Run(fmt.Sprint("by consumer ", byConsumer), func(t *testing.T) {
			f := newStreamFixture(t, 2, 1000, InteractiveConfig{StashThreshold: 128})
			baseline := goleak.IgnoreCurrent()
			f.in.Peek(runtime.Peek{UUID: "s", Target: f.id, Timestamp: 1, Streamable: true})
			resp := f.col.next(t)
			if resp.Stream == nil {
				t.Fatalf("want a stream, got %+v", resp)
			}
			takeOne(t, resp.Stream)
			// The walk is parked on the full buffer holding worker 0 at 1.
			if err := f.in.AllowCompaction(f.id, frontier.At(5)); err != nil {
				t.Fatal(err)
			}
			compact := func() {
				t.Helper()
				for w, pub := range f.pubs {
					if err := f.owns[w].SetLogical(frontier.At(5)); err != nil {
						t.Fatal(err)
					}
					if err := pub.Compact(frontier.At(5)); err != nil {
						t.Fatal(err)
					}
					if err := pub.Refresh(); err != nil {
						t.Fatal(err)
					}
				}
			}
			compact()
			if got := f.oks[0].Since(); got != frontier.At(1) {
				t.Fatalf("since %v while the stream reads at 1", got)
			}
			if byConsumer {
				resp.Stream.Close()
			} else {
				f.in.CancelPeek("s")
				if _, err := drain(t, resp.Stream); !errors.Is(err, context.Canceled) {
					t.Fatalf("stream ended with %v, want Canceled", err)
				}
			}
			goleak.VerifyNone(t, baseline)
			compact()
			for w, ok := range f.oks {
				if got := ok.Since(); got != frontier.At(5) {
					t.Fatalf("worker %d: since %v after the cancel, want [5]", w, got)
				}
			}
			assertQuiet(t, f.col)
		})
	}
}

// TestPeerPeekStreamTooLarge: the result size bound, hit after the stream
// went out, ends the stream with the error.
func TestPeerPeekStreamTooLarge(t *testing.T) {
	f := newStreamFixture(t, 1, 1000, InteractiveConfig{StashThreshold: 128, MaxResultBytes: 4096})
	f.in.Peek(runtime.Peek{UUID: "s", Target: f.id, Timestamp: 1, Streamable: true})
	resp := f.col.next(t)
	if resp.Stream == nil {
		t.Fatalf("want a stream, got %+v", resp)
	}
	chunks, err := drain(t, resp.Stream)
	if !errors.Is(err, peek.ErrResultTooLarge) {
		t.Fatalf("stream ended with %v after %d chunks, want ErrResultTooLarge", err, len(chunks))
	}
	assertQuiet(t, f.col)
}
