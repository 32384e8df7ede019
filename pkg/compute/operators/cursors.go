package operators

import (
	"bytes"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// batchWalk walks the union of several batches' keys in ascending order,
// one batch.Cursor per batch. Operators walk new batches with it key by key
// and seek the old batches forward to the same keys; since both walks only
// move forward, a step costs O(batches × log keys) per touched key.
type batchWalk struct {
	cs []batch.Cursor
	at []*batch.Cursor // scratch of atKey
}

func newBatchWalk(bs []*batch.Batch) batchWalk {
	w := batchWalk{cs: make([]batch.Cursor, 0, len(bs))}
	for _, b := range bs {
		if b == nil || b.Len() == 0 {
			continue
		}
		w.cs = append(w.cs, b.Cursor())
	}
	return w
}

// nextKey returns the least key at or after the walk's position, or false.
func (w *batchWalk) nextKey() ([]byte, bool) {
	var best []byte
	found := false
	for i := range w.cs {
		c := &w.cs[i]
		if c.KeyValid() && (!found || bytes.Compare(c.Key(), best) < 0) {
			best, found = c.Key(), true
		}
	}
	return best, found
}

// atKey returns the cursors positioned at key, seeking forward those
// before it; the slice is valid until the next call.
func (w *batchWalk) atKey(key []byte) []*batch.Cursor {
	w.at = w.at[:0]
	for i := range w.cs {
		c := &w.cs[i]
		if !c.KeyValid() {
			continue
		}
		if bytes.Compare(c.Key(), key) < 0 {
			c.SeekKey(key)
		}
		if c.KeyValid() && bytes.Equal(c.Key(), key) {
			w.at = append(w.at, c)
		}
	}
	return w.at
}

// collect seeks every cursor to key and, for those positioned exactly at
// it, calls fn for each of the key's updates, then steps them past it.
func (w *batchWalk) collect(key []byte, fn func(val []byte, t frontier.Time, diff int64)) {
	for _, c := range w.atKey(key) {
		for ; c.ValValid(); c.StepVal() {
			v := c.Val()
			ts, ds := c.Updates()
			for j, t := range ts {
				fn(v, t, ds[j])
			}
		}
		c.StepKey()
	}
}

// collectAccumulated appends to dst the key's values with their total
// multiplicity over every update (the state before the interval: old
// batches hold only times before it, possibly advanced by compaction, which
// never changes a total), consolidated and sorted.
func (w *batchWalk) collectAccumulated(key []byte, dst []ValDiff) []ValDiff {
	w.collect(key, func(val []byte, _ frontier.Time, diff int64) {
		if n := len(dst); n > 0 && bytes.Equal(dst[n-1].Val, val) {
			dst[n-1].Diff += diff
			return
		}
		dst = append(dst, ValDiff{Val: val, Diff: diff})
	})
	return Consolidate(dst)
}

// collectTimed appends the key's updates to dst.
func (w *batchWalk) collectTimed(key []byte, dst []TimedVal) []TimedVal {
	w.collect(key, func(val []byte, t frontier.Time, diff int64) {
		dst = append(dst, TimedVal{Val: val, Time: t, Diff: diff})
	})
	return dst
}
