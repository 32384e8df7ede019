package disruption

import "testing"

func TestDecide(t *testing.T) {
	hyd := func(name string) Replica { return Replica{Name: name, Processes: 2, Hydrated: true} }
	draining := func(r Replica) Replica { r.DrainingNodes = []string{"n1"}; return r }
	open := func(r Replica) Replica { r.Open = true; return r }
	down := func(r Replica) Replica { r.Hydrated = false; return r }
	type want struct {
		max    int
		reason string
		event  string
	}
	tests := []struct {
		name     string
		replicas []Replica
		want     map[string]want
	}{
		{"steady: all closed, all allowed", []Replica{hyd("a"), hyd("b")}, map[string]want{
			"a": {0, ReasonPeersHydrated, ""}, "b": {0, ReasonPeersHydrated, ""}}},
		{"a drained: a opens, b waits", []Replica{draining(hyd("a")), hyd("b")}, map[string]want{
			"a": {2, ReasonDraining, EventDrainAllowed}, "b": {0, ReasonPeerDraining, ""}}},
		{"both drained: the first by name opens", []Replica{draining(hyd("b")), draining(hyd("a"))}, map[string]want{
			"a": {2, ReasonDraining, EventDrainAllowed}, "b": {0, ReasonPeerDraining, EventDrainBlocked}}},
		{"the open one stays open while it comes back", []Replica{open(down(hyd("a"))), draining(hyd("b"))}, map[string]want{
			"a": {2, ReasonDraining, EventDrainAllowed}, "b": {0, ReasonPeerDraining, EventDrainBlocked}}},
		{"the open one back and off the node: the next opens", []Replica{open(hyd("a")), draining(hyd("b"))}, map[string]want{
			"a": {0, ReasonPeerDraining, ""}, "b": {2, ReasonDraining, EventDrainAllowed}}},
		{"the open one is kept over a drained peer", []Replica{draining(open(hyd("b"))), draining(hyd("a"))}, map[string]want{
			"a": {0, ReasonPeerDraining, EventDrainBlocked}, "b": {2, ReasonDraining, EventDrainAllowed}}},
		{"a peer down closes an open replica", []Replica{draining(open(hyd("a"))), down(hyd("b"))}, map[string]want{
			"a": {0, ReasonPeerNotHydrated, EventDrainBlocked}, "b": {0, ReasonPeersHydrated, ""}}},
		{"a peer down: no drain", []Replica{draining(hyd("a")), down(hyd("b")), hyd("c")}, map[string]want{
			"a": {0, ReasonPeerNotHydrated, EventDrainBlocked}, "b": {0, ReasonPeersHydrated, ""}, "c": {0, ReasonPeerNotHydrated, ""}}},
		{"a down replica drained while the others are hydrated opens", []Replica{draining(down(hyd("a"))), hyd("b")}, map[string]want{
			"a": {2, ReasonDraining, EventDrainAllowed}, "b": {0, ReasonPeerDraining, ""}}},
		{"single, Wait", []Replica{hyd("a")}, map[string]want{"a": {0, ReasonSingleReplica, EventSingleReplica}}},
		{"single, Wait, drained", []Replica{draining(hyd("a"))}, map[string]want{"a": {0, ReasonSingleReplica, EventDrainBlocked}}},
		{"single, Allow", []Replica{{Name: "a", Processes: 3, Hydrated: true, Policy: PolicyAllow}}, map[string]want{
			"a": {3, ReasonSingleReplica, EventSingleReplica}}},
		{"single, Allow, drained", []Replica{draining(Replica{Name: "a", Processes: 3, Hydrated: true, Policy: PolicyAllow})}, map[string]want{
			"a": {3, ReasonSingleReplica, EventDrainInterruptsReads}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide("c", tc.replicas)
			opened := 0
			for name, w := range tc.want {
				d := got[name]
				if d.MaxUnavailable != w.max || d.Reason != w.reason || d.Event != w.event || d.Status != (w.reason == ReasonDraining || w.reason == ReasonPeersHydrated || d.MaxUnavailable > 0) {
					t.Errorf("%s: %+v, want max %d reason %s event %q", name, d, w.max, w.reason, w.event)
				}
				if d.MaxUnavailable > 0 {
					opened++
				}
			}
			if opened > 1 {
				t.Errorf("%d replicas of one cluster open at once", opened)
			}
		})
	}
}
