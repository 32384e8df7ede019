package rollout

import (
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *time.Time { t := t0.Add(d); return &t }

// pods returns n live pods of hash h, ready since readyFor before now.
func pods(n int, h string, ready bool, readyFor time.Duration) []Pod {
	var ps []Pod
	for i := range n {
		ps = append(ps, Pod{Name: "r-" + string(rune('0'+i)), Hash: h, Ready: ready, ReadySince: t0.Add(-readyFor)})
	}
	return ps
}

func replica(mut func(*Replica)) Replica {
	r := Replica{
		Name: "r", Generation: 2, Processes: 2, DesiredHash: "new", AppliedHash: "new",
		Pods: pods(2, "new", true, time.Hour), ProgressDeadline: 10 * time.Minute,
	}
	if mut != nil {
		mut(&r)
	}
	return r
}

func cond(d Decision, typ string) Condition {
	for _, c := range d.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return Condition{}
}

func TestDecide(t *testing.T) {
	availablePeer := []Peer{{Name: "b", Available: true}}
	tests := []struct {
		name  string
		r     Replica
		peers []Peer
		// expectations
		state       State
		apply       bool
		deletePods  []string
		rolling     bool
		progressing ConditionStatus
		reason      string
		degraded    ConditionStatus
		available   ConditionStatus
		requeue     time.Duration
		start       *time.Time
	}{
		{
			name:  "missing statefulset is created and the creation counts as a rollout",
			r:     replica(func(r *Replica) { r.AppliedHash, r.Pods = "", nil }),
			state: StateMissing, apply: true, rolling: true, progressing: True, reason: ReasonCreating,
			degraded: False, available: False, start: at(0),
		},
		{
			name:  "current replica stays complete",
			r:     replica(nil),
			peers: availablePeer,
			state: StateCurrent, apply: true, progressing: False, reason: ReasonRolloutComplete, degraded: False, available: True,
		},
		{
			name:  "finished rollout completes and clears its start",
			r:     replica(func(r *Replica) { r.RolloutStart = at(-time.Minute) }),
			state: StateCurrent, apply: true, progressing: False, reason: ReasonRolloutComplete, degraded: False, available: True,
		},
		{
			name:  "outdated replica with available peers starts rolling all its pods",
			r:     replica(func(r *Replica) { r.AppliedHash, r.Pods = "old", pods(2, "old", true, time.Hour) }),
			peers: availablePeer,
			state: StateOutdated, apply: true, deletePods: []string{"r-0", "r-1"}, rolling: true,
			progressing: True, reason: ReasonRolloutStarted, degraded: False, available: False, start: at(0),
		},
		{
			name:  "paused outdated replica holds and keeps its old template",
			r:     replica(func(r *Replica) { r.AppliedHash, r.Pods, r.Paused = "old", pods(2, "old", true, time.Hour), true }),
			peers: availablePeer,
			state: StateOutdated, progressing: False, reason: ReasonPaused, degraded: False, available: True,
		},
		{
			name:  "outdated replica waits while a peer rolls",
			r:     replica(func(r *Replica) { r.AppliedHash, r.Pods = "old", pods(2, "old", true, time.Hour) }),
			peers: []Peer{{Name: "b", Rolling: true}},
			state: StateOutdated, progressing: True, reason: ReasonWaitingForTurn, degraded: False, available: True,
		},
		{
			name:  "outdated available replica waits while a peer is unavailable",
			r:     replica(func(r *Replica) { r.AppliedHash, r.Pods = "old", pods(2, "old", true, time.Hour) }),
			peers: []Peer{{Name: "b", Available: false}},
			state: StateOutdated, progressing: True, reason: ReasonWaitingForTurn, degraded: False, available: True,
		},
		{
			name:  "outdated unavailable replica may roll beside an unavailable peer",
			r:     replica(func(r *Replica) { r.AppliedHash, r.Pods = "old", pods(2, "old", false, 0) }),
			peers: []Peer{{Name: "b", Available: false}},
			state: StateOutdated, apply: true, deletePods: []string{"r-0", "r-1"}, rolling: true,
			progressing: True, reason: ReasonRolloutStarted, degraded: False, available: False, start: at(0),
		},
		{
			name:  "outdated unavailable replica still waits for a rolling peer",
			r:     replica(func(r *Replica) { r.AppliedHash, r.Pods = "old", pods(2, "old", false, 0) }),
			peers: []Peer{{Name: "b", Rolling: true, Available: true}},
			state: StateOutdated, progressing: True, reason: ReasonWaitingForTurn, degraded: False, available: False,
		},
		{
			name: "operator restarted mid-rollout deletes the remaining old pods",
			r: replica(func(r *Replica) {
				r.RolloutStart = at(-time.Minute)
				r.Pods = append(pods(1, "new", false, 0), Pod{Name: "r-1", Hash: "old", Ready: true})
			}),
			state: StateRolling, apply: true, deletePods: []string{"r-1"}, rolling: true,
			progressing: True, reason: ReasonRollingPods, degraded: False, available: False,
			requeue: 9 * time.Minute, start: at(-time.Minute),
		},
		{
			name: "recorded rollout whose template apply is not visible yet carries on",
			r: replica(func(r *Replica) {
				r.RolloutStart, r.AppliedHash, r.Paused = at(-time.Minute), "old", true
				r.Pods = append(pods(1, "new", true, time.Hour), Pod{Name: "r-1", Hash: "old", Ready: true})
			}),
			state: StateRolling, apply: true, deletePods: []string{"r-1"}, rolling: true,
			progressing: True, reason: ReasonRollingPods, degraded: False, available: True,
			requeue: 9 * time.Minute, start: at(-time.Minute),
		},
		{
			name:  "missing statefulset keeps a recorded start",
			r:     replica(func(r *Replica) { r.AppliedHash, r.Pods, r.RolloutStart = "", nil, at(-time.Minute) }),
			state: StateMissing, apply: true, rolling: true, progressing: True, reason: ReasonCreating,
			degraded: False, available: False, start: at(-time.Minute),
		},
		{
			name:  "rolled pods not ready yet wait for available until the deadline",
			r:     replica(func(r *Replica) { r.RolloutStart, r.Pods = at(-4*time.Minute), pods(2, "new", false, 0) }),
			state: StateStarting, apply: true, rolling: true, progressing: True, reason: ReasonWaitingForAvailable,
			degraded: False, available: False, requeue: 6 * time.Minute, start: at(-4 * time.Minute),
		},
		{
			name: "min ready seconds not elapsed requeues when they will have",
			r: replica(func(r *Replica) {
				r.RolloutStart, r.MinReady, r.Pods = at(-time.Minute), 30*time.Second, pods(2, "new", true, 10*time.Second)
			}),
			state: StateStarting, apply: true, rolling: true, progressing: True, reason: ReasonWaitingForAvailable,
			degraded: False, available: False, requeue: 20 * time.Second, start: at(-time.Minute),
		},
		{
			name:  "missing pods are not available",
			r:     replica(func(r *Replica) { r.RolloutStart, r.Pods = at(-time.Minute), pods(1, "new", true, time.Hour) }),
			state: StateStarting, apply: true, rolling: true, progressing: True, reason: ReasonWaitingForAvailable,
			degraded: False, available: False, requeue: 9 * time.Minute, start: at(-time.Minute),
		},
		{
			name:  "progress deadline exceeded keeps the replica rolling",
			r:     replica(func(r *Replica) { r.RolloutStart, r.Pods = at(-11*time.Minute), pods(2, "new", false, 0) }),
			state: StateStarting, apply: true, rolling: true, progressing: False, reason: ReasonProgressDeadlineExceeded,
			degraded: True, available: False, start: at(-11 * time.Minute),
		},
		{
			name:  "pods failing outside a rollout are degraded, not progressing",
			r:     replica(func(r *Replica) { r.Pods = pods(2, "new", false, 0) }),
			state: StateStarting, apply: true, progressing: False, reason: ReasonUpToDate, degraded: True, available: False,
		},
		{
			name: "managed replica waits for hydration",
			r: replica(func(r *Replica) {
				r.RolloutStart, r.Managed, r.Hydrated, r.HydratedGeneration = at(-time.Minute), true, true, 1
			}),
			state: StateHydrating, apply: true, rolling: true, progressing: True, reason: ReasonWaitingForHydration,
			degraded: False, available: True, requeue: 9 * time.Minute, start: at(-time.Minute),
		},
		{
			name: "managed replica hydrated for its generation completes",
			r: replica(func(r *Replica) {
				r.RolloutStart, r.Managed, r.Hydrated, r.HydratedGeneration = at(-time.Minute), true, true, 2
			}),
			state: StateCurrent, apply: true, progressing: False, reason: ReasonRolloutComplete, degraded: False, available: True,
		},
		{
			name:  "terminating pods do not count",
			r:     replica(func(r *Replica) { r.RolloutStart = at(-time.Minute); r.Pods[1].Terminating = true }),
			state: StateStarting, apply: true, rolling: true, progressing: True, reason: ReasonWaitingForAvailable,
			degraded: False, available: False, requeue: 9 * time.Minute, start: at(-time.Minute),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(t0, tc.r, tc.peers)
			if d.State != tc.state {
				t.Errorf("state = %v, want %v", d.State, tc.state)
			}
			if d.ApplyStatefulSet != tc.apply {
				t.Errorf("apply = %v, want %v", d.ApplyStatefulSet, tc.apply)
			}
			if !reflect.DeepEqual(d.DeletePods, tc.deletePods) {
				t.Errorf("delete = %v, want %v", d.DeletePods, tc.deletePods)
			}
			if d.Rolling != tc.rolling {
				t.Errorf("rolling = %v, want %v", d.Rolling, tc.rolling)
			}
			p := cond(d, TypeProgressing)
			if p.Status != tc.progressing || p.Reason != tc.reason {
				t.Errorf("progressing = %s/%s (%q), want %s/%s", p.Status, p.Reason, p.Message, tc.progressing, tc.reason)
			}
			if got := cond(d, TypeDegraded).Status; got != tc.degraded {
				t.Errorf("degraded = %s, want %s", got, tc.degraded)
			}
			if got := cond(d, TypeAvailable).Status; got != tc.available {
				t.Errorf("available = %s, want %s", got, tc.available)
			}
			if d.RequeueAfter != tc.requeue {
				t.Errorf("requeue = %v, want %v", d.RequeueAfter, tc.requeue)
			}
			if (d.RolloutStart == nil) != (tc.start == nil) || (d.RolloutStart != nil && !d.RolloutStart.Equal(*tc.start)) {
				t.Errorf("rollout start = %v, want %v", d.RolloutStart, tc.start)
			}
		})
	}
}

