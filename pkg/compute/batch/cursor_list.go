package batch

import (
	"bytes"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// CursorList walks a list of batches as one collection: keys in order across
// all batches, the values of the current key in order across the batches
// that hold it, and every update of the current (key, val) in any batch. Like
// Cursor it borrows the batches. Updates of one value are grouped per batch,
// so their times are not globally sorted.
type CursorList struct {
	cs    []Cursor
	atKey []int // cursors positioned at the current (least) key
	atVal []int // those of atKey positioned at the current (least) value
}

// NewCursorList returns a cursor over batches, positioned at the first key.
func NewCursorList(batches []*Batch) *CursorList {
	l := &CursorList{}
	l.Reset(batches)
	return l
}

// Reset repositions l over batches, reusing its memory.
func (l *CursorList) Reset(batches []*Batch) {
	l.cs = l.cs[:0]
	for _, b := range batches {
		if b != nil && b.Len() > 0 {
			l.cs = append(l.cs, b.Cursor())
		}
	}
	l.findKey()
}

func (l *CursorList) findKey() {
	l.atKey = l.atKey[:0]
	if len(l.cs) == 1 { // one batch (a settled index): nothing to compare
		if l.cs[0].KeyValid() {
			l.atKey = append(l.atKey, 0)
		}
		l.findVal()
		return
	}
	var min []byte
	for i := range l.cs {
		c := &l.cs[i]
		if !c.KeyValid() {
			continue
		}
		k := c.Key()
		if len(l.atKey) > 0 {
			cmp := bytes.Compare(k, min)
			if cmp > 0 {
				continue
			}
			if cmp < 0 {
				l.atKey = l.atKey[:0]
			}
		}
		min = k
		l.atKey = append(l.atKey, i)
	}
	l.findVal()
}

func (l *CursorList) findVal() {
	l.atVal = l.atVal[:0]
	if len(l.atKey) == 1 { // the key is in one batch
		if i := l.atKey[0]; l.cs[i].ValValid() {
			l.atVal = append(l.atVal, i)
		}
		return
	}
	var min []byte
	for _, i := range l.atKey {
		c := &l.cs[i]
		if !c.ValValid() {
			continue
		}
		v := c.Val()
		if len(l.atVal) > 0 {
			cmp := bytes.Compare(v, min)
			if cmp > 0 {
				continue
			}
			if cmp < 0 {
				l.atVal = l.atVal[:0]
			}
		}
		min = v
		l.atVal = append(l.atVal, i)
	}
}

// KeyValid reports whether the cursor is at a key.
func (l *CursorList) KeyValid() bool { return len(l.atKey) > 0 }

// Lead returns the cursor at the current key when no other batch holds
// that key, else nil, and the least key another batch holds next (nil
// when none does). Every key of the lead from the current one up to,
// not including, bound is in no other batch, so a walk may step the lead
// alone over those keys (as a walk of one batch would) and then call
// Resync. An index is often one large batch and a few small ones (the
// updates since it last merged): its keys are then walked at the cost of
// one comparison each, not one per batch.
func (l *CursorList) Lead() (lead *Cursor, bound []byte) {
	if len(l.atKey) != 1 {
		return nil, nil
	}
	li := l.atKey[0]
	for i := range l.cs {
		if c := &l.cs[i]; i != li && c.KeyValid() {
			if k := c.Key(); bound == nil || bytes.Compare(k, bound) < 0 {
				bound = k
			}
		}
	}
	return &l.cs[li], bound
}

// Resync positions the list again after its Lead was stepped directly.
func (l *CursorList) Resync() { l.findKey() }

// Key returns the current key; only valid when KeyValid.
func (l *CursorList) Key() []byte { return l.cs[l.atKey[0]].Key() }

// StepKey moves to the next key and its first value.
func (l *CursorList) StepKey() {
	for _, i := range l.atKey {
		l.cs[i].StepKey()
	}
	l.findKey()
}

// SeekKey moves forward to the first key >= k.
func (l *CursorList) SeekKey(k []byte) {
	for i := range l.cs {
		l.cs[i].SeekKey(k)
	}
	l.findKey()
}

// RewindKeys moves back to the first key.
func (l *CursorList) RewindKeys() {
	for i := range l.cs {
		l.cs[i].RewindKeys()
	}
	l.findKey()
}

// ValValid reports whether the cursor is at a value of the current key.
func (l *CursorList) ValValid() bool { return len(l.atVal) > 0 }

// Val returns the current value; only valid when ValValid.
func (l *CursorList) Val() []byte { return l.cs[l.atVal[0]].Val() }

// StepVal moves to the next value of the current key.
func (l *CursorList) StepVal() {
	for _, i := range l.atVal {
		l.cs[i].StepVal()
	}
	l.findVal()
}

// SeekVal moves forward to the first value >= v of the current key.
func (l *CursorList) SeekVal(v []byte) {
	for _, i := range l.atKey {
		l.cs[i].SeekVal(v)
	}
	l.findVal()
}

// RewindVals moves back to the current key's first value.
func (l *CursorList) RewindVals() {
	for _, i := range l.atKey {
		l.cs[i].RewindVals()
	}
	l.findVal()
}

// ForEachUpdate calls fn for every update of the current value, batch by
// batch; only valid when ValValid.
func (l *CursorList) ForEachUpdate(fn func(t frontier.Time, diff int64)) {
	for _, i := range l.atVal {
		l.cs[i].ForEachUpdate(fn)
	}
}

// Accumulate returns the sum of the current value's diffs at times <= t.
func (l *CursorList) Accumulate(t frontier.Time) int64 {
	var sum int64
	for _, i := range l.atVal {
		sum += l.cs[i].Accumulate(t)
	}
	return sum
}
