package batch

import (
	"errors"
	"math"
	"slices"
	"unsafe"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// ErrTooLarge reports that a batch would exceed the 4 GiB arena or 2^32-1
// update limit of the uint32 offset columns.
var ErrTooLarge = errors.New("batch: too large for uint32 offsets")

// maxOffset is the largest value an offset column may hold.
const maxOffset = math.MaxUint32

// Batch is an immutable sorted run of updates; see the package comment for
// its layout and invariants. The zero value is not valid: use Empty, a
// Builder or a Merger.
type Batch struct {
	desc Description

	// keyOffs[i]..keyOffs[i+1] bounds key i in keyData; keyVals[i]..keyVals[i+1]
	// bounds its values (indices into valOffs). keyVals is nil when every
	// key has exactly one value (the identity map, not stored).
	keyData []byte
	keyOffs []uint32
	keyVals []uint32

	// valOffs[j]..valOffs[j+1] bounds value j in valData; valUpds[j]..valUpds[j+1]
	// bounds its updates (indices into times and diffs). valUpds is nil when
	// every value has exactly one update.
	valData []byte
	valOffs []uint32
	valUpds []uint32

	// times and diffs hold one entry per update, except that a column whose
	// entries are all equal (a snapshot's diffs of 1, times compacted to
	// since) is stored as maxRun copies of that entry, maxRun being the most
	// updates of any value, so a run of any value can still be sliced out.
	times      []frontier.Time
	diffs      []int64
	constTimes bool
	constDiffs bool
	n          int // number of updates
	// index samples the 8-byte prefix of every indexStride-th key, so a
	// seek first searches this small, cache-resident array and then only a
	// block of keys in the arenas. It costs 8/indexStride bytes per key.
	index []uint64

	// parts, when not nil, holds the batch instead of the columns above:
	// plain batches with this batch's description, keys ascending and
	// disjoint across them (a fuelled merge's output, parted.go). nKeys
	// and nVals are then their sums; n is always the update count.
	parts        []*Batch
	nKeys, nVals int

	// arena, when not nil, holds the columns above outside the Go heap
	// (arena.go); it is released once the batch that sealed it is
	// unreachable.
	arena *arena
	// shares, when not nil, is the batch whose columns, parts and arena
	// this one shares (AbsorbEmpty): held so that the arena's owner, and
	// with it the arena, lives as long as this batch.
	shares *Batch
}

// indexStride is the key sampling distance of Batch.index.
const indexStride = 32

func (b *Batch) buildIndex() {
	n := b.KeyCount()
	if n <= 2*indexStride {
		return
	}
	b.index = make([]uint64, 0, (n+indexStride-1)/indexStride)
	for i := 0; i < n; i += indexStride {
		b.index = append(b.index, prefix8(b.key(i)))
	}
}

// Empty returns a batch with no updates covering desc.
func Empty(desc Description) *Batch {
	return &Batch{
		desc:    desc,
		keyOffs: []uint32{0},
		keyVals: []uint32{0},
		valOffs: []uint32{0},
		valUpds: []uint32{0},
	}
}

// Description returns the batch's (lower, upper, since).
func (b *Batch) Description() Description { return b.desc }

// Lower returns the batch's lower frontier.
func (b *Batch) Lower() frontier.Frontier { return b.desc.Lower }

// Upper returns the batch's upper frontier.
func (b *Batch) Upper() frontier.Frontier { return b.desc.Upper }

// Len returns the number of updates.
func (b *Batch) Len() int { return b.n }

// KeyCount returns the number of distinct keys.
func (b *Batch) KeyCount() int {
	if b.parts != nil {
		return b.nKeys
	}
	return len(b.keyOffs) - 1
}

// ValCount returns the number of distinct (key, val) pairs.
func (b *Batch) ValCount() int {
	if b.parts != nil {
		return b.nVals
	}
	return len(b.valOffs) - 1
}

// SizeBytes returns the bytes the batch's columns occupy, on or off the Go
// heap (capacity, since that is what is resident), for memory accounting.
func (b *Batch) SizeBytes() int {
	if b.parts != nil {
		return partsSizeBytes(b)
	}
	const u32 = int(unsafe.Sizeof(uint32(0)))
	return int(unsafe.Sizeof(*b)) +
		cap(b.keyData) + cap(b.valData) +
		u32*(cap(b.keyOffs)+cap(b.keyVals)+cap(b.valOffs)+cap(b.valUpds)) +
		8*(cap(b.times)+cap(b.diffs)+cap(b.index))
}

// key returns key i, capacity-limited so appends by a caller cannot write
// into the arena.
func (b *Batch) key(i int) []byte {
	s, e := b.keyOffs[i], b.keyOffs[i+1]
	return b.keyData[s:e:e]
}

func (b *Batch) val(j int) []byte {
	s, e := b.valOffs[j], b.valOffs[j+1]
	return b.valData[s:e:e]
}

// vals returns the range of key i's values.
func (b *Batch) vals(i int) (start, end int) {
	if b.keyVals == nil {
		return i, i + 1
	}
	return int(b.keyVals[i]), int(b.keyVals[i+1])
}

// updates returns the times and diffs of value j, capacity-limited.
func (b *Batch) updates(j int) ([]frontier.Time, []int64) {
	s, e := j, j+1
	if b.valUpds != nil {
		s, e = int(b.valUpds[j]), int(b.valUpds[j+1])
	}
	ts, ds := b.times, b.diffs
	if b.constTimes {
		ts = ts[: e-s : e-s]
	} else {
		ts = ts[s:e:e]
	}
	if b.constDiffs {
		ds = ds[: e-s : e-s]
	} else {
		ds = ds[s:e:e]
	}
	return ts, ds
}

// seal turns a batch the writer filled (every column complete) into its
// stored form: it elides identity offset columns and constant time and diff
// columns, moves large batches' columns into an arena off the Go heap
// (arena.go), trims the others' over-allocated columns so SizeBytes reflects
// the data (the writer sizes for the worst case, and consolidation may leave
// far fewer keys or updates), and builds the seek index.
func seal(b *Batch) *Batch {
	b.n = len(b.times)
	maxRun := 1
	for j := 1; j < len(b.valUpds); j++ {
		maxRun = max(maxRun, int(b.valUpds[j]-b.valUpds[j-1]))
	}
	if b.n > 0 && allEqual(b.times) {
		b.times, b.constTimes = repeat(b.times[0], maxRun), true
	}
	if b.n > 0 && allEqual(b.diffs) {
		b.diffs, b.constDiffs = repeat(b.diffs[0], maxRun), true
	}
	if len(b.keyOffs) == len(b.valOffs) {
		b.keyVals = nil
	}
	if len(b.valOffs)-1 == b.n {
		b.valUpds = nil
	}
	if !b.toArena() {
		b.keyData = clip(b.keyData)
		b.keyOffs = clip(b.keyOffs)
		b.keyVals = clip(b.keyVals)
		b.valData = clip(b.valData)
		b.valOffs = clip(b.valOffs)
		b.valUpds = clip(b.valUpds)
		b.times = clip(b.times)
		b.diffs = clip(b.diffs)
	}
	b.buildIndex()
	return b
}

func allEqual[E comparable](s []E) bool {
	for _, x := range s {
		if x != s[0] {
			return false
		}
	}
	return true
}

func repeat[E any](x E, n int) []E {
	s := make([]E, n)
	for i := range s {
		s[i] = x
	}
	return s
}

// clip copies s into a right-sized slice when more than a quarter of its
// capacity is unused.
func clip[S ~[]E, E any](s S) S {
	if cap(s)-len(s) > len(s)/4+8 {
		return slices.Clone(s)
	}
	return s
}

// AccumulateAll returns the sum of the diffs of every update at a time <= t:
// the total multiplicity of the batch's collection as of t. It reads only
// the time and diff columns, and a batch whose times and diffs are constant
// (a settled snapshot) answers without a loop.
func (b *Batch) AccumulateAll(t frontier.Time) int64 {
	if b.n == 0 {
		return 0
	}
	if b.parts != nil {
		var sum int64
		for _, p := range b.parts {
			sum += p.AccumulateAll(t)
		}
		return sum
	}
	if b.constTimes {
		if b.times[0] > t {
			return 0
		}
		if b.constDiffs {
			return b.diffs[0] * int64(b.n)
		}
		var sum int64
		for _, d := range b.diffs {
			sum += d
		}
		return sum
	}
	var sum int64
	for i, ut := range b.times {
		if ut <= t {
			if b.constDiffs {
				sum += b.diffs[0]
			} else {
				sum += b.diffs[i]
			}
		}
	}
	return sum
}