// TestDecideIsStable checks that deciding again later, with nothing observed changed, gives
// the same conditions: a condition message that moves with the clock would rewrite status on
// every pass and make the reconciler loop.
func TestDecideIsStable(t *testing.T) {
	cases := []Replica{
		replica(func(r *Replica) { r.RolloutStart, r.Pods = at(-11*time.Minute), pods(2, "new", false, 0) }),
		replica(func(r *Replica) { r.RolloutStart, r.Pods = at(-4*time.Minute), pods(2, "new", false, 0) }),
		replica(func(r *Replica) { r.AppliedHash, r.Pods, r.Paused = "old", pods(2, "old", true, time.Hour), true }),
		replica(nil),
	}
	for _, r := range cases {
		a := Decide(t0, r, nil)
		b := Decide(t0.Add(3*time.Second), r, nil)
		if !reflect.DeepEqual(a.Conditions, b.Conditions) {
			t.Errorf("state %v: conditions changed with time alone:\n%+v\n%+v", a.State, a.Conditions, b.Conditions)
		}
	}
}

// TestOneReplicaAtATime drives a three-replica cluster through a template change with the
// policy alone, as the reconciler does (one pass over the replicas in name order, each seeing
// the decisions already taken), and checks that no two replicas are ever down together.
func TestOneReplicaAtATime(t *testing.T) {
	names := []string{"a", "b", "c"}
	rs := map[string]*Replica{}
	for _, n := range names {
		rs[n] = &Replica{Name: n, Generation: 1, Processes: 2, DesiredHash: "v2", AppliedHash: "v1",
			Pods: podsNamed(n, "v1", t0.Add(-time.Hour)), ProgressDeadline: time.Hour, MinReady: 10 * time.Second}
	}
	now := t0
	var order []string
	for step := 0; step < 100; step++ {
		now = now.Add(5 * time.Second)
		status := map[string]Peer{}
		for _, n := range names {
			_, avail, _ := Observe(now, *rs[n])
			status[n] = Peer{Name: n, Rolling: rs[n].RolloutStart != nil, Available: avail}
		}
		down := 0
		for _, n := range names {
			var peers []Peer
			for _, m := range names {
				if m != n {
					peers = append(peers, status[m])
				}
			}
			d := Decide(now, *rs[n], peers)
			status[n] = Peer{Name: n, Rolling: d.Rolling, Available: d.Available}
			r := rs[n]
			r.RolloutStart = d.RolloutStart
			if d.ApplyStatefulSet {
				r.AppliedHash = r.DesiredHash
			}
			if len(d.DeletePods) > 0 {
				order = append(order, n)
				// The StatefulSet controller recreates the pods right away; they become
				// ready one tick later.
				r.Pods = podsNamed(n, r.AppliedHash, now.Add(5*time.Second))
			}
			if !d.Available {
				down++
			}
		}
		if down > 1 {
			t.Fatalf("step %d: %d replicas down at once", step, down)
		}
	}
	if !reflect.DeepEqual(order, names) {
		t.Fatalf("roll order = %v, want each replica once in order %v", order, names)
	}
	for _, n := range names {
		if d := Decide(now, *rs[n], nil); d.State != StateCurrent {
			t.Errorf("replica %s ended in state %v", n, d.State)
		}
	}
}

