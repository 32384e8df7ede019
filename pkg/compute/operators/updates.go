package operators

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/consolidate"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Emit receives one output update. The row slice may alias operator scratch
// memory only until Emit returns; a callee that keeps it must copy it (a
// batch.Builder copies on Push).
type Emit func(row []byte, t frontier.Time, diff int64)

// EmitErr receives one update of the error collection. Errors of one
// operator instance are identified by their Error() text: an error emitted
// with diff +1 at some time is later retracted with the same text and diff
// -1 when the state that caused it goes away.
type EmitErr func(err error, t frontier.Time, diff int64)

// ValDiff is one value with its accumulated multiplicity.
type ValDiff struct {
	Val  []byte
	Diff int64
}

// TimedVal is one value update of a single key.
type TimedVal struct {
	Val  []byte
	Time frontier.Time
	Diff int64
}

// applySorted merges the consolidated, val-sorted changes into the
// val-sorted multiset state and returns the new state (reusing dst's
// capacity). Values whose multiplicity becomes zero disappear.
func applySorted(dst, state, changes []ValDiff) []ValDiff {
	dst = dst[:0]
	i, j := 0, 0
	for i < len(state) && j < len(changes) {
		switch c := bytes.Compare(state[i].Val, changes[j].Val); {
		case c < 0:
			dst = append(dst, state[i])
			i++
		case c > 0:
			dst = append(dst, changes[j])
			j++
		default:
			if d := state[i].Diff + changes[j].Diff; d != 0 {
				dst = append(dst, ValDiff{Val: state[i].Val, Diff: d})
			}
			i++
			j++
		}
	}
	dst = append(dst, state[i:]...)
	return append(dst, changes[j:]...)
}

// Consolidate sorts vs by value, sums the multiplicities of equal values
// and drops zeros, in place.
func Consolidate(vs []ValDiff) []ValDiff {
	return consolidate.Slice(vs, func(a, b ValDiff) int { return bytes.Compare(a.Val, b.Val) },
		func(v *ValDiff) *int64 { return &v.Diff })
}

// emitDifference emits next - prev (both val-sorted and consolidated) at t.
func emitDifference(prev, next []ValDiff, t frontier.Time, emit Emit) {
	consolidate.Difference(prev, next, func(a, b ValDiff) int { return bytes.Compare(a.Val, b.Val) },
		func(p ValDiff) { emit(p.Val, t, -p.Diff) },
		func(n ValDiff) { emit(n.Val, t, n.Diff) },
		func(p, n ValDiff) {
			if d := n.Diff - p.Diff; d != 0 {
				emit(n.Val, t, d)
			}
		})
}

// sortByTime orders a key's new updates by time, then value, so that the
// per-time steps of a reduction see each time's changes together.
func sortByTime(upds []TimedVal) {
	slices.SortFunc(upds, func(a, b TimedVal) int {
		if c := cmp.Compare(a.Time, b.Time); c != 0 {
			return c
		}
		return bytes.Compare(a.Val, b.Val)
	})
}
