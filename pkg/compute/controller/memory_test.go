package controller

import (
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// memoryReport sends a MemoryStatus from one process of f.
func memoryReport(f *fakeReplica, proc int, near bool) {
	f.mu.Lock()
	p := f.procs[proc]
	f.mu.Unlock()
	p.send(&computepb.Response{Kind: &computepb.Response_MemoryStatus{MemoryStatus: &computepb.MemoryStatus{
		UsedBytes: 950, LimitBytes: 1000, NearLimit: near}}})
}

// creates counts the create_dataflow commands f's process 0 received.
func creates(f *fakeReplica) int {
	return len(slices.DeleteFunc(f.commandKinds(), func(k string) bool { return k != protocol.KindCreateDataflow }))
}

// TestDataflowHeldBackFromReplicaNearMemoryLimit: once one process of a
// two-process replica reports being near its memory limit, a new
// dataflow is sent to neither of its processes (they must agree) but
// still to the other replica; the held-back dataflow is refused on that
// replica with 53200, and /api/status lists the process. Once the
// process reports being below its limit again, new dataflows are sent.
func TestDataflowHeldBackFromReplicaNearMemoryLimit(t *testing.T) {
	h := newHarness(t)
	r1, r2 := h.addReplica("r1", 2), h.addReplica("r2", 2)
	h.eventually("both replicas connected", func() bool { return h.connected("r1") && h.connected("r2") })
	memoryReport(r1, 1, true)
	nearLimit := func() []int {
		for _, cl := range h.c.Status().Clusters {
			for _, r := range cl.Replicas {
				if r.Name == "r1" {
					return r.MemoryNearLimit
				}
			}
		}
		return nil
	}
	h.eventually("r1's report applied", func() bool { return slices.Equal(nearLimit(), []int{1}) })
	c1, c2 := creates(r1), creates(r2)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	h.eventually("u1 sent to r2", func() bool { return creates(r2) == c2+1 })
	if n := creates(r1); n != c1 {
		t.Fatalf("r1, near its memory limit, was sent %d new dataflows", n-c1)
	}
	h.c.mu.Lock()
	perr := h.c.clusters["default"].replicas["r1"].refused["u1"]
	h.c.mu.Unlock()
	if perr.GetSqlstate() != codeOutOfMemory {
		t.Fatalf("u1 on r1: refusal %v, want 53200", perr)
	}
	memoryReport(r1, 1, false)
	h.eventually("r1's second report applied", func() bool { return len(nearLimit()) == 0 })
	if _, err := h.c.CreateDataflow("default", testDataflow("u2", nil, nil)); err != nil {
		t.Fatal(err)
	}
	h.eventually("u2 sent to r1", func() bool { return creates(r1) == c1+1 })
}
