package batch

import (
	"bytes"
	"sort"
	"unsafe"
)

// A parted batch is one batch stored as several plain ones (its parts), in
// key order: what a fuelled merge writes, one part at a time, so that no
// merge step allocates or seals the whole output (writer.go). Readers do
// not see the difference: a Cursor walks the parts in turn, a seek first
// finds the part by its last key, and a merge reads its inputs part by part
// (mergeSide). Parts are never empty and are never parted themselves.

// joinParts returns the batch made of parts (at least two, plain, keys
// ascending across them, each with description desc).
func joinParts(desc Description, parts []*Batch) *Batch {
	b := &Batch{desc: desc, parts: parts}
	for _, p := range parts {
		b.n += p.n
		b.nKeys += p.KeyCount()
		b.nVals += p.ValCount()
	}
	return b
}

// plainParts returns b's parts, or b alone when it is plain.
func plainParts(b *Batch) []*Batch {
	if b.parts != nil {
		return b.parts
	}
	return []*Batch{b}
}

// PartCount returns the number of plain batches b is stored as (1 unless
// a fuelled merge wrote it in parts).
func (b *Batch) PartCount() int {
	if b.parts != nil {
		return len(b.parts)
	}
	return 1
}

func partsSizeBytes(b *Batch) int {
	n := int(unsafe.Sizeof(*b)) + 8*cap(b.parts)
	for _, p := range b.parts {
		n += p.SizeBytes()
	}
	return n
}

// lastKey returns the last key of a plain, non-empty batch.
func (b *Batch) lastKey() []byte { return b.key(b.KeyCount() - 1) }

// seekPart moves c to the first part at or after its current one whose
// last key is >= k (the last part if none), at its first key when the part
// changes.
func (c *Cursor) seekPart(k []byte) {
	rest := c.parts[c.part:]
	j := sort.Search(len(rest), func(i int) bool { return bytes.Compare(rest[i].lastKey(), k) >= 0 })
	if j == len(rest) {
		// Every remaining key is below k: exhaust the last part.
		c.part = len(c.parts) - 1
		c.b = c.parts[c.part]
		c.key = c.b.KeyCount()
		return
	}
	if j > 0 {
		c.part += j
		c.b = c.parts[c.part]
		c.key = 0
	}
}

// mergeSide reads one input of a merge key by key, crossing its parts.
type mergeSide struct {
	parts []*Batch
	p, k  int    // next key: key k of parts[p]
	b     *Batch // the part holding the current key
	v, e  int    // the current key's remaining values in b
}

func newMergeSide(b *Batch) mergeSide { return mergeSide{parts: plainParts(b)} }

// ok reports whether a key remains, moving to the next part if needed.
func (s *mergeSide) ok() bool {
	for s.k >= s.parts[s.p].KeyCount() {
		if s.p+1 == len(s.parts) {
			return false
		}
		s.p++
		s.k = 0
	}
	return true
}

// key returns the next key; only valid when ok.
func (s *mergeSide) key() []byte { return s.parts[s.p].key(s.k) }

// enter makes the next key current, with all its values remaining.
func (s *mergeSide) enter() {
	s.b = s.parts[s.p]
	s.v, s.e = s.b.vals(s.k)
	s.k++
}

// keyBytes and valBytes return the bytes of b's keys and values.
func (b *Batch) keyBytes() int {
	n := 0
	for _, p := range plainParts(b) {
		n += len(p.keyData)
	}
	return n
}

func (b *Batch) valBytes() int {
	n := 0
	for _, p := range plainParts(b) {
		n += len(p.valData)
	}
	return n
}
