package trace

import (
	"bytes"
	"runtime"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Read is a trace captured for reading as of Time, with Since <= Time <
// Upper. It is immutable and safe to use from any goroutine.
type Read struct {
	Batches []*batch.Batch
	Time    frontier.Time
	Since   frontier.Frontier
	Upper   frontier.Frontier
}

// Lookup appends to dst the values of key with their non-zero accumulated
// diffs as of r.Time, sorted by value.
func (r Read) Lookup(key []byte, dst []ValDiff) []ValDiff {
	return AccumulateKey(r.Batches, key, r.Time, dst)
}

// Scan calls fn for every (key, val) with a non-zero accumulated diff as of
// r.Time, in (key, val) order, until fn returns false.
func (r Read) Scan(fn func(key, val []byte, diff int64) bool) {
	ScanAsOf(r.Batches, r.Time, fn)
}

// ValDiff is a value with its accumulated diff. Val aliases batch storage.
type ValDiff struct {
	Val  []byte
	Diff int64
}

// AccumulateKey appends to dst the values of key in batches with the sum of
// their diffs at times <= t, dropping zero sums, sorted by value. The result
// is exact when t is at or beyond every batch's since. The values alias the
// batches: the caller holds batches for as long as it reads them.
func AccumulateKey(batches []*batch.Batch, key []byte, t frontier.Time, dst []ValDiff) []ValDiff {
	start := len(dst)
	contributing := 0
	for _, b := range batches {
		c := b.Cursor()
		c.SeekKey(key)
		if !c.KeyValid() || !bytes.Equal(c.Key(), key) {
			continue
		}
		contributing++
		for ; c.ValValid(); c.StepVal() {
			ts, ds := c.Updates()
			var sum int64
			for i, ut := range ts {
				if ut > t {
					break
				}
				sum += ds[i]
			}
			if sum != 0 {
				dst = append(dst, ValDiff{Val: c.Val(), Diff: sum})
			}
		}
	}
	out := dst[start:]
	if contributing <= 1 {
		return dst // one batch's values are already sorted and distinct
	}
	// Several batches contributed: sort by value and sum equal values.
	slices.SortStableFunc(out, func(x, y ValDiff) int { return bytes.Compare(x.Val, y.Val) })
	w := 0
	for i := 0; i < len(out); {
		v, d := out[i].Val, out[i].Diff
		i++
		for i < len(out) && bytes.Equal(out[i].Val, v) {
			d += out[i].Diff
			i++
		}
		if d != 0 {
			out[w] = ValDiff{Val: v, Diff: d}
			w++
		}
	}
	// The sort and the sums above read the values after the last use of
	// any batch or cursor: without this, a collection meanwhile may find
	// batches the caller no longer holds unreachable and release their
	// arenas under the comparison (batch's package comment).
	runtime.KeepAlive(batches)
	return dst[:start+w]
}

// ScanAsOf calls fn for every (key, val) of batches whose diffs at times <= t
// sum to non-zero, in (key, val) order, until fn returns false.
func ScanAsOf(batches []*batch.Batch, t frontier.Time, fn func(key, val []byte, diff int64) bool) {
	l := batch.NewCursorList(batches)
	for ; l.KeyValid(); l.StepKey() {
		for ; l.ValValid(); l.StepVal() {
			if d := l.Accumulate(t); d != 0 {
				if !fn(l.Key(), l.Val(), d) {
					return
				}
			}
		}
	}
}

// ScanKeys calls fn once per key of batches that has values with non-zero
// accumulated diffs as of t, with those values sorted, until fn returns
// false. vals is reused between calls: copy it to keep it.
func ScanKeys(batches []*batch.Batch, t frontier.Time, fn func(key []byte, vals []ValDiff) bool) {
	l := batch.NewCursorList(batches)
	var vals []ValDiff
	for ; l.KeyValid(); l.StepKey() {
		vals = vals[:0]
		for ; l.ValValid(); l.StepVal() {
			if d := l.Accumulate(t); d != 0 {
				vals = append(vals, ValDiff{Val: l.Val(), Diff: d})
			}
		}
		if len(vals) > 0 && !fn(l.Key(), vals) {
			return
		}
	}
}

// ScanKeys calls fn per key with its accumulated values as of r.Time.
func (r Read) ScanKeys(fn func(key []byte, vals []ValDiff) bool) {
	ScanKeys(r.Batches, r.Time, fn)
}
