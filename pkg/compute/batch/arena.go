package batch

import (
	"os"
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
	// poisoned: mapped under SetPoison, so released by quarantine, not
	// unmapped.
	poisoned bool
	// state is where the arena's batch stands (an arenaState), for the
	// accounting in stateBytes; it only says who is expected to hold it.
	state atomic.Int32
}

// An arenaState is where an arena's batch stands in the life of an
// arrangement, for accounting only: nothing is released by state.
type arenaState int32

const (
	// arenaLive: a batch built, or the result of a finished merge.
	arenaLive arenaState = iota
	// arenaMerging: a part of the output of a merge still in progress
	// (mapped beside the merge's inputs until the merge finishes).
	arenaMerging
	// arenaRetired: a batch a spine merged away (Retire); still mapped
	// only while a reader holds it or until the collector finds it
	// unreachable.
	arenaRetired
	// arenaPooled: released, its mapping kept for reuse (arenapool.go).
	arenaPooled
	arenaStates
	// arenaFreed: the arena's release is done (pooled, quarantined or
	// unmapped, and counted); its bytes are no longer the arena's.
	arenaFreed arenaState = -1
)

// mapped counts the bytes of every mapping the package holds (arenas not
// yet released, and released ones pooled for reuse), in the whole process,
// and stateBytes splits them by arenaState. They are the one
// piece of package-level state: process-wide accounting of memory the Go
// runtime does not see (its own counterpart is runtime/metrics), read by
// the replica's memory guard and metrics.
var (
	mapped     atomic.Int64
	stateBytes [arenaStates]atomic.Int64
)

// offHeap switches arenas on for the whole process (SetOffHeap). On by
// default; a replica turns them off with --offheap-arrangements=false. Safe
// because every reader holds the batch it reads or copies what it keeps
// past it (doc.go, and the audit in docs/design/runtime.md), which the
// suites check under poison (below). Like mapped, process-wide by nature:
// the Go heap it relieves is the process's.
var offHeap atomic.Bool

// PoisonEnv names the environment variable that turns on poison (SetPoison)
// when the package initialises: TANDEM_ARENA_POISON=1 go test ./pkg/...
// runs a suite with it, and processes a test starts inherit it.
const PoisonEnv = "TANDEM_ARENA_POISON"

// poison is a debug mode for finding slices kept past their batch (SetPoison).
var poison atomic.Bool

func init() {
	offHeap.Store(true)
	poison.Store(os.Getenv(PoisonEnv) == "1")
}

// SetOffHeap turns arenas on or off for batches sealed from now on; batches
// already sealed keep where they are.
func SetOffHeap(on bool) { offHeap.Store(on) }

// OffHeapEnabled reports SetOffHeap's setting.
func OffHeapEnabled() bool { return offHeap.Load() }

// SetPoison turns poison on or off for batches sealed and arenas released
// from now on. With poison on, every sealed batch with columns moves them
// into an arena whatever their size (so small test data exercises arenas
// too), and a released arena is not unmapped but made inaccessible (its
// pages returned to the system, its addresses kept reserved, poison.go):
// a slice read after its batch was released faults at once, on the first
// read, instead of reading whatever a later mapping put at that address.
// For tests only: it costs a system call per batch and keeps address space.
func SetPoison(on bool) { poison.Store(on) }

// PoisonEnabled reports SetPoison's setting.
func PoisonEnabled() bool { return poison.Load() }

// OffHeapInUse returns the bytes of all arenas of the process not yet
// released, and of released ones pooled for reuse (resident too):
// arrangement memory outside the Go heap, which the Go runtime's memory
// statistics and its memory limit do not count.
func OffHeapInUse() int64 { return mapped.Load() }

