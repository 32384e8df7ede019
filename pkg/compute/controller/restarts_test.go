package controller

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestReadFailsAfterItsReplicaKeepsCrashing: a read whose replica loses
// its connection while answering it is re-sent on reconnect once, but
// after MaxPeekRestarts losses it fails (XX000) instead of being re-sent
// to a replica it keeps crashing; a read issued afterwards is answered.
func TestReadFailsAfterItsReplicaKeepsCrashing(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 1)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	f.report("u1", frontier.At(3000))
	h.eventually("readable", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[3000]" })
	done := make(chan error, 1)
	go func() {
		_, err := h.c.Peek(context.Background(), PeekRequest{Cluster: "default", Target: gid("u1")})
		done <- err
	}()
	for i := range DefaultMaxPeekRestarts {
		// The peek is pending on the replica (it never answers), which
		// then crashes.
		h.eventually("peek pending on the replica", func() bool { return f.pendingPeeks() == 1 })
		f.disconnect()
		if i < DefaultMaxPeekRestarts-1 {
			h.eventually("replica reconnected", func() bool { return f.connected() == 1 })
			select {
			case err := <-done:
				t.Fatalf("read ended after %d restarts: %v", i+1, err)
			default:
			}
		}
	}
	err := <-done
	var pe *PeekError
	if !errors.As(err, &pe) || pe.SQLState != "XX000" {
		t.Fatalf("read after %d restarts: %v, want XX000", DefaultMaxPeekRestarts, err)
	}
	// Not re-sent: the replica, reconnected, has no pending peek.
	h.eventually("replica reconnected", func() bool { return f.connected() == 1 && h.connected("r1") })
	if n := f.pendingPeeks(); n != 0 {
		t.Fatalf("%d peeks re-sent to the replica after the read failed", n)
	}
	f.report("u1", frontier.At(3000))
	f.mu.Lock()
	f.rows["u1"] = [][]*computepb.RowCount{{{Row: row.Pack(row.Int64(1)), Count: 1}}}
	f.mu.Unlock()
	res, err := h.c.Peek(context.Background(), PeekRequest{Cluster: "default", Target: gid("u1")})
	if err != nil || len(res.Rows) != 1 {
		t.Fatalf("read after the failed one: %v, %v", res.Rows, err)
	}
}

// TestOneShotReadNotReplayedAfterCrashes: a slow-path read whose one-shot
// dataflow is pending when its replica crashes is re-sent, dataflow and
// peek, on reconnect; after MaxPeekRestarts crashes it fails (XX000) and
// the replica, reconnected, is told to build neither the dataflow nor the
// peek again, so a dataflow that kills its replica cannot crash-loop it.
func TestOneShotReadNotReplayedAfterCrashes(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 1)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	f.report("u1", frontier.At(3000))
	h.eventually("readable", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[3000]" })
	id := h.c.AllocateTransientID().String()
	done := make(chan error, 1)
	go func() {
		_, err := h.c.PeekDataflow(context.Background(), "default", testDataflow(id, []string{"u1"}, nil), Serializable, nil)
		done <- err
	}()
	for i := range DefaultMaxPeekRestarts {
		h.eventually("one-shot dataflow and its peek on the replica", func() bool {
			return slices.Contains(f.historyCreates(), id) && f.pendingPeeks() == 1
		})
		if i < DefaultMaxPeekRestarts-1 {
			h.restart("r1", f)
			continue
		}
		f.disconnect()
	}
	var pe *PeekError
	if err := <-done; !errors.As(err, &pe) || pe.SQLState != CodeReadKeepsCrashing {
		t.Fatalf("read after %d crashes: %v, want XX000", DefaultMaxPeekRestarts, err)
	}
	h.eventually("replica reconnected", func() bool {
		return f.connected() == 1 && h.connected("r1") && f.initializations() > DefaultMaxPeekRestarts
	})
	if slices.Contains(f.historyCreates(), id) || f.pendingPeeks() != 0 {
		t.Fatalf("after the read failed the replica was sent its dataflow again (creates %v, %d peeks pending)", f.historyCreates(), f.pendingPeeks())
	}
}
