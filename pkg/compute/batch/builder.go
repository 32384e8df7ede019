package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// ErrTimeOutOfRange reports an update whose time lies outside the
// [lower, upper) of the batch being built.
var ErrTimeOutOfRange = errors.New("batch: update time outside [lower, upper)")

// staged is one pushed update. Key and value bytes live back to back in the
// builder's stage arena at off; prefix caches the first 8 key bytes
// (big-endian, zero padded) so most comparisons never touch the arena.
type staged struct {
	prefix uint64
	off    uint32
	klen   uint32
	vlen   uint32
	time   frontier.Time
	diff   int64
}

// Builder accumulates updates in any order and builds a sorted, consolidated
// Batch. The zero value is ready to use; a Builder is reusable after Build and
// not safe for concurrent use.
type Builder struct {
	stage    []byte
	upds     []staged
	sortBuf  []staged // radix sort scratch, kept for reuse
	keyBytes int      // total key bytes pushed, to size the key arena exactly
	tooLarge bool
}

// Push adds one update. The bytes of key and val are copied.
func (b *Builder) Push(key, val []byte, t frontier.Time, diff int64) {
	if diff == 0 {
		return
	}
	off := len(b.stage)
	if off+len(key)+len(val) > maxOffset || len(b.upds) >= maxOffset {
		b.tooLarge = true
		return
	}
	// Grow by doubling: append's 1.25x growth for large slices copies (and,
	// on fresh memory, page-faults) the staged data several times over.
	if len(b.upds) == cap(b.upds) {
		b.upds = slices.Grow(b.upds, max(len(b.upds), 1024))
	}
	if n := len(key) + len(val); len(b.stage)+n > cap(b.stage) {
		b.stage = slices.Grow(b.stage, max(len(b.stage), n, 16<<10))
	}
	b.stage = append(b.stage, key...)
	b.stage = append(b.stage, val...)
	b.keyBytes += len(key)
	b.upds = append(b.upds, staged{
		prefix: prefix8(key),
		off:    uint32(off),
		klen:   uint32(len(key)),
		vlen:   uint32(len(val)),
		time:   t,
		diff:   diff,
	})
}

// Len returns the number of updates pushed since the last Build.
func (b *Builder) Len() int { return len(b.upds) }

// Reserve grows the builder's buffers for n more updates of about
// bytesPerUpdate key+val bytes each.
func (b *Builder) Reserve(n, bytesPerUpdate int) {
	b.upds = slices.Grow(b.upds, n)
	b.stage = slices.Grow(b.stage, n*bytesPerUpdate)
}

// Reset discards pushed updates, keeping buffers.
func (b *Builder) Reset() {
	b.stage = b.stage[:0]
	b.upds = b.upds[:0]
	b.keyBytes = 0
	b.tooLarge = false
}

// retainMax is the most staged updates whose buffers a Builder keeps for
// reuse after Build. A long-lived builder (one per arrange operator) that
// once built a snapshot of millions of updates must not hold twice that
// memory for the rest of its life; small per-tick batches reuse buffers.
const retainMax = 1 << 18

// retainStageMax bounds the staged key and value bytes kept the same way:
// a snapshot of few but wide rows stays under retainMax updates.
const retainStageMax = 8 << 20

// release resets the builder after Build, dropping buffers above retainMax
// updates or retainStageMax bytes.
func (b *Builder) release() {
	if cap(b.upds) > retainMax || cap(b.stage) > retainStageMax {
		*b = Builder{}
		return
	}
	b.Reset()
}

func prefix8(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var buf [8]byte
	copy(buf[:], k)
	return binary.BigEndian.Uint64(buf[:])
}

func (b *Builder) keyOf(u *staged) []byte {
	return b.stage[u.off : u.off+u.klen]
}

func (b *Builder) valOf(u *staged) []byte {
	s := u.off + u.klen
	return b.stage[s : s+u.vlen]
}

// compareKV orders staged updates by (key, val).
func (b *Builder) compareKV(x, y *staged) int {
	if x.prefix != y.prefix {
		if x.prefix < y.prefix {
			return -1
		}
		return 1
	}
	if x.klen > 8 || y.klen > 8 || x.klen != y.klen {
		if c := bytes.Compare(b.keyOf(x), b.keyOf(y)); c != 0 {
			return c
		}
	}
	return bytes.Compare(b.valOf(x), b.valOf(y))
}

// Build sorts and consolidates the pushed updates into a batch described by
// desc and resets the builder. Every time must satisfy desc.Lower <= t <
// desc.Upper; times are then advanced by desc.Since (when it is not closed)
// before consolidation, so equal (key, val, time) triples sum and zero sums
// disappear.
func (b *Builder) Build(desc Description) (*Batch, error) {
	defer b.release()
	if err := desc.Validate(); err != nil {
		return nil, err
	}
	if b.tooLarge {
		return nil, fmt.Errorf("build batch %v: %w", desc, ErrTooLarge)
	}
	compact := !desc.Since.IsClosed() && !desc.Since.LessEqual(desc.Lower)
	for i := range b.upds {
		u := &b.upds[i]
		if !desc.Lower.LessEqualTime(u.time) || desc.Upper.LessEqualTime(u.time) {
			return nil, fmt.Errorf("build batch %v: time %d: %w", desc, u.time, ErrTimeOutOfRange)
		}
		if compact {
			u.time = desc.Since.AdvanceTime(u.time)
		}
	}
	b.upds, b.sortBuf = b.sortStaged(b.upds, b.sortBuf)
	w := newWriter(desc, len(b.upds), b.keyBytes, len(b.upds), len(b.stage)-b.keyBytes, len(b.upds))
	upds := b.upds
	for i := 0; i < len(upds); {
		// One key.
		k0 := &upds[i]
		key := b.keyOf(k0)
		w.startKey(key)
		for i < len(upds) && upds[i].prefix == k0.prefix && bytes.Equal(b.keyOf(&upds[i]), key) {
			// One (key, val).
			val := b.valOf(&upds[i])
			j := i
			for j < len(upds) && b.compareKV(&upds[i], &upds[j]) == 0 {
				t, d := upds[j].time, upds[j].diff
				j++
				for j < len(upds) && upds[j].time == t && b.compareKV(&upds[i], &upds[j]) == 0 {
					d += upds[j].diff
					j++
				}
				if d != 0 {
					w.pushUpdate(t, d)
				}
			}
			w.sealVal(val)
			i = j
		}
		w.sealKey()
	}
	out, err := w.finish()
	if err != nil {
		return nil, fmt.Errorf("build batch %v: %w", desc, err)
	}
	return out, nil
}
