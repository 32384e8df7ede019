package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// loadIndex builds indexDesc over n rows and returns a readable time.
func loadIndex(t *testing.T, h *runtimetest.Harness, n int) frontier.Time {
	t.Helper()
	tbl := h.Table(src)
	h.MustCreate(indexDesc(0))
	var ups []dataflow.Update
	for k := range int64(n) {
		ups = append(ups, kv(k, k%7+1, 1, 1))
	}
	if err := tbl.Append(ups, frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	return 4
}

func configure(t *testing.T, h *runtimetest.Harness, params map[string]string) {
	t.Helper()
	for _, rt := range h.RTs {
		if err := rt.UpdateConfiguration(params); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStreamedPeekMatchesMaterialised: with a small stash threshold a
// streamable scan arrives as a stream of chunks, and its rows are those of
// the materialised answer, in every shape and walk mode.
func TestStreamedPeekMatchesMaterialised(t *testing.T) {
	for _, o := range shapes() {
		for _, mode := range []string{"inline", "budgeted", "offload"} {
			t.Run(name(o)+"/"+mode, func(t *testing.T) {
				h := runtimetest.New(t, o)
				at := loadIndex(t, h, 3000)
				want, err := h.Peek(index, at, nil)
				if err != nil {
					t.Fatal(err)
				}
				configure(t, h, map[string]string{"peek_stash_threshold": "512", "peek_walk_mode": mode, "peek_walk_budget": "100"})
				uuid := h.StartPeek(index, at, &runtimetest.PeekRequest{Streamable: true})
				got, err := h.AwaitPeek(uuid)
				if err != nil {
					t.Fatal(err)
				}
				if show(got) != show(want) {
					t.Fatalf("streamed %d rows differ from materialised %d rows", len(got), len(want))
				}
				streams := 0
				for _, r := range h.PeekResponses(uuid) {
					if r.Stream != nil {
						streams++
					}
				}
				if streams != o.Processes && !(o.Processes == 0 && streams == 1) {
					t.Fatalf("%d of the responses were streams", streams)
				}
				// Not streamable: one materialised answer, however large.
				uuid = h.StartPeek(index, at, nil)
				if _, err := h.AwaitPeek(uuid); err != nil {
					t.Fatal(err)
				}
				for _, r := range h.PeekResponses(uuid) {
					if r.Stream != nil {
						t.Fatal("a peek that is not streamable was streamed")
					}
				}
			})
		}
	}
}

// streamOf waits for the one response of uuid and returns its stream.
func streamOf(t testing.TB, h *runtimetest.Harness, uuid string) *runtime.PeekStream {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if rs := h.PeekResponses(uuid); len(rs) > 0 {
			if len(rs) != 1 || rs[0].Stream == nil {
				t.Fatalf("responses %+v; want one stream", rs)
			}
			return rs[0].Stream
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no response")
	return nil
}

// TestStreamBackpressureAndCancel: nobody reads the stream, so the walks
// park after a bounded number of chunks; a CancelPeek then ends the stream
// with context.Canceled, produces no second response, and the parked walks
// end (goleak checks no goroutine is left).
func TestStreamBackpressureAndCancel(t *testing.T) {
	const workers = 2
	h := runtimetest.New(t, runtimetest.Options{Workers: workers})
	at := loadIndex(t, h, 20000)
	configure(t, h, map[string]string{"peek_stash_threshold": "256", "peek_walk_mode": "offload"})
	uuid := h.StartPeek(index, at, &runtimetest.PeekRequest{Streamable: true})
	s := streamOf(t, h, uuid)
	// Wait for the first chunk (the walks may be slow to start on a loaded
	// machine), then give them time to run into the full buffer again.
	// Buffered: at most 2 chunks per worker, plus one per parked walk and
	// the first one taken (the walks are far from done, so no final parts).
	taken := 0
	for deadline := time.Now().Add(30 * time.Second); taken == 0; {
		_, ok, err := s.TryNext()
		if err != nil {
			t.Fatalf("stream ended early: %v", err)
		}
		if ok {
			taken++
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no chunk in 30s")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the walks run into the full buffer
	// Count without taking: taking a chunk resumes the parked walks, which
	// refill the buffer while it is being counted.
	taken += s.Len()
	if taken > 2*workers+workers {
		t.Fatalf("%d chunks produced for a consumer that took one; want 1..%d", taken, 3*workers)
	}
	for _, rt := range h.RTs {
		rt.CancelPeek(uuid)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, _, err := s.TryNext()
		if errors.Is(err, context.Canceled) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream not ended by the cancel: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(h.PeekResponses(uuid)); n != 1 {
		t.Fatalf("%d responses; want exactly one", n)
	}
}

// TestStreamResultTooLarge: the size bound covers chunks already handed
// over: the stream ends with the error.
func TestStreamResultTooLarge(t *testing.T) {
	h := runtimetest.New(t, runtimetest.Options{Workers: 2, MaxResultBytes: 4000})
	at := loadIndex(t, h, 3000)
	configure(t, h, map[string]string{"peek_stash_threshold": "256"})
	_, err := h.AwaitPeek(h.StartPeek(index, at, &runtimetest.PeekRequest{Streamable: true}))
	if err == nil {
		t.Fatal("a streamed result above the maximum succeeded")
	}
}

// TestTopKPeek: an ordered peek with a limit returns, in every shape, at
// least the rows the order and limit select (each worker keeps its own
// top k), and at most k per worker.
func TestTopKPeek(t *testing.T) {
	for _, o := range shapes() {
		t.Run(name(o), func(t *testing.T) {
			h := runtimetest.New(t, o)
			at := loadIndex(t, h, 2000)
			order := []plan.ColumnOrder{{Column: 0, Desc: true}}
			rows, err := h.Peek(index, at, &runtimetest.PeekRequest{TopK: &peek.TopK{Limit: 5, Order: order}})
			if err != nil {
				t.Fatal(err)
			}
			workers := max(o.Workers, 1) * max(o.Processes, 1)
			if len(rows) < 5 || len(rows) > 5*workers {
				t.Fatalf("%d rows from %d workers with limit 5", len(rows), workers)
			}
			keys := map[int64]bool{}
			for _, rc := range rows {
				ds, err := rc.Row.Unpack()
				if err != nil {
					t.Fatal(err)
				}
				keys[ds[0].Int64()] = true
			}
			for k := int64(1995); k < 2000; k++ {
				if !keys[k] {
					t.Fatalf("top-5 key %d missing from %v", k, show(rows))
				}
			}
		})
	}
}
