package batch

import (
	"bytes"
	"sort"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Cursor walks one batch: keys in order, the values of the current key in
// order, and the (time, diff) updates of the current value. It borrows the
// batch and never copies or owns its storage; slices it returns alias the
// batch's immutable arenas (capacity-limited, so appending to them copies).
// A Cursor is a small value; copying it forks the walk.
type Cursor struct {
	b      *Batch   // the plain batch (or part) the cursor is in
	parts  []*Batch // a parted batch's parts, nil for a plain one
	part   int      // index of b in parts
	key    int      // current key index in b; == b.KeyCount() when exhausted
	val    int      // current value index
	valEnd int      // end of the current key's values
}

// Cursor returns a cursor positioned at the batch's first key and value.
func (b *Batch) Cursor() Cursor {
	c := Cursor{b: b}
	if b.parts != nil {
		c.parts, c.b = b.parts, b.parts[0]
	}
	c.enterKey()
	return c
}

func (c *Cursor) enterKey() {
	if c.key >= c.b.KeyCount() && c.part+1 < len(c.parts) {
		c.part++
		c.b = c.parts[c.part]
		c.key = 0
	}
	if c.key < c.b.KeyCount() {
		c.val, c.valEnd = c.b.vals(c.key)
	} else {
		c.val, c.valEnd = 0, 0
	}
}

// KeyValid reports whether the cursor is at a key.
func (c *Cursor) KeyValid() bool { return c.key < c.b.KeyCount() }

// Key returns the current key; only valid when KeyValid.
func (c *Cursor) Key() []byte { return c.b.key(c.key) }

// StepKey moves to the next key and its first value.
func (c *Cursor) StepKey() {
	if c.key < c.b.KeyCount() {
		c.key++
	}
	c.enterKey()
}

// SeekKey moves forward to the first key >= k (never backwards).
func (c *Cursor) SeekKey(k []byte) {
	if c.parts != nil {
		c.seekPart(k)
	}
	b := c.b
	lo, hi := c.key, b.KeyCount()
	if idx := b.index; len(idx) > 0 && hi-lo > 2*indexStride {
		// Keys whose prefix is below k's are below k; a sampled key whose
		// prefix is above k's is above k.
		p := prefix8(k)
		j := sort.Search(len(idx), func(i int) bool { return idx[i] >= p })
		if j > 0 {
			lo = max(lo, (j-1)*indexStride)
		}
		if j < len(idx) && idx[j] > p && j*indexStride >= lo {
			hi = j * indexStride
		}
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(b.key(mid), k) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	c.key = lo
	c.enterKey()
}

// RewindKeys moves back to the first key.
func (c *Cursor) RewindKeys() {
	if c.parts != nil {
		c.part, c.b = 0, c.parts[0]
	}
	c.key = 0
	c.enterKey()
}

// ValValid reports whether the cursor is at a value of the current key.
func (c *Cursor) ValValid() bool { return c.val < c.valEnd }

// Val returns the current value; only valid when ValValid.
func (c *Cursor) Val() []byte { return c.b.val(c.val) }

// StepVal moves to the next value of the current key.
func (c *Cursor) StepVal() {
	if c.val < c.valEnd {
		c.val++
	}
}

// SeekVal moves forward to the first value >= v of the current key.
func (c *Cursor) SeekVal(v []byte) {
	from := c.val
	c.val = from + sort.Search(c.valEnd-from, func(i int) bool {
		return bytes.Compare(c.b.val(from+i), v) >= 0
	})
}

// RewindVals moves back to the current key's first value.
func (c *Cursor) RewindVals() {
	if c.KeyValid() {
		c.val, _ = c.b.vals(c.key)
	}
}

// Updates returns the (time, diff) updates of the current value, times
// strictly increasing; only valid when ValValid. The slices alias the batch.
func (c *Cursor) Updates() ([]frontier.Time, []int64) { return c.b.updates(c.val) }

// Accumulate returns the sum of the current value's diffs at times <= t;
// only valid when ValValid.
func (c *Cursor) Accumulate(t frontier.Time) int64 {
	ts, ds := c.Updates()
	var sum int64
	for j, ut := range ts {
		if ut > t {
			break // times are increasing
		}
		sum += ds[j]
	}
	return sum
}

// ForEachUpdate calls fn for each update of the current value.
func (c *Cursor) ForEachUpdate(fn func(t frontier.Time, diff int64)) {
	ts, ds := c.Updates()
	for i, t := range ts {
		fn(t, ds[i])
	}
}
