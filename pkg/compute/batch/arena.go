package batch

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// An arena is the memory of one plain batch's columns outside the Go heap
// (an anonymous mapping, arena_unix.go), so that the collector's heap, and
// with it the heap goal that paces collection, holds only the batch's small
// metadata. See the package comment for who releases it and when.
type arena struct {
	mem      []byte // the mapping, exactly as mapMemory returned it
	released atomic.Bool
}

// mapped counts the bytes of every arena not yet released, in the whole
// process. It is the one piece of package-level state: process-wide
// accounting of memory the Go runtime does not see (its own counterpart is
// runtime/metrics), read by the replica's memory guard and metrics.
var mapped atomic.Int64

// offHeap switches arenas on for the whole process (SetOffHeap). Off by
// default: a slice a reader keeps from a batch it no longer references
// would read unmapped memory once the batch's arena is released, and the
// audit that every reader copies or holds its batch (doc.go) is not yet
// proven by the whole system's tests, so a replica opts in with
// --offheap-arrangements. Like mapped, process-wide by nature: the Go
// heap it relieves is the process's.
var offHeap atomic.Bool

// SetOffHeap turns arenas on or off for batches sealed from now on; batches
// already sealed keep where they are.
func SetOffHeap(on bool) { offHeap.Store(on) }

// OffHeapEnabled reports SetOffHeap's setting.
func OffHeapEnabled() bool { return offHeap.Load() }

// OffHeapInUse returns the bytes of all arenas of the process not yet
// released: arrangement memory outside the Go heap, which the Go runtime's
// memory statistics and its memory limit do not count.
func OffHeapInUse() int64 { return mapped.Load() }

// offHeapMin is the column bytes from which a sealed batch moves its columns
// into an arena. Smaller batches (a tick's updates) stay on the Go heap: a
// mapping costs a system call and rounds up to whole pages.
const offHeapMin = 64 << 10

// release unmaps the arena, once. It runs as the cleanup of the batch that
// owns the arena (runtime.AddCleanup in toArena), so only when no goroutine
// can reach that batch any more.
func (a *arena) release() {
	if a.released.CompareAndSwap(false, true) {
		unmapMemory(a.mem)
		mapped.Add(-int64(len(a.mem)))
	}
}

// columnBytes returns the bytes of b's stored columns (lengths: a sealed
// batch's columns are exactly as long as their data).
func (b *Batch) columnBytes() int {
	const u32 = int(unsafe.Sizeof(uint32(0)))
	return len(b.keyData) + len(b.valData) +
		u32*(len(b.keyOffs)+len(b.keyVals)+len(b.valOffs)+len(b.valUpds)) +
		8*(len(b.times)+len(b.diffs))
}

// toArena moves the columns of a sealed plain batch into an arena, when
// they are large enough and the platform has anonymous mappings, and
// registers the arena's release for when the batch becomes unreachable. It
// reports whether the columns moved. The seek index stays on the heap (8
// bytes per 32 keys).
func (b *Batch) toArena() bool {
	if !offHeap.Load() {
		return false
	}
	size := b.columnBytes()
	if size < offHeapMin {
		return false
	}
	mem, ok := mapMemory(size)
	if !ok {
		return false
	}
	a := &arena{mem: mem}
	mapped.Add(int64(len(mem)))
	c := carver{mem: mem}
	// 8-byte columns first, then 4-byte, then bytes: every column stays
	// aligned in a page-aligned mapping.
	b.times = carve(&c, b.times)
	b.diffs = carve(&c, b.diffs)
	b.keyOffs = carve(&c, b.keyOffs)
	b.keyVals = carve(&c, b.keyVals)
	b.valOffs = carve(&c, b.valOffs)
	b.valUpds = carve(&c, b.valUpds)
	b.keyData = carve(&c, b.keyData)
	b.valData = carve(&c, b.valData)
	b.arena = a
	runtime.AddCleanup(b, (*arena).release, a)
	return true
}

// carver hands out consecutive pieces of an arena.
type carver struct {
	mem []byte
	off int
}

// carve copies s into the next piece of c's arena and returns the copy,
// capacity-limited to its length. A nil or empty s is returned as is (nil
// columns mean "elided").
func carve[E uint32 | int64 | frontier.Time | byte](c *carver, s []E) []E {
	if len(s) == 0 {
		return s
	}
	n := len(s) * int(unsafe.Sizeof(s[0]))
	p := unsafe.Pointer(unsafe.SliceData(c.mem[c.off : c.off+n]))
	c.off += n
	out := unsafe.Slice((*E)(p), len(s))
	copy(out, s)
	return out[:len(s):len(s)]
}

// OffHeapBytes returns the bytes of b's columns held outside the Go heap
// (whole pages of its arenas; 0 for a batch kept on the heap).
func (b *Batch) OffHeapBytes() int {
	if b.parts != nil {
		n := 0
		for _, p := range b.parts {
			n += p.OffHeapBytes()
		}
		return n
	}
	if b.arena == nil {
		return 0
	}
	return len(b.arena.mem)
}
