package dataflow

import "testing"

// TestExchangePartitionGrowsEachPartOnce: partitioning a payload for an
// exchange allocates at most once per destination it reaches, whether its
// updates spread evenly or all hash to one worker (a load generator's
// shard does: its keys hash to the worker generating them), and keeps each
// destination's updates in payload order. Appending update by update to
// parts sized for an even share copied a skewed part whole as it filled.
func TestExchangePartitionGrowsEachPartOnce(t *testing.T) {
	const n, peers = 16_384, 4
	ups := make([]Update, n)
	for i := range ups {
		ups[i] = Update{Time: 1, Diff: int64(i)}
	}
	for _, tc := range []struct {
		name  string
		route func(Update) uint64
		dests int
	}{
		{"even", func(u Update) uint64 { return uint64(u.Diff) }, peers},
		{"all to one", func(Update) uint64 { return 2 }, 1},
		{"two of four", func(u Update) uint64 { return uint64(u.Diff%2) * 3 }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &edge{exchange: tc.route, parts: make([][]Update, peers)}
			runs := 10
			if raceEnabled {
				runs = 1 // counts are not checked; the contents still are
			}
			allocs := testing.AllocsPerRun(runs, func() {
				for d := range e.parts {
					e.parts[d] = nil // flushed, as after a schedule
				}
				e.partition(ups)
			})
			if !raceEnabled && allocs > float64(tc.dests) {
				t.Errorf("%.0f allocations to partition %d updates to %d destinations, want at most one each", allocs, n, tc.dests)
			}
			got := 0
			for d, part := range e.parts {
				for i, u := range part {
					if tc.route(u)%peers != uint64(d) || (i > 0 && part[i-1].Diff >= u.Diff) {
						t.Fatalf("part %d holds %v at %d (out of place or order)", d, u, i)
					}
				}
				got += len(part)
			}
			if got != n {
				t.Errorf("parts hold %d updates, want %d", got, n)
			}
		})
	}
}
