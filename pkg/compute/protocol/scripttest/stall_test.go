package scripttest

import (
	"testing"
	"time"
)

// TestCPUWindowStall pins when a wait with Options.CPU gives up: only
// once a whole timeout has passed with less than the threshold of CPU
// used in it; CPU used earlier does not count, and a replica working
// slowly (at or above the threshold per timeout) is waited for however
// long it takes.
func TestCPUWindowStall(t *testing.T) {
	const timeout, threshold = 20 * time.Second, 500 * time.Millisecond
	t0 := time.Unix(1000, 0)
	type step struct {
		at, cpu time.Duration // since t0; CPU used so far
		stalled bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "idle replica fails after one timeout", steps: []step{
			{0, 0, false}, {10 * time.Second, 10 * time.Millisecond, false},
			{19 * time.Second, 20 * time.Millisecond, false}, {20 * time.Second, 30 * time.Millisecond, true},
		}},
		{name: "slow worker is waited for", steps: []step{
			{0, 0, false}, {20 * time.Second, threshold, false}, {40 * time.Second, 2 * threshold, false},
			{60 * time.Second, 3 * threshold, false}, {80 * time.Second, 4 * threshold, false},
		}},
		{name: "work that stops is a stall one timeout later", steps: []step{
			{0, 0, false}, {10 * time.Second, 5 * time.Second, false}, {20 * time.Second, 5 * time.Second, false},
			{29 * time.Second, 5 * time.Second, false}, {30 * time.Second, 5 * time.Second, true},
		}},
		{name: "a burst long ago does not count", steps: []step{
			{0, 0, false}, {2 * time.Second, 3 * time.Second, false}, {12 * time.Second, 3 * time.Second, false},
			{22 * time.Second, 3*time.Second + 100*time.Millisecond, true},
		}},
		{name: "under the threshold per timeout is a stall", steps: []step{
			{0, 0, false}, {10 * time.Second, 200 * time.Millisecond, false}, {20 * time.Second, 400 * time.Millisecond, true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := cpuWindow{timeout: timeout, threshold: threshold}
			for _, s := range tc.steps {
				if got := w.add(cpuSample{t0.Add(s.at), s.cpu}); got != s.stalled {
					t.Fatalf("at %v with %v CPU: stalled=%v, want %v", s.at, s.cpu, got, s.stalled)
				}
			}
		})
	}
}
