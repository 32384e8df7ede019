package batch

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// The arena pool keeps the mappings of released arenas for later arenas of
// the same size class, instead of unmapping them. A merge writes its output
// in parts of about 2 MiB while the parts of its inputs are released a
// collection later: with a fresh mapping per part every page of every
// merge's output faulted on first write, and that made hydration with
// arenas 1.6-2.0x slower than without (docs/benchmarks.md, "arenas and
// hydration"). Reused pages are already resident.
//
// A fresh mapping is as large as its arena; a pooled one serves an arena
// up to a quarter smaller, whose accounting then counts the mapping's whole
// length (resident if an earlier arena wrote it).
//
// The pool holds at most its limit (SetArenaPoolLimit, DefaultArenaPoolLimit),
// counted in OffHeapInUse and OffHeapStats.Pooled because its pages are
// resident, and returns to the system what was not reused for
// arenaPoolIdle. Arenas mapped under poison are never pooled (a released
// poisoned arena is quarantined, poison.go), so poison still finds a slice
// read after its batch was released; without poison such a read returns
// another batch's bytes instead of faulting, which is why the rule in
// doc.go is checked under poison.

// DefaultArenaPoolLimit is the pool's limit unless SetArenaPoolLimit
// changes it: a Reclaimer's worth of dropped batches, so that what one
// reclaiming collection releases can be reused.
const DefaultArenaPoolLimit = ReclaimBytes

// arenaPoolIdle is how long a pooled mapping waits for reuse before it is
// unmapped.
const arenaPoolIdle = 10 * time.Second

// arenaPoolLimit is the pool's limit in bytes; 0 turns the pool off.
var arenaPoolLimit atomic.Int64

// pool is the process's pool: like mapped, process-wide by nature (the
// memory is the process's, and any batch may reuse any other's mapping).
var pool = arenaPool{free: map[int][]pooledMapping{}}

func init() { arenaPoolLimit.Store(DefaultArenaPoolLimit) }

// SetArenaPoolLimit sets the bytes of released arenas kept for reuse (0:
// none, every released arena is unmapped at once) and unmaps what the pool
// holds beyond it.
func SetArenaPoolLimit(n int64) {
	arenaPoolLimit.Store(max(n, 0))
	pool.trim(time.Now(), false)
}

// ArenaPoolLimit reports SetArenaPoolLimit's setting.
func ArenaPoolLimit() int64 { return arenaPoolLimit.Load() }

type pooledMapping struct {
	mem   []byte
	since time.Time
}

type arenaPool struct {
	mu        sync.Mutex
	free      map[int][]pooledMapping // by size class (the mappings' length)
	bytes     int64
	trimTimer *time.Timer // pending trim; nil when none is scheduled
}

// pageSize is the step of the classes of small mappings.
const pageSize = 4 << 10

// arenaClass is the class a mapping of size bytes is pooled under: size
// rounded down to one of eight steps per doubling (whole pages below 32
// KiB). A request looks in its own class and the next, so a pooled mapping
// serves sizes up to two steps (a quarter) below its own.
func arenaClass(size int) int {
	if size < 8*pageSize {
		return size / pageSize * pageSize
	}
	step := 1 << (bits.Len(uint(size)) - 4)
	return size / step * step
}

// nextClass returns the class after c.
func nextClass(c int) int {
	if c < 8*pageSize {
		return c + pageSize
	}
	return c + 1<<(bits.Len(uint(c))-4)
}

// get returns a pooled mapping of at least size bytes and at most a class
// or two larger, if the pool holds one, counted live from then on.
func (p *arenaPool) get(size int) ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, class := range [2]int{arenaClass(size), nextClass(arenaClass(size))} {
		list := p.free[class]
		// Last in, first out (the most recently used pages are the
		// likeliest to be resident and in cache), looking at a few.
		for i := len(list) - 1; i >= 0 && i >= len(list)-8; i-- {
			if len(list[i].mem) < size {
				continue
			}
			m := list[i]
			p.free[class] = append(list[:i], list[i+1:]...)
			n := int64(len(m.mem))
			p.bytes -= n
			// Counted under the lock, with the pool's own bytes, so that a
			// release and a reuse racing never show a negative state.
			stateBytes[arenaPooled].Add(-n)
			stateBytes[arenaLive].Add(n)
			return m.mem, true
		}
	}
	return nil, false
}

// put keeps mem for reuse, counted pooled, and reports whether it did;
// the caller unmaps what the pool refuses.
func (p *arenaPool) put(mem []byte, now time.Time) bool {
	n := int64(len(mem))
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+n > arenaPoolLimit.Load() {
		return false
	}
	c := arenaClass(len(mem))
	p.free[c] = append(p.free[c], pooledMapping{mem: mem, since: now})
	p.bytes += n
	stateBytes[arenaPooled].Add(n)
	if p.trimTimer == nil {
		p.trimTimer = time.AfterFunc(arenaPoolIdle, func() { p.trim(time.Now(), true) })
	}
	return true
}

// trim unmaps the mappings pooled for arenaPoolIdle or more, or all of them
// beyond the limit, and schedules the next trim while any remain. fromTimer
// says the pending timer is the caller.
func (p *arenaPool) trim(now time.Time, fromTimer bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if fromTimer {
		p.trimTimer = nil
	}
	limit := arenaPoolLimit.Load()
	for class, list := range p.free {
		kept := list[:0]
		for _, m := range list {
			if now.Sub(m.since) >= arenaPoolIdle || p.bytes > limit {
				p.bytes -= int64(len(m.mem))
				unmapPooled(m.mem)
				continue
			}
			kept = append(kept, m)
		}
		if len(kept) == 0 {
			delete(p.free, class)
		} else {
			p.free[class] = kept
		}
	}
	if p.bytes > 0 && p.trimTimer == nil {
		p.trimTimer = time.AfterFunc(arenaPoolIdle, func() { p.trim(time.Now(), true) })
	}
}

// acquireArena returns memory for an arena of size bytes: a pooled mapping
// a little larger when pooling applies and the pool has one, else a fresh
// one. The accounting counts it live.
func acquireArena(size int, poisoned bool) ([]byte, bool) {
	if !poisoned && arenaPoolLimit.Load() > 0 {
		if mem, ok := pool.get(size); ok {
			return mem, true
		}
	}
	mem, ok := mapMemory(size)
	if ok {
		mapped.Add(int64(len(mem)))
		stateBytes[arenaLive].Add(int64(len(mem)))
	}
	return mem, ok
}

// releaseArena gives up a's mapping, in state from: to the pool, to
// quarantine, or back to the system.
func releaseArena(mem []byte, poisoned bool, from arenaState) {
	n := int64(len(mem))
	stateBytes[from].Add(-n)
	switch {
	case poisoned:
		quarantine(mem)
		mapped.Add(-n)
	case pool.put(mem, time.Now()):
	default:
		unmapMemory(mem)
		mapped.Add(-n)
	}
}

// unmapPooled returns a pooled mapping to the system.
func unmapPooled(mem []byte) {
	n := int64(len(mem))
	stateBytes[arenaPooled].Add(-n)
	mapped.Add(-n)
	unmapMemory(mem)
}

// held returns the bytes the pool holds.
func (p *arenaPool) held() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bytes
}
