package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// recordingReporter keeps, per replica, the sequence of distinct reasons it
// was told (repeats collapsed), and can fail on demand.
type recordingReporter struct {
	mu    sync.Mutex
	seen  map[orchestrator.ReplicaID][]string
	calls int
	fail  bool
}

func (r *recordingReporter) SetHydrated(_ context.Context, id orchestrator.ReplicaID, hydrated bool, reason, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.fail {
		return errors.New("apiserver unavailable")
	}
	if hydrated != (reason == HydrationReasonHydrated) {
		return fmt.Errorf("hydrated=%v with reason %s", hydrated, reason)
	}
	s := r.seen[id]
	if len(s) == 0 || s[len(s)-1] != reason {
		r.seen[id] = append(s, reason)
	}
	return nil
}

func (r *recordingReporter) last(id orchestrator.ReplicaID) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.seen[id]
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

func (r *recordingReporter) history(id orchestrator.ReplicaID) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen[id])
}

func TestHydrationCountsOnlyMaintainedCollections(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 2)
	id := orchestrator.ReplicaID{Cluster: "default", Replica: "r1"}
	get := func() ReplicaHydration {
		for _, x := range h.c.Hydration() {
			if x.ID == id {
				return x
			}
		}
		t.Fatalf("no hydration for %s", id)
		return ReplicaHydration{}
	}
	if got := get(); !got.Hydrated || got.Reason != HydrationReasonHydrated {
		t.Fatalf("connected replica of a cluster without dataflows: %+v, want hydrated", got)
	}

	asOf, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := get(); got.Hydrated || got.Reason != HydrationReasonHydrating {
		t.Fatalf("after creating u1: %+v, want hydrating", got)
	}
	// One process past as_of is not enough: the replica's frontier is the
	// meet of its processes'.
	f.reportFrom(0, "u1", frontier.At(asOf+1))
	time.Sleep(20 * time.Millisecond)
	if got := get(); got.Hydrated {
		t.Fatalf("hydrated with one of two processes past as_of: %+v", got)
	}
	f.reportFrom(1, "u1", frontier.At(asOf+1))
	h.eventually("r1 hydrated", func() bool { return get().Hydrated })

	// A dropped collection no longer counts; a new one does.
	asOf2, err := h.c.CreateDataflow("default", testDataflow("u2", nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := get(); got.Hydrated || got.Message != "1 of 2 maintained collections not hydrated yet" {
		t.Fatalf("after creating u2: %+v", got)
	}
	if err := h.c.DropCollection(gid("u2")); err != nil {
		t.Fatal(err)
	}
	if got := get(); !got.Hydrated {
		t.Fatalf("after dropping u2 (as_of %d): %+v, want hydrated", asOf2, got)
	}
}

func TestReportHydrationFollowsRestarts(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 1)
	id := orchestrator.ReplicaID{Cluster: "default", Replica: "r1"}
	asOf, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	rep := &recordingReporter{seen: map[orchestrator.ReplicaID][]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.c.ReportHydration(ctx, rep, 5*time.Millisecond) }()
	defer func() { cancel(); <-done }()

	h.eventually("hydrating reported", func() bool { return rep.last(id) == HydrationReasonHydrating })
	f.report("u1", frontier.At(asOf+1))
	h.eventually("hydrated reported", func() bool { return rep.last(id) == HydrationReasonHydrated })

	// The replica restarts and stays unreachable for a while: the report
	// goes false, and back to true only once the new incarnation caught up.
	h.dialer.mu.Lock()
	delete(h.dialer.replicas, "r1")
	h.dialer.mu.Unlock()
	f.disconnect()
	h.eventually("not connected reported", func() bool { return rep.last(id) == HydrationReasonNotConnected })
	h.dialer.mu.Lock()
	h.dialer.replicas["r1"] = f
	h.dialer.mu.Unlock()
	h.eventually("reconnected", func() bool { return h.connected("r1") })
	h.eventually("hydrating again", func() bool { return rep.last(id) == HydrationReasonHydrating })
	f.report("u1", frontier.At(asOf+2))
	h.eventually("hydrated again", func() bool { return rep.last(id) == HydrationReasonHydrated })
	want := []string{HydrationReasonHydrating, HydrationReasonHydrated, HydrationReasonNotConnected, HydrationReasonHydrating, HydrationReasonHydrated}
	if got := rep.history(id); !slices.Equal(got, want) {
		t.Fatalf("reports %v, want %v", got, want)
	}

	// Reports repeat while nothing changes, so a failed write is retried.
	rep.mu.Lock()
	rep.fail = true
	before := rep.calls
	rep.mu.Unlock()
	h.eventually("failed reports retried", func() bool { rep.mu.Lock(); defer rep.mu.Unlock(); return rep.calls > before+3 })
}