// OffHeapStats splits OffHeapInUse by where the arenas' batches stand.
type OffHeapStats struct {
	// Live is the arenas of batches built or merged and not merged away.
	Live int64
	// Merging is the parts written so far by merges still in progress:
	// mapped beside those merges' inputs, which stay Live until the merge
	// ends.
	Merging int64
	// Retired is the arenas of batches a spine has merged away (Retire)
	// that are still mapped: a reader (a snapshot, a cursor, an import)
	// still holds them, or the collector has not yet found them
	// unreachable.
	Retired int64
	// Pooled is released arenas whose mappings are kept for reuse
	// (arenapool.go), at most the pool's limit.
	Pooled int64
}

// OffHeapUsage returns the process's arena bytes by state.
func OffHeapUsage() OffHeapStats {
	return OffHeapStats{
		Live:    stateBytes[arenaLive].Load(),
		Merging: stateBytes[arenaMerging].Load(),
		Retired: stateBytes[arenaRetired].Load(),
		Pooled:  stateBytes[arenaPooled].Load(),
	}
}

// setState moves a's bytes to state s in the accounting.
func (a *arena) setState(s arenaState) {
	if from := arenaState(a.state.Swap(int32(s))); from != s {
		n := int64(len(a.mem))
		stateBytes[from].Add(-n)
		stateBytes[s].Add(n)
	}
}

// setArenaState moves the arenas of b (of each of its parts) to state s.
func (b *Batch) setArenaState(s arenaState) {
	for _, p := range plainParts(b) {
		if p.arena != nil {
			p.arena.setState(s)
		}
	}
}

// Retire records that a spine has merged b away (for OffHeapUsage). It
// releases nothing: b's arenas stay mapped for as long as anything holds
// b. A batch shared by several spines (an import's mirror) counts as
// retired from the first retirement.
func (b *Batch) Retire() { b.setArenaState(arenaRetired) }

// offHeapMin is the column bytes from which a sealed batch moves its columns
// into an arena. Smaller batches (a tick's updates) stay on the Go heap: a
// mapping costs a system call and rounds up to whole pages.
const offHeapMin = 64 << 10

// release gives the arena's mapping up, once: to the pool for reuse, or
// back to the system (arenapool.go). It runs as the cleanup of the batch
// that owns the arena (runtime.AddCleanup in toArena), so only when no
// goroutine can reach that batch any more.
func (a *arena) release() {
	if a.released.CompareAndSwap(false, true) {
		releaseArena(a.mem, a.poisoned, arenaState(a.state.Load()))
		a.state.Store(int32(arenaFreed))
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
	poisoned := poison.Load()
	if size == 0 || size < offHeapMin && !poisoned {
		return false
	}
	mem, ok := acquireArena(size, poisoned)
	if !ok {
		return false
	}
	a := &arena{mem: mem, poisoned: poisoned}
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

// ReclaimBytes is the off-heap memory of dropped batches after which a
// Reclaimer starts a collection.
const ReclaimBytes = 64 << 20

// A Reclaimer is told about batches its owner drops (a spine's merge
// inputs, a build's merged runs) and starts a collection in the background
// once they hold At bytes of arenas (ReclaimBytes when At is 0). A dropped
// batch's arena is released only once the collector finds the batch
// unreachable, and arenas do not count towards the heap goal, so an owner
// that drops a GiB of them but allocates little heap would otherwise keep
// them mapped until some unrelated collection. The zero value is ready to
// use; a Reclaimer is not safe for concurrent use.
type Reclaimer struct {
	// At is the threshold in bytes (0: ReclaimBytes).
	At      int
	dropped int
}

// Dropped records that the owner no longer holds bs (Retire) and reports
// whether it started a collection.
func (r *Reclaimer) Dropped(bs ...*Batch) bool {
	for _, b := range bs {
		b.Retire()
		r.dropped += b.OffHeapBytes()
	}
	at := r.At
	if at <= 0 {
		at = ReclaimBytes
	}
	if r.dropped < at {
		return false
	}
	r.dropped = 0
	go runtime.GC()
	return true
}
