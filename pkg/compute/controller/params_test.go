package controller

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

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
			if slices.Contains(st.Hydrated, gid("u1")) && st.Epoch > 1 {
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
		return a.Epoch > 1 && b.Epoch > 1 && slices.Contains(a.Hydrated, gid("u1")) && slices.Contains(b.Hydrated, gid("u1"))
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

// rollHarness is two auto-reporting replicas r1, r2 hydrating index u1,
// whose orchestrator replaces a replica's processes on EnsureReplica and
// whose r1 then stays unreachable (a pod that is slow to start) until
// release is called. Every log message is counted by text.
type rollHarness struct {
	h      *harness
	fakes  map[string]*fakeReplica
	mu     sync.Mutex
	ensure []string
	logged map[string]int
}

func newRollHarness(t *testing.T) *rollHarness {
	rh := &rollHarness{h: newHarness(t), logged: map[string]int{}}
	h := rh.h
	h.c.cfg.RolloutLogInterval = 10 * time.Millisecond
	base := funcr.New(func(prefix, args string) { t.Log(prefix, args) }, funcr.Options{})
	h.c.log = logr.New(&countingSink{LogSink: base.GetSink(), rh: rh})
	r1 := h.addReplica("r1", 1)
	r2 := h.addReplica("r2", 1)
	r1.autoReport, r2.autoReport = true, true
	rh.fakes = map[string]*fakeReplica{"r1": r1, "r2": r2}
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	h.orch.mu.Lock()
	h.orch.onEnsure = func(cfg orchestrator.ReplicaConfig) {
		rh.mu.Lock()
		rh.ensure = append(rh.ensure, cfg.ID.Replica)
		rh.mu.Unlock()
		name := cfg.ID.Replica
		if name == "r1" {
			h.dialer.mu.Lock()
			delete(h.dialer.replicas, name)
			h.dialer.mu.Unlock()
		}
		rh.fakes[name].disconnect()
	}
	h.orch.mu.Unlock()
	h.eventually("u1 hydrated on both", func() bool {
		return slices.Contains(replicaByName(h.c.Status(), "r1").Hydrated, gid("u1")) &&
			slices.Contains(replicaByName(h.c.Status(), "r2").Hydrated, gid("u1"))
	})
	return rh
}

// release lets r1's new processes accept connections.
func (rh *rollHarness) release() {
	rh.h.dialer.mu.Lock()
	rh.h.dialer.replicas["r1"] = rh.fakes["r1"]
	rh.h.dialer.mu.Unlock()
}

func (rh *rollHarness) ensured() []string {
	rh.mu.Lock()
	defer rh.mu.Unlock()
	return slices.Clone(rh.ensure)
}

func (rh *rollHarness) count(msg string) int {
	rh.mu.Lock()
	defer rh.mu.Unlock()
	return rh.logged[msg]
}

func (rh *rollHarness) roll(t *testing.T) {
	var cfgs []orchestrator.ReplicaConfig
	for _, name := range []string{"r1", "r2"} {
		cfgs = append(cfgs, orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "default", Replica: name}, Processes: 1, Workers: 1,
			Interactive: !testparams.Interactive(t)})
	}
	rh.h.c.RollReplicas(cfgs)
}

// countingSink counts Info messages by text.
type countingSink struct {
	logr.LogSink
	rh *rollHarness
}

func (s *countingSink) Info(level int, msg string, kv ...any) {
	s.rh.mu.Lock()
	s.rh.logged[msg]++
	s.rh.mu.Unlock()
	s.LogSink.Info(level, msg, kv...)
}

func (s *countingSink) WithValues(kv ...any) logr.LogSink {
	return &countingSink{LogSink: s.LogSink.WithValues(kv...), rh: s.rh}
}

func (s *countingSink) WithName(name string) logr.LogSink {
	return &countingSink{LogSink: s.LogSink.WithName(name), rh: s.rh}
}

