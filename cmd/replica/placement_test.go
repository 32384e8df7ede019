package main

import (
	"os"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/protocol/scripttest"
)

// TestWalkModeSwitchesWithoutRestart runs testdata/placement/walkmode.script
// on a Solo and a two-runtime replica, one and two processes: switching
// peek_walk_mode on the live replica moves the next walks between the worker
// and the offload pool (exact counts by placement), with the same rows.
func TestWalkModeSwitchesWithoutRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts replica processes")
	}
	text, err := os.ReadFile("testdata/placement/walkmode.script")
	if err != nil {
		t.Fatal(err)
	}
	for _, topo := range []struct {
		name               string
		processes, workers int
		interactive        bool
	}{{"solo/1x2", 1, 2, false}, {"solo/2x2", 2, 2, false}, {"interactive/1x2", 1, 2, true}} {
		t.Run(topo.name, func(t *testing.T) {
			r := startReplicaWith(t, topo.processes, topo.workers, topo.interactive)
			walks := int64(topo.processes * topo.workers)
			opts := scripttest.Options{Vars: map[string]int64{"WALKS": walks, "TWICE_WALKS": 2 * walks}}
			if err := scripttest.RunScript(t.Context(), r.Replica, "testdata", string(text), opts); err != nil {
				t.Fatalf("walkmode.script: %v", err)
			}
			if !topo.interactive {
				return
			}
			// By role: every walk ran on maintenance, none on interactive.
			byRole := `metric tandem_compute_peek_walks_total{role="maintenance"} == ${THRICE_WALKS}
metric tandem_compute_peek_walks_total{role="interactive"} == 0
`
			opts.Vars["THRICE_WALKS"] = 3 * walks
			if err := scripttest.RunScript(t.Context(), r.Replica, "testdata", byRole, opts); err != nil {
				t.Fatalf("walks by role: %v", err)
			}
		})
	}
}
