package controller

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// TestRollReplicasOneAtATime rolls two replicas to a new config (the
// interactive runtime flipped from what the run started them with): the
// second is replaced only once the first reconnected and hydrated.
func TestRollReplicasOneAtATime(t *testing.T) {
	h := newHarness(t)
	r1 := h.addReplica("r1", 1)
	r2 := h.addReplica("r2", 1)
	r1.autoReport, r2.autoReport = true, true
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	fakes := map[string]*fakeReplica{"r1": r1, "r2": r2}
	var mu sync.Mutex
	var events []string
	h.orch.mu.Lock()
	h.orch.onEnsure = func(cfg orchestrator.ReplicaConfig) {
		mu.Lock()
		for _, name := range []string{"r1", "r2"} {
			st := replicaByName(h.c.Status(), name)
			if slices.Contains(st.Hydrated, "u1") && st.Epoch > 1 {
				events = append(events, name+" rehydrated")
			}
		}
		events = append(events, "ensure "+cfg.ID.Replica)
		mu.Unlock()
		// The orchestrator replaces the processes: connections drop.
		fakes[cfg.ID.Replica].disconnect()
	}
	h.orch.mu.Unlock()
	var cfgs []orchestrator.ReplicaConfig
	for _, name := range []string{"r1", "r2"} {
		cfgs = append(cfgs, orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "default", Replica: name}, Processes: 1, Workers: 1,
			Interactive: !testparams.Interactive(t)})
	}
	h.c.RollReplicas(cfgs)
	h.eventually("both rolled and rehydrated", func() bool {
		a, b := replicaByName(h.c.Status(), "r1"), replicaByName(h.c.Status(), "r2")
		return a.Epoch > 1 && b.Epoch > 1 && slices.Contains(a.Hydrated, "u1") && slices.Contains(b.Hydrated, "u1")
	})
	time.Sleep(10 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	want := []string{"ensure r1", "r1 rehydrated", "ensure r2"}
	if !slices.Equal(events, want) {
		t.Fatalf("rollout events %v, want %v", events, want)
	}
}

func replicaByName(st Status, name string) ReplicaStatus {
	for _, cl := range st.Clusters {
		for _, r := range cl.Replicas {
			if r.Name == name {
				return r
			}
		}
	}
	return ReplicaStatus{}
}