// TestRollReplicasWaitsForASlowReplica: a replica whose new processes take
// far longer than the old give-up time (scaled here to many log intervals)
// does not stop the roll: the controller keeps waiting, logs that it does,
// never touches the next replica meanwhile, and rolls it once the slow one
// is back and hydrated. Putting back a deadline after which the roll stops
// fails it (r2 is never rolled); removing the progress log fails it too.
func TestRollReplicasWaitsForASlowReplica(t *testing.T) {
	rh := newRollHarness(t)
	rh.roll(t)
	rh.h.eventually("the roll reports it is waiting", func() bool { return rh.count(msgRolloutWaiting) >= 5 })
	if got := rh.ensured(); !slices.Equal(got, []string{"r1"}) {
		t.Fatalf("rolled %v while r1 was not back, want only r1", got)
	}
	rh.release()
	rh.h.eventually("both rolled and rehydrated", func() bool {
		a, b := replicaByName(rh.h.c.Status(), "r1"), replicaByName(rh.h.c.Status(), "r2")
		return slices.Equal(rh.ensured(), []string{"r1", "r2"}) && a.Epoch > 1 && b.Epoch > 1 &&
			slices.Contains(a.Hydrated, gid("u1")) && slices.Contains(b.Hydrated, gid("u1"))
	})
}

// TestRollReplicasSkipsADroppedReplica: a replica dropped while the roll
// waits for it is skipped and the roll goes on with the next one (before,
// it waited out its timeout and stopped, leaving r2 on the old config).
func TestRollReplicasSkipsADroppedReplica(t *testing.T) {
	rh := newRollHarness(t)
	rh.roll(t)
	rh.h.eventually("r1 rolled", func() bool { return len(rh.ensured()) == 1 })
	if err := rh.h.c.DropReplica(context.Background(), "default", "r1"); err != nil {
		t.Fatal(err)
	}
	rh.h.eventually("r2 rolled and rehydrated", func() bool {
		b := replicaByName(rh.h.c.Status(), "r2")
		return slices.Equal(rh.ensured(), []string{"r1", "r2"}) && b.Epoch > 1 && slices.Contains(b.Hydrated, gid("u1"))
	})
}

// TestRollSupersededStops: a newer roll cancels the older one's wait.
func TestRollSupersededStops(t *testing.T) {
	rh := newRollHarness(t)
	rh.roll(t)
	rh.h.eventually("r1 rolled", func() bool { return len(rh.ensured()) == 1 })
	rh.h.c.RollReplicas(nil)
	n := rh.count(msgRolloutWaiting)
	time.Sleep(100 * time.Millisecond)
	if got := rh.count(msgRolloutWaiting); got > n+1 {
		t.Fatalf("superseded roll still waiting: %d progress logs after it was superseded", got-n)
	}
	if got := rh.ensured(); !slices.Equal(got, []string{"r1"}) {
		t.Fatalf("superseded roll went on: rolled %v", got)
	}
}

// TestApplyReplicaConfigDoesNotWait: on an orchestrator that sequences
// rollouts itself, ApplyReplicaConfig hands each replica its config and
// returns while the replica is still away (r1 stays unreachable), with no
// progress poll; the controller logs each replica's return and hydration
// once, from the frontiers it receives. Making ApplyReplicaConfig wait
// fails the first step; dropping the log on hydration fails the second.
func TestApplyReplicaConfigDoesNotWait(t *testing.T) {
	rh := newRollHarness(t)
	returned := make(chan error, 2)
	for _, name := range []string{"r1", "r2"} {
		cfg := orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "default", Replica: name}, Processes: 1, Workers: 1,
			Interactive: !testparams.Interactive(t)}
		go func() { returned <- rh.h.c.ApplyReplicaConfig(context.Background(), cfg) }()
	}
	rh.h.eventually("both configs applied while r1 is away", func() bool { return len(returned) == 2 })
	for range 2 {
		if err := <-returned; err != nil {
			t.Fatal(err)
		}
	}
	if got := rh.ensured(); len(got) != 2 {
		t.Fatalf("ensured %v, want both replicas", got)
	}
	rh.h.eventually("r2's return logged", func() bool { return rh.count(msgReconfiguredHydrated) == 1 })
	rh.release()
	rh.h.eventually("r1's return logged", func() bool { return rh.count(msgReconfiguredHydrated) == 2 })
	if n := rh.count(msgRolloutWaiting); n != 0 {
		t.Fatalf("%d progress logs: ApplyReplicaConfig must not poll", n)
	}
	// A later frontier of a hydrated collection logs nothing more.
	if _, err := rh.h.c.CreateDataflow("default", testDataflow("u2", nil, nil)); err != nil {
		t.Fatal(err)
	}
	rh.h.eventually("u2 hydrated on both", func() bool {
		return slices.Contains(replicaByName(rh.h.c.Status(), "r1").Hydrated, gid("u2")) &&
			slices.Contains(replicaByName(rh.h.c.Status(), "r2").Hydrated, gid("u2"))
	})
	if n := rh.count(msgReconfiguredHydrated); n != 2 {
		t.Fatalf("logged %d returns, want 2 (once per replica)", n)
	}
}
