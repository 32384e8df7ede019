package main

import "testing"

// TestFrontierCheck: a write frontier that goes back between two reads by
// the same replica processes is a violation; one that advances, closes, or
// belongs to restarted processes or a dropped collection is not.
func TestFrontierCheck(t *testing.T) {
	at := func(v int64) frontierAt { return frontierAt{t: v} }
	closed := frontierAt{closed: true}
	u1, u2 := frontierKey{id: "u1", worker: 0}, frontierKey{id: "u2", worker: 1}
	tests := []struct {
		name       string
		pids       []int
		now        map[frontierKey]frontierAt
		violations int
	}{
		{name: "first read", pids: []int{10, 11}, now: map[frontierKey]frontierAt{u1: at(100), u2: at(100)}},
		{name: "advance, pids in another order", pids: []int{11, 10}, now: map[frontierKey]frontierAt{u1: at(150), u2: at(100)}},
		{name: "one goes back", pids: []int{10, 11}, now: map[frontierKey]frontierAt{u1: at(149), u2: at(120)}, violations: 1},
		{name: "closed", pids: []int{10, 11}, now: map[frontierKey]frontierAt{u1: at(200), u2: closed}},
		{name: "reopened after closing", pids: []int{10, 11}, now: map[frontierKey]frontierAt{u1: at(200), u2: at(300)}, violations: 1},
		{name: "dropped", pids: []int{10, 11}, now: map[frontierKey]frontierAt{u1: at(200)}},
		{name: "restarted process rebuilds below", pids: []int{10, 12}, now: map[frontierKey]frontierAt{u1: at(50)}},
		{name: "then carries on", pids: []int{12, 10}, now: map[frontierKey]frontierAt{u1: at(60)}},
	}
	var fc frontierCheck
	for _, tc := range tests {
		if got := fc.observe(tc.pids, tc.now); len(got) != tc.violations {
			t.Fatalf("%s: violations %q, want %d", tc.name, got, tc.violations)
		}
	}
	if fc.compared != 10 {
		t.Fatalf("compared %d reports, want 10", fc.compared)
	}
}
