package storage

import (
	"bytes"
	"sort"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// A shard's updates are sorted by time and fall into three runs:
//
//   - the settled prefix, updates[:settled]: consolidated (one update per
//     row, no zero diffs), sorted by row, all carrying one time label no
//     later than since;
//   - updates at or before since that compaction has not folded into the
//     prefix yet, still at their own times;
//   - updates after since.
//
// Readers treat every time at or before since as since. Compaction folds
// the middle run into the prefix only once it is a fair fraction of the
// prefix, so advancing since over a table that did not change (every tick
// of an idle table) costs nothing, and a table taking a few writes per tick
// is re-consolidated in O(n) only every few ticks rather than sorted in
// full every tick.

// settleFraction bounds the unsettled middle run to 1/settleFraction of the
// settled prefix (plus settleMinimum updates) before compaction folds it in.
const (
	settleFraction = 4
	settleMinimum  = 1024
)

// compactUpTo advances the updates' since to since: it folds the updates at
// or before since into the settled prefix when the unsettled ones have
// grown past the bound (or force is set) and returns the updates and the
// new settled length. The input is never mutated: listeners may hold it.
func compactUpTo(updates []Update, settled int, since frontier.Time, force bool) ([]Update, int) {
	cut := sort.Search(len(updates), func(i int) bool { return updates[i].Time > since })
	pending := cut - settled
	if pending == 0 || (!force && pending < settleMinimum+settled/settleFraction) {
		return updates, settled
	}
	head := settle(updates[:settled], updates[settled:cut], since)
	out := make([]Update, 0, len(head)+len(updates)-cut)
	out = append(out, head...)
	return append(out, updates[cut:]...), len(head)
}

// settledAt returns the contents at asOf (at or after every time in
// updates[:hi]) consolidated at asOf, in a new slice sorted by row.
func settledAt(updates []Update, settled int, asOf frontier.Time) []Update {
	hi := sort.Search(len(updates), func(i int) bool { return updates[i].Time > asOf })
	return settle(updates[:settled], updates[settled:hi], asOf)
}

// settle merges a settled prefix (sorted by row, consolidated) with
// unsorted updates, all relabelled at t, into a new consolidated slice
// sorted by row. Neither input is mutated.
func settle(prefix, rest []Update, t frontier.Time) []Update {
	more := make([]Update, len(rest))
	for i, u := range rest {
		more[i] = Update{Row: u.Row, Time: t, Diff: u.Diff}
	}
	more = Consolidate(more)
	out := make([]Update, 0, len(prefix)+len(more))
	i, j := 0, 0
	for i < len(prefix) || j < len(more) {
		var u Update
		switch {
		case j == len(more):
			u = prefix[i]
			i++
		case i == len(prefix):
			u = more[j]
			j++
		default:
			c := bytes.Compare(prefix[i].Row, more[j].Row)
			switch {
			case c < 0:
				u = prefix[i]
				i++
			case c > 0:
				u = more[j]
				j++
			default:
				u = prefix[i]
				u.Diff += more[j].Diff
				i++
				j++
				if u.Diff == 0 {
					continue
				}
			}
		}
		u.Time = t
		out = append(out, u)
	}
	return out
}
