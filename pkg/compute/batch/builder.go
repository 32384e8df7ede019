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
	// sealing is set between StartBuild and the BuildStep that returns
	// the batch: w is the batch being written and at the next sorted
	// update to write.
	sealing bool
	w       writer
	at      int
}

// Push adds one update. The bytes of key and val are copied. Push must not
// be called while a build is in progress (between StartBuild and the
// BuildStep that returns its batch).
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
	b.ReserveUpdates(n)
	b.ReserveBytes(n * bytesPerUpdate)
}

// ReserveUpdates grows the builder's update buffer for n more updates and
// reports whether it had to allocate. A reservation is one allocation of
// the whole size (which the Go runtime may clear at once), where growth by
// Push copies what was staged onto fresh memory at each doubling.
func (b *Builder) ReserveUpdates(n int) bool {
	if cap(b.upds)-len(b.upds) >= n {
		return false
	}
	b.upds = slices.Grow(b.upds, n)
	return true
}

// ReserveBytes grows the builder's key and value buffer for n more bytes
// and reports whether it had to allocate.
func (b *Builder) ReserveBytes(n int) bool {
	if cap(b.stage)-len(b.stage) >= n {
		return false
	}
	b.stage = slices.Grow(b.stage, n)
	return true
}

// Reset discards pushed updates and any build in progress, keeping
// buffers.
func (b *Builder) Reset() {
	b.stage = b.stage[:0]
	b.upds = b.upds[:0]
	b.keyBytes = 0
	b.tooLarge = false
	b.sealing, b.w, b.at = false, writer{spare: b.w.spare}, 0
}

// Building reports whether a build is in progress (StartBuild was called
// and BuildStep has not yet returned its batch).
func (b *Builder) Building() bool { return b.sealing }

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
// disappear. It is StartBuild followed by one unbounded BuildStep.
func (b *Builder) Build(desc Description) (*Batch, error) {
	if err := b.StartBuild(desc); err != nil {
		return nil, err
	}
	return b.BuildStep(nil)
}

// StartBuild begins a build in steps of the pushed updates (see Build):
// it checks their times and sorts them (the sort's CPU is a small share
// of a build's: writing the batch, fresh memory, is most of it), and
// BuildStep then writes the batch a bounded number of updates at a time.
// On error the builder is reset.
func (b *Builder) StartBuild(desc Description) error {
	if b.sealing {
		return fmt.Errorf("start build %v: %w", desc, ErrBuilding)
	}
	if err := b.prepare(desc); err != nil {
		b.release()
		return err
	}
	b.upds, b.sortBuf = b.sortStaged(b.upds, b.sortBuf)
	b.w = newWriter(desc, b.w.spare, len(b.upds), b.keyBytes, len(b.upds), len(b.stage)-b.keyBytes, len(b.upds))
	b.at, b.sealing = 0, true
	return nil
}

// ErrBuilding reports a StartBuild while another build is in progress.
var ErrBuilding = errors.New("batch: builder already building")

// prepare validates desc and the pushed updates' times, advancing them by
// desc.Since.
func (b *Builder) prepare(desc Description) error {
	if err := desc.Validate(); err != nil {
		return err
	}
	if b.tooLarge {
		return fmt.Errorf("build batch %v: %w", desc, ErrTooLarge)
	}
	compact := !desc.Since.IsClosed() && !desc.Since.LessEqual(desc.Lower)
	for i := range b.upds {
		u := &b.upds[i]
		if !desc.Lower.LessEqualTime(u.time) || desc.Upper.LessEqualTime(u.time) {
			return fmt.Errorf("build batch %v: time %d: %w", desc, u.time, ErrTimeOutOfRange)
		}
		if compact {
			u.time = desc.Since.AdvanceTime(u.time)
		}
	}
	return nil
}

// BuildStep writes the build in progress (StartBuild) into its batch,
// whole keys at a time, until it has consumed *limit pushed updates or
// more (limit nil: all of them), subtracting what it consumed from
// *limit; it may overrun *limit by the updates of one key. Once every
// update is written it returns the batch and resets the builder;
// before, it returns nil.
func (b *Builder) BuildStep(limit *int) (*Batch, error) {
	if !b.sealing {
		return nil, fmt.Errorf("build step: %w", ErrNotBuilding)
	}
	upds, w := b.upds, &b.w
	i := b.at
	for i < len(upds) && (limit == nil || *limit > 0) {
		start := i
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
		if limit != nil {
			*limit -= i - start
		}
	}
	b.at = i
	if i < len(upds) {
		return nil, nil
	}
	out, err := w.finish()
	desc := w.desc
	b.sealing, b.w, b.at = false, writer{spare: b.w.spare}, 0
	b.release()
	if err != nil {
		return nil, fmt.Errorf("build batch %v: %w", desc, err)
	}
	return out, nil
}

// ErrNotBuilding reports a BuildStep without a build in progress.
var ErrNotBuilding = errors.New("batch: no build in progress")
