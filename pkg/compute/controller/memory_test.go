package controller

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// memoryReport sends a MemoryStatus from one process of f.
func memoryReport(f *fakeReplica, proc int, near bool) {
	f.mu.Lock()
	p := f.procs[proc]
	f.mu.Unlock()
	p.send(memoryStatusResp(near))
}

// memoryStatusResp is a process's report of 950 (near) or 100 of 1000
// bytes in use.
func memoryStatusResp(near bool) *computepb.Response {
	used := uint64(100)
	if near {
		used = 950
	}
	return &computepb.Response{Kind: &computepb.Response_MemoryStatus{MemoryStatus: &computepb.MemoryStatus{
		UsedBytes: used, LimitBytes: 1000, NearLimit: near}}}
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
	perr := h.c.clusters["default"].replicas["r1"].refused[gid("u1")]
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

// replicaStatus returns replica name's status.
func (h *harness) replicaStatus(name string) ReplicaStatus {
	for _, cl := range h.c.Status().Clusters {
		for _, r := range cl.Replicas {
			if r.Name == name {
				return r
			}
		}
	}
	return ReplicaStatus{}
}

// refusal returns replica name's refusal of collection id, if any.
func (h *harness) refusal(name, id string) *computepb.PeekError {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	return h.c.clusters["default"].replicas[name].refused[gid(id)]
}

// TestMemoryKnownBeforeTheFirstDataflow: a two-process replica is sent
// no dataflow before each of its processes reported its memory on the
// connection. A dataflow it was never sent is held back (53200) when it
// connects near its limit; one it was sent before is replayed on a
// reconnection near the limit (it already runs there); a process that
// never reports keeps the replica from connecting, without a dataflow
// sent, until it does.
func TestMemoryKnownBeforeTheFirstDataflow(t *testing.T) {
	for _, tc := range []struct {
		name string
		// timeout is Config.MemoryReportTimeout (0: the default).
		timeout time.Duration
		run     func(t *testing.T, h *harness)
	}{
		{name: "created before the replica, connects near its limit", run: func(t *testing.T, h *harness) {
			if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
				t.Fatal(err)
			}
			r1 := h.startReplica("r1", 2, func(f *fakeReplica) { f.memoryNear = true })
			h.eventually("r1 connected", func() bool { return h.connected("r1") })
			if n := creates(r1); n != 0 {
				t.Fatalf("r1, near its memory limit from its first report, was sent %d dataflows", n)
			}
			if perr := h.refusal("r1", "u1"); perr.GetSqlstate() != codeOutOfMemory {
				t.Fatalf("u1 on r1: refusal %v, want 53200", perr)
			}
			r2 := h.addReplica("r2", 2)
			h.eventually("u1 sent to r2", func() bool { return creates(r2) == 1 })
		}},
		{name: "sent before, reconnects near its limit", run: func(t *testing.T, h *harness) {
			r1 := h.addReplica("r1", 2)
			if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
				t.Fatal(err)
			}
			h.eventually("u1 sent to r1", func() bool { return creates(r1) == 1 })
			r1.mu.Lock()
			r1.memoryNear = true
			r1.mu.Unlock()
			r1.disconnect()
			h.eventually("r1 reconnected", func() bool { s := h.replicaStatus("r1"); return s.Connected && s.Epoch >= 2 })
			h.eventually("u1 replayed to r1", func() bool { return creates(r1) == 2 })
			if perr := h.refusal("r1", "u1"); perr != nil {
				t.Fatalf("u1, replayed to r1, was refused: %v", perr)
			}
			if _, err := h.c.CreateDataflow("default", testDataflow("u2", nil, nil)); err != nil {
				t.Fatal(err)
			}
			h.eventually("u2 refused on r1", func() bool { return h.refusal("r1", "u2").GetSqlstate() == codeOutOfMemory })
			if n := creates(r1); n != 2 {
				t.Fatalf("r1 was sent %d dataflows, want u1 twice", n)
			}
		}},
		{name: "a process never reports", timeout: 20 * time.Millisecond, run: func(t *testing.T, h *harness) {
			if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
				t.Fatal(err)
			}
			r1 := h.startReplica("r1", 2, func(f *fakeReplica) { f.memorySilent = true })
			h.eventually("r1's connection failed for want of a memory report", func() bool {
				return strings.Contains(h.replicaStatus("r1").LastError, "did not report their memory")
			})
			if h.connected("r1") || creates(r1) != 0 {
				t.Fatalf("r1 connected (%v) or was sent %d dataflows before its processes reported their memory", h.connected("r1"), creates(r1))
			}
			r1.mu.Lock()
			r1.memorySilent = false
			r1.mu.Unlock()
			h.eventually("u1 sent to r1 once it reports", func() bool { return creates(r1) == 1 })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newHarnessWith(t, func(c *Config) { c.MemoryReportTimeout = tc.timeout }))
		})
	}
}