func podsNamed(n, hash string, readySince time.Time) []Pod {
	return []Pod{
		{Name: n + "-0", Hash: hash, Ready: true, ReadySince: readySince},
		{Name: n + "-1", Hash: hash, Ready: true, ReadySince: readySince},
	}
}

// TestRolloutReasons follows the causes of a rollout: named while it waits, recorded with
// one event per cause when it starts, extended (with an event) by a change made while it
// runs, carried while the pods come back, and cleared when it completes.
func TestRolloutReasons(t *testing.T) {
	size := Change{Reason: "SizeChanged", Message: "workers 4 -> 8"}
	image := Change{Reason: "ImageChanged", Message: "image a -> b"}
	outdated := func(r *Replica) {
		r.AppliedHash, r.Pods, r.Changes = "old", pods(2, "old", true, time.Hour), []Change{size}
	}
	eventReasons := func(d Decision) []string {
		var out []string
		for _, e := range d.Events {
			out = append(out, e.Reason)
		}
		return out
	}
	tests := []struct {
		name     string
		r        Replica
		peers    []Peer
		reasons  []string
		events   []string
		progress string // prefix of the Progressing message
	}{
		{"waiting names its cause", replica(outdated), []Peer{{Name: "b", Rolling: true}},
			[]string{"SizeChanged"}, nil, "SizeChanged: waiting for b"},
		{"paused names its cause", replica(func(r *Replica) { outdated(r); r.Paused = true }), nil,
			[]string{"SizeChanged"}, nil, "SizeChanged: rollout to pod template"},
		{"start records causes and an event each", replica(func(r *Replica) { outdated(r); r.Changes = append(r.Changes, image) }), nil,
			[]string{"SizeChanged", "ImageChanged"}, []string{"SizeChanged", "ImageChanged", "RolloutStarted"}, "SizeChanged, ImageChanged: rolling all 2"},
		{"a change during the rollout adds its cause", replica(func(r *Replica) {
			r.AppliedHash, r.Pods, r.RolloutStart, r.Reasons = "old", pods(2, "old", false, 0), at(-time.Minute), []string{"SizeChanged"}
			r.Changes = []Change{size, image}
		}), nil, []string{"SizeChanged", "ImageChanged"}, []string{"ImageChanged"}, "SizeChanged, ImageChanged: deleting"},
		{"starting pods carry the causes", replica(func(r *Replica) {
			r.Pods, r.RolloutStart, r.Reasons = pods(2, "new", false, 0), at(-time.Minute), []string{"SizeChanged"}
		}), nil, []string{"SizeChanged"}, nil, "SizeChanged: 0 of 2"},
		{"completion clears them", replica(func(r *Replica) { r.RolloutStart, r.Reasons = at(-time.Minute), []string{"SizeChanged"} }), nil,
			nil, []string{"RolloutCompleted"}, "pods run"},
		{"processes failing outside a rollout name no cause", replica(func(r *Replica) {
			r.Pods, r.Reasons = pods(2, "new", false, 0), []string{"stale"}
		}), nil, nil, nil, "pods run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(t0, tc.r, tc.peers)
			if !reflect.DeepEqual(d.Reasons, tc.reasons) {
				t.Errorf("reasons %v, want %v", d.Reasons, tc.reasons)
			}
			if got := eventReasons(d); !reflect.DeepEqual(got, tc.events) {
				t.Errorf("events %v, want %v", got, tc.events)
			}
			if p := cond(d, TypeProgressing); len(p.Message) < len(tc.progress) || p.Message[:len(tc.progress)] != tc.progress {
				t.Errorf("progressing message %q, want prefix %q", p.Message, tc.progress)
			}
		})
	}
}
