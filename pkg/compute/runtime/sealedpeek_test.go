package runtime_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// holdWorkers creates a dataflow whose source holds every worker inside
// its step until the gate is released, and waits until the first worker is
// held.
func holdWorkers(t *testing.T, h *runtimetest.Harness, g *gate) {
	t.Helper()
	gated := plan.User(20)
	h.MustCreate(plan.DataflowDescription{
		ID: plan.Transient(2), DebugName: "gated", Class: plan.ClassMaintained,
		SourceImports: []plan.SourceImport{{ID: gated, Desc: kvDesc, Connection: plan.SourceConnection{Kind: plan.SourceLoadGen}}},
		IndexExports:  []plan.IndexExport{{ID: plan.User(21), On: gated, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:          frontier.At(0), Until: frontier.Closed(),
	})
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a worker to enter the long step")
	}
}

// TestSealedPointPeekIsServedDuringAStep checks that a point read whose
// time is already sealed in every shard of its index is answered while
// the workers are inside a long step (another dataflow's source holds
// them and is never released during the test), and that a scan, which the
// workers serve, is not. Served by the workers, the point read waits for
// the step to end and the test times out.
func TestSealedPointPeekIsServedDuringAStep(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("W%d", workers), func(t *testing.T) {
			g := newGate()
			h := runtimetest.New(t, runtimetest.Options{Workers: workers, Timeout: 5 * time.Second,
				Sources: render.SourceKinds{plan.SourceLoadGen: g}})
			t.Cleanup(g.close)
			tbl := h.Table(src)
			h.MustCreate(indexDesc(0))
			if err := tbl.Append([]dataflow.Update{kv(1, 10, 1, 1), kv(2, 20, 2, 1)}, frontier.At(5)); err != nil {
				t.Fatal(err)
			}
			if err := h.WaitFrontier(index, frontier.At(5)); err != nil {
				t.Fatal(err)
			}
			holdWorkers(t, h, g)
			before := h.RTs[0].SealedPeeks()
			scan := h.StartPeek(index, 4, nil)
			rows, err := h.Peek(index, 4, &runtimetest.PeekRequest{Keys: [][]byte{row.Pack(row.Int64(2))}})
			if err != nil {
				t.Fatalf("sealed point read during a step: %v", err)
			}
			if got, want := show(rows), "(2, 20, 5) x1"; got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
			if n := h.RTs[0].SealedPeeks() - before; n != 1 {
				t.Fatalf("SealedPeeks grew by %d, want 1", n)
			}
			if rs := h.PeekResponses(scan); len(rs) != 0 {
				t.Fatalf("a scan was answered while the workers were held: %+v", rs[0])
			}
		})
	}
}

// TestSealedPeekExactlyOneResponse issues point reads from several
// goroutines at sealed and unsealed times (served off the workers and by
// the workers), cancels some of them at random moments, then lets every
// time become readable: each peek gets exactly one response, of rows or
// Canceled, whichever path served it.
func TestSealedPeekExactlyOneResponse(t *testing.T) {
	for _, o := range []runtimetest.Options{{Workers: 1}, {Workers: 3}, {Workers: 2, Processes: 2},
		{Workers: 1, RespondInline: true}, {Workers: 2, Processes: 2, RespondInline: true}} {
		n := name(o)
		if o.RespondInline {
			n += "_inline"
		}
		t.Run(n, func(t *testing.T) {
			h := runtimetest.New(t, o)
			tbl := h.Table(src)
			h.MustCreate(indexDesc(0))
			if err := tbl.Append([]dataflow.Update{kv(1, 10, 1, 1), kv(2, 20, 2, 1)}, frontier.At(5)); err != nil {
				t.Fatal(err)
			}
			if err := h.WaitFrontier(index, frontier.At(5)); err != nil {
				t.Fatal(err)
			}
			var (
				mu    sync.Mutex
				uuids []string
				wg    sync.WaitGroup
			)
			for c := 0; c < 4; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 50; i++ {
						at := frontier.Time(4) // sealed
						if i%3 == 0 {
							at = 9 // not yet sealed: the workers hold it
						}
						uuid := h.StartPeek(index, at, &runtimetest.PeekRequest{Keys: [][]byte{row.Pack(row.Int64(int64(i%2 + 1)))}})
						if (i+c)%4 == 0 {
							h.CancelPeek(uuid)
						}
						mu.Lock()
						uuids = append(uuids, uuid)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if err := tbl.Append(nil, frontier.At(10)); err != nil {
				t.Fatal(err)
			}
			for _, u := range uuids {
				if _, err := h.AwaitPeek(u); err != nil && err != runtimetest.ErrCanceled {
					t.Fatalf("peek %s: %v", u, err)
				}
				h.CancelPeek(u) // after the answer: must send nothing
			}
			// A barrier: a scan answered by the workers after every cancel
			// above was handled.
			if _, err := h.Peek(index, 9, nil); err != nil {
				t.Fatal(err)
			}
			for _, u := range uuids {
				if n := len(h.PeekResponses(u)); n != max(o.Processes, 1) {
					t.Fatalf("peek %s got %d responses, want one per process", u, n)
				}
			}
			if h.RTs[0].SealedPeeks() == 0 {
				t.Fatal("no peek was served off the workers")
			}
		})
	}
}

// TestSealedPeekAnsweredWithinPeek: with RespondInline, a sealed point
// read's response is delivered before Peek returns (on its goroutine), not
// handed to the responder's goroutine; without it, never before. A
// frontier report queued at that moment sends a response the slow way,
// so most, not all, must be.
func TestSealedPeekAnsweredWithinPeek(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			h := runtimetest.New(t, runtimetest.Options{Workers: 2, RespondInline: inline})
			tbl := h.Table(src)
			h.MustCreate(indexDesc(0))
			if err := tbl.Append([]dataflow.Update{kv(1, 10, 1, 1), kv(2, 20, 2, 1)}, frontier.At(5)); err != nil {
				t.Fatal(err)
			}
			if err := h.WaitFrontier(index, frontier.At(5)); err != nil {
				t.Fatal(err)
			}
			const reads = 20
			within := 0
			for i := range reads {
				uuid := h.StartPeek(index, 4, &runtimetest.PeekRequest{Keys: [][]byte{row.Pack(row.Int64(int64(i%2 + 1)))}})
				if len(h.PeekResponses(uuid)) == 1 {
					within++
				}
				if _, err := h.AwaitPeek(uuid); err != nil {
					t.Fatal(err)
				}
			}
			if inline && within < reads*3/4 {
				t.Fatalf("%d of %d sealed reads answered within Peek, want most", within, reads)
			}
			if !inline && within == reads {
				t.Fatalf("all %d sealed reads answered within Peek without RespondInline", reads)
			}
		})
	}
}
