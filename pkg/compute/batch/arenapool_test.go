package batch

import (
	"runtime"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

func TestArenaClass(t *testing.T) {
	const k = 1 << 10
	cases := []struct{ size, class, next int }{
		{4 * k, 4 * k, 8 * k},
		{5 * k, 4 * k, 8 * k},
		{32 * k, 32 * k, 36 * k},
		{64 * k, 64 * k, 72 * k},
		{71 * k, 64 * k, 72 * k},
		{2 << 20, 2 << 20, 2<<20 + 256*k},
		{2<<20 + 200*k, 2 << 20, 2<<20 + 256*k},
	}
	for _, tc := range cases {
		if got := arenaClass(tc.size); got != tc.class {
			t.Errorf("arenaClass(%d) = %d, want %d", tc.size, got, tc.class)
		}
		if got := nextClass(arenaClass(tc.size)); got != tc.next {
			t.Errorf("nextClass(arenaClass(%d)) = %d, want %d", tc.size, got, tc.next)
		}
	}
	// Every mapping a request may get is at least its size and at most a
	// quarter larger (above 32 KiB).
	for size := 32 * k; size < 64<<20; size = size*9/8 + 4*k + 1 {
		if hi := nextClass(nextClass(arenaClass(size))); float64(hi) > 1.25*float64(size)+4*k {
			t.Errorf("a request of %d bytes may get a mapping of up to %d", size, hi)
		}
	}
}

// withPoolLimit runs the test with the pool's limit set to n and empty.
func withPoolLimit(t *testing.T, n int64) {
	t.Helper()
	if PoisonEnabled() {
		t.Skip("poisoned arenas are never pooled")
	}
	old := ArenaPoolLimit()
	SetArenaPoolLimit(0) // empties the pool
	SetArenaPoolLimit(n)
	t.Cleanup(func() { SetArenaPoolLimit(old) })
}

// releaseUnreachable builds a batch of n updates, drops it and collects
// until its arena is released; it returns the arena's length.
func releaseUnreachable(t *testing.T, n int) int {
	t.Helper()
	b := build(t, bigUpdates(0, 1, n, 0), desc(0, 1))
	a := b.arena
	if a == nil {
		t.Fatalf("a batch of %d updates stayed on the heap", n)
	}
	size := len(a.mem)
	b = nil
	// The cleanup marks the arena released before it pools or unmaps it.
	if !collect(func() bool { return a.state.Load() == int32(arenaFreed) }) {
		t.Fatal("the arena of an unreachable batch was not released after 100 collections")
	}
	return size
}

// TestArenaPoolReusesReleasedMappings: the next arena of a released one's
// size class takes its mapping (no new mapping, pages already resident),
// and the accounting moves its bytes from pooled back to live.
func TestArenaPoolReusesReleasedMappings(t *testing.T) {
	withPoolLimit(t, 64<<20)
	size := releaseUnreachable(t, 8192)
	if got := OffHeapUsage().Pooled; got < int64(size) {
		t.Fatalf("OffHeapUsage().Pooled = %d after releasing an arena of %d bytes", got, size)
	}
	mappedBefore := OffHeapInUse()
	b := build(t, bigUpdates(1, 1, 8192, 0), desc(0, 1))
	if b.arena == nil {
		t.Fatal("a batch of 8,192 updates stayed on the heap")
	}
	// Only this goroutine builds batches, and the limit unmaps nothing
	// here, so the mapped bytes can only have grown by a new mapping.
	if got := OffHeapInUse(); got > mappedBefore {
		t.Fatalf("OffHeapInUse() grew from %d to %d: a new mapping instead of the pooled one", mappedBefore, got)
	}
	checkInvariants(t, b)
	if got, want := accumulateList([]*Batch{b}, 5), accumulate(bigUpdates(1, 1, 8192, 0), 5); len(got) != len(want) {
		t.Fatalf("read %d (key, val)s from a batch in a reused mapping, want %d", len(got), len(want))
	}
}

// TestArenaPoolIsBounded: releases beyond the limit are unmapped, and
// SetArenaPoolLimit(0) unmaps everything pooled.
func TestArenaPoolIsBounded(t *testing.T) {
	size := releaseUnreachable(t, 8192) // the class size, whatever the pool held
	withPoolLimit(t, int64(size))
	for range 3 {
		releaseUnreachable(t, 8192)
	}
	if got := pool.held(); got > int64(size) {
		t.Fatalf("the pool holds %d bytes with a limit of %d", got, size)
	}
	SetArenaPoolLimit(0)
	if got := pool.held(); got != 0 {
		t.Fatalf("the pool holds %d bytes after SetArenaPoolLimit(0)", got)
	}
}

// TestArenaPoolTrimsIdleMappings: a mapping not reused for arenaPoolIdle
// is unmapped.
func TestArenaPoolTrimsIdleMappings(t *testing.T) {
	withPoolLimit(t, 64<<20)
	releaseUnreachable(t, 8192)
	if pool.held() == 0 {
		t.Fatal("nothing pooled after a release")
	}
	pool.trim(time.Now().Add(arenaPoolIdle/2), false)
	if pool.held() == 0 {
		t.Fatal("a mapping pooled for half the idle time was unmapped")
	}
	pool.trim(time.Now().Add(arenaPoolIdle), false)
	if got := pool.held(); got != 0 {
		t.Fatalf("the pool holds %d bytes after the idle time", got)
	}
}

// TestMergeWritesPartsInSpareColumns: a merge whose parts move into arenas
// writes each next part in the heap columns of the one before, so the heap
// it allocates is about one part's columns, not its whole output.
func TestMergeWritesPartsInSpareColumns(t *testing.T) {
	if !OffHeapEnabled() {
		t.Skip("arenas are off")
	}
	even, odd := bigUpdates(0, 2, 20000, 0), bigUpdates(1, 2, 20000, 1)
	older, newer := build(t, even, desc(0, 1)), build(t, odd, desc(1, 2))
	m, err := NewMerger(older, newer, frontier.Minimum())
	if err != nil {
		t.Fatal(err)
	}
	m.setParts(4096, 1<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for fuel := 1 << 30; !m.Work(&fuel); fuel = 1 << 30 {
	}
	runtime.ReadMemStats(&after)
	merged := m.Result()
	if merged.PartCount() < 8 {
		t.Fatalf("merge wrote %d parts, the test needs several", merged.PartCount())
	}
	out := merged.OffHeapBytes()
	if heap := after.TotalAlloc - before.TotalAlloc; heap > uint64(out)/3 {
		t.Fatalf("a merge of %d parts (%d bytes in arenas) allocated %d bytes of heap, want at most a third of its output",
			merged.PartCount(), out, heap)
	}
}
