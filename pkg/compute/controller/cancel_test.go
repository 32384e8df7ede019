package controller

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// cancelPoint is when a read's context is cancelled relative to its
// progress through the controller.
type cancelPoint int

const (
	// cancelBefore: the context is done before the read starts.
	cancelBefore cancelPoint = iota
	// cancelRandom: after a random delay of up to a millisecond, which
	// lands anywhere from dataflow creation to the peek being sent.
	cancelRandom
	// cancelPending: once the replica has the peek (or the subscribe
	// dataflow).
	cancelPending
	numCancelPoints
)

// restart disconnects f (as a crash would) and waits until the controller
// has reconnected and f has received the new connection's whole history
// (commands reach f asynchronously, after the epoch changes).
func (h *harness) restart(name string, f *fakeReplica) {
	h.t.Helper()
	before := f.initializations()
	f.disconnect()
	h.eventually("replica "+name+" reconnected", func() bool { return f.initializations() > before && h.connected(name) })
}

// initializations counts the InitializationComplete commands f received:
// one per connection whose history it has seen whole.
func (f *fakeReplica) initializations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.log {
		if c.GetInitializationComplete() != nil {
			n++
		}
	}
	return n
}

// historyCreates lists the dataflows created on f since its last Hello:
// what its current connection was told to build.
func (f *fakeReplica) historyCreates() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i := len(f.log) - 1; i >= 0; i-- {
		if f.log[i].GetHello() != nil {
			break
		}
		if cd := f.log[i].GetCreateDataflow(); cd != nil {
			out = append(out, fakeDataflowOf(cd.GetDataflow()).ID)
		}
	}
	return out
}

// TestCancelledReadsLeaveNothingBehind cancels one-shot reads and
// subscribes at random points (before they start, anywhere while the
// dataflow is created and the peek sent, while the peek is pending), with
// the replica randomly restarting before or after the cancellation and
// randomly never confirming drops (a replica stuck in a long step, then
// killed). After each cancelled read, a restarted replica must not be sent
// the read's dataflow again, and at the end nothing of any read may remain:
// no collection, dataflow, pending peek, read hold or history entry.
func TestCancelledReadsLeaveNothingBehind(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	h, f := setupIndex(t)
	f.mu.Lock()
	f.autoReport = true // created dataflows are reported open until dropped
	f.mu.Unlock()
	baseHolds := h.c.OutstandingReadHolds()
	baseHistory, err := h.c.HistorySize("default")
	if err != nil {
		t.Fatal(err)
	}
	iterations := 150
	if testing.Short() {
		iterations = 40
	}
	for i := range iterations {
		id := h.c.AllocateTransientID().String()
		point := cancelPoint(rng.IntN(int(numCancelPoints)))
		restartBefore := rng.IntN(3) == 0 // replica restarts while the read runs
		restartAfter := rng.IntN(2) == 0  // replica restarts after the cancel
		silent := rng.IntN(2) == 0
		answer := rng.IntN(4) == 0 // the replica answers, racing the cancel
		subscribe := rng.IntN(3) == 0
		f.mu.Lock()
		f.silentDrops = silent
		if answer {
			f.rows[id] = [][]*computepb.RowCount{{{Row: row.Pack(row.Int64(int64(i))), Count: 1}}}
		}
		f.mu.Unlock()

		ctx, cancel := context.WithCancel(context.Background())
		if point == cancelBefore {
			cancel()
		}
		done := make(chan error, 1)
		var sub *Subscription
		if subscribe {
			df := testDataflow(id, []string{"u1"}, nil)
			df.IndexExports, df.SubscribeSinks = nil, gids(id)
			s, err := h.c.Subscribe(ctx, "default", df)
			if err != nil {
				t.Fatalf("iteration %d: subscribe: %v", i, err)
			}
			sub = s
		} else {
			go func() {
				_, err := h.c.PeekDataflow(ctx, "default", testDataflow(id, []string{"u1"}, nil), Serializable, nil)
				done <- err
			}()
		}
		switch point {
		case cancelRandom:
			time.Sleep(time.Duration(rng.IntN(1000)) * time.Microsecond)
		case cancelPending:
			h.eventually("read reached the replica", func() bool {
				f.mu.Lock()
				defer f.mu.Unlock()
				_, created := f.dataflows[id]
				return created && (subscribe || answer || len(f.pending) > 0)
			})
		}
		if restartBefore {
			h.restart("r1", f)
		}
		cancel()
		if subscribe {
			if rng.IntN(2) == 0 {
				sub.Close() // the client went away rather than the context
			}
			h.eventually("subscription ended", func() bool {
				select {
				case _, open := <-sub.Batches():
					return !open
				default:
					return false
				}
			})
		} else if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("iteration %d: cancelled peek: %v", i, err)
		}
		if restartAfter {
			h.restart("r1", f)
			if slices.Contains(f.historyCreates(), id) {
				cs, _ := h.collection(id)
				f.mu.Lock()
				var kinds []string
				for _, c := range f.log[max(0, len(f.log)-30):] {
					k := protocol.CommandKind(c)
					if cd := c.GetCreateDataflow(); cd != nil {
						k += fmt.Sprint(fakeDataflowOf(cd.GetDataflow()))
					}
					if ac := c.GetAllowCompaction(); ac != nil {
						k += ac.GetId().String() + ac.GetFrontier().String()
					}
					kinds = append(kinds, k)
				}
				f.mu.Unlock()
				t.Logf("log tail %v", kinds)
				t.Fatalf("iteration %d (cancel point %d, restart before %v, silent drops %v, subscribe %v, answered %v): the cancelled read's dataflow %s was replayed to the restarted replica (history creates %v, collection %+v)",
					i, point, restartBefore, silent, subscribe, answer, id, f.historyCreates(), cs)
			}
		}
		f.mu.Lock()
		delete(f.rows, id)
		f.mu.Unlock()
	}

	// A replica that confirms drops, freshly connected: every trace of
	// every read must go.
	f.mu.Lock()
	f.silentDrops = false
	f.mu.Unlock()
	h.restart("r1", f)
	h.eventually("only u1 left", func() bool {
		st := h.c.Status()
		return len(st.Collections) == 1 && st.Collections[0].ID == gid("u1") &&
			st.Clusters[0].Dataflows == 1 && st.Clusters[0].PendingPeeks == 0
	})
	if got := h.c.OutstandingReadHolds(); got != baseHolds {
		t.Errorf("outstanding read holds %d, want the baseline %d", got, baseHolds)
	}
	if got, _ := h.c.HistorySize("default"); got != baseHistory {
		t.Errorf("history size %d, want the baseline %d", got, baseHistory)
	}
	if creates := f.historyCreates(); !slices.Equal(creates, []string{"u1"}) {
		t.Errorf("reconnected replica was told to create %v, want only u1", creates)
	}
	if cs, _ := h.collection("u1"); cs.Holds != 1 {
		t.Errorf("u1 holds %d after every read ended, want 1 (its read policy): %+v", cs.Holds, cs)
	}
}
