package storage

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// naiveAt is the contents at asOf: every update at or before asOf, summed
// per row, zeros dropped, sorted by row.
func naiveAt(updates []Update, asOf frontier.Time) []Update {
	var out []Update
	for _, u := range updates {
		if u.Time <= asOf {
			out = append(out, Update{Row: u.Row, Time: asOf, Diff: u.Diff})
		}
	}
	return Consolidate(out)
}

// TestCompactUpToKeepsContents drives random appends and compactions and
// checks, after each, that the contents at every readable time are those
// of the uncompacted history, that the settled prefix is consolidated and
// sorted, and that updates stay sorted by time.
func TestCompactUpToKeepsContents(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			var history, updates []Update
			settled := 0
			var since, now frontier.Time
			for step := range 200 {
				now++
				for range rng.IntN(40) {
					u := Update{Row: []byte{byte(rng.IntN(30))}, Time: now, Diff: int64(rng.IntN(3) - 1)}
					if u.Diff == 0 {
						u.Diff = 1
					}
					history = append(history, u)
					updates = append(updates, u)
				}
				if rng.IntN(3) == 0 {
					since = min(now, since+frontier.Time(rng.IntN(5)))
					updates, settled = compactUpTo(updates, settled, since, rng.IntN(10) == 0)
				}
				checkSettled(t, step, updates, settled)
				for _, asOf := range []frontier.Time{since, since + frontier.Time(rng.IntN(int(now-since)+1)), now} {
					got, want := settledAt(updates, settled, asOf), naiveAt(history, asOf)
					if fmtUpdates(got) != fmtUpdates(want) {
						t.Fatalf("step %d, as of %d (since %d): %s, want %s", step, asOf, since, fmtUpdates(got), fmtUpdates(want))
					}
				}
			}
		})
	}
}

func checkSettled(t *testing.T, step int, updates []Update, settled int) {
	t.Helper()
	if !sort.SliceIsSorted(updates, func(i, j int) bool { return updates[i].Time < updates[j].Time }) {
		t.Fatalf("step %d: updates not sorted by time", step)
	}
	prefix := updates[:settled]
	for i, u := range prefix {
		if u.Diff == 0 || u.Time != prefix[0].Time {
			t.Fatalf("step %d: settled update %d = %+v", step, i, u)
		}
		if i > 0 && string(prefix[i-1].Row) >= string(u.Row) {
			t.Fatalf("step %d: settled prefix not consolidated and sorted by row at %d", step, i)
		}
	}
}

// TestCompactingAnUnchangedShardIsFree: advancing since over a shard with
// nothing new at or before it (an idle table, every tick) neither copies
// nor sorts its contents.
func TestCompactingAnUnchangedShardIsFree(t *testing.T) {
	var updates []Update
	for i := range 10_000 {
		updates = append(updates, Update{Row: fmt.Appendf(nil, "%06d", i), Time: 1, Diff: 1})
	}
	updates, settled := compactUpTo(updates, 0, 1, true)
	since := frontier.Time(1)
	allocs := testing.AllocsPerRun(100, func() {
		since++
		next, n := compactUpTo(updates, settled, since, false)
		if n != settled || len(next) != len(updates) {
			t.Fatalf("contents changed: %d settled of %d", n, len(next))
		}
	})
	if allocs != 0 {
		t.Fatalf("advancing since over an unchanged shard allocated %.0f times per call, want 0", allocs)
	}
	// A few new updates below the bound are not folded in either.
	updates = append(slices.Clip(updates), Update{Row: []byte("new"), Time: since + 1, Diff: 1})
	if _, n := compactUpTo(updates, settled, since+1, false); n != settled {
		t.Fatalf("one new update re-settled %d updates", n)
	}
}
