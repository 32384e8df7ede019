package batch

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// bigUpdates returns n updates of 8-byte keys from first, stepping by step,
// each with a 16-byte value derived from its key, at time t: about 32 bytes
// of columns per update, so 4,096 of them fill an arena.
func bigUpdates(first, step, n int, t frontier.Time) []update {
	out := make([]update, n)
	for i := range out {
		k := uint64(first + i*step)
		var key [8]byte
		binary.BigEndian.PutUint64(key[:], k)
		out[i] = update{string(key[:]), fmt.Sprintf("value-%010d", k), t, 1}
	}
	return out
}

// readCursor walks c to its end and returns every update it sees, or an
// error if reading faults: a fault in a released (unmapped) arena becomes
// a panic on this goroutine, recovered here.
func readCursor(c Cursor) (out []update, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading a held batch faulted: %v", r)
		}
	}()
	for ; c.KeyValid(); c.StepKey() {
		for ; c.ValValid(); c.StepVal() {
			c.ForEachUpdate(func(t frontier.Time, d int64) {
				out = append(out, update{string(c.Key()), string(c.Val()), t, d})
			})
		}
	}
	return out, nil
}

// collect runs collections until released reports true, at most 100 times.
func collect(released func() bool) bool {
	for range 100 {
		if released() {
			return true
		}
		runtime.GC()
		runtime.Gosched()
	}
	return released()
}

func TestLargeBatchesKeepColumnsOffHeap(t *testing.T) {
	even, odd := bigUpdates(0, 2, 20000, 0), bigUpdates(1, 2, 20000, 1)
	older, newer := build(t, even, desc(0, 1)), build(t, odd, desc(1, 2))
	merged := mustMerge(t, older, newer)
	cases := []struct {
		name    string
		b       *Batch
		want    []update
		offHeap bool
	}{
		{"built", older, even, true},
		{"small", build(t, even[:100], desc(0, 1)), even[:100], false},
		{"merged in parts", merged, append(append([]update(nil), even...), odd...), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Poison (SetPoison) moves small batches off the heap too.
			if got := tc.b.OffHeapBytes() > 0; got != (tc.offHeap || PoisonEnabled()) {
				t.Fatalf("OffHeapBytes() = %d, want off heap: %v", tc.b.OffHeapBytes(), tc.offHeap)
			}
			checkInvariants(t, tc.b)
			if got, want := accumulateList([]*Batch{tc.b}, 5), accumulate(tc.want, 5); len(got) != len(want) {
				t.Fatalf("read %d (key, val)s, want %d", len(got), len(want))
			} else {
				for k, d := range want {
					if got[k] != d {
						t.Fatalf("%q: diff %d, want %d", k, got[k], d)
					}
				}
			}
		})
	}
	if merged.PartCount() < 2 {
		t.Fatalf("merge wrote %d part, want several (the case must cover parted batches)", merged.PartCount())
	}
}

// TestArenaReleasedOnceUnreachable: the arena of a batch nobody holds is
// released (by the batch's cleanup) after a collection: pooled for reuse
// or unmapped, no longer counted as in use by a batch.
func TestArenaReleasedOnceUnreachable(t *testing.T) {
	b := build(t, bigUpdates(0, 1, 8192, 0), desc(0, 1))
	a := b.arena
	if a == nil {
		t.Fatal("a batch of 8,192 updates stayed on the heap")
	}
	held := func() int64 { return OffHeapInUse() - OffHeapUsage().Pooled }
	withA := held()
	if withA < int64(len(a.mem)) {
		t.Fatalf("OffHeapInUse() = %d with an arena of %d bytes mapped", withA, len(a.mem))
	}
	b = nil
	// The cleanup marks the arena released before it pools or unmaps it.
	if !collect(func() bool { return a.state.Load() == int32(arenaFreed) }) {
		t.Fatal("the arena of an unreachable batch was not released after 100 collections")
	}
	// Collections may release other tests' arenas too, never map new ones.
	if in := held(); in > withA-int64(len(a.mem)) {
		t.Fatalf("arenas held by batches: %d bytes after releasing %d of %d", in, len(a.mem), withA)
	}
}

// TestHeldBatchOutlivesMerge: a reader holding a batch (here only a cursor
// on it) reads it exactly after the merge that replaced it has finished,
// its other references are gone, and collections have run, while other
// arenas are mapped and unmapped around it. Releasing a merge's inputs when
// the merge finishes (what an owner that does not know its readers would
// do) makes this read fault or see other data.
func TestHeldBatchOutlivesMerge(t *testing.T) {
	even, odd := bigUpdates(0, 2, 20000, 0), bigUpdates(1, 2, 20000, 1)
	older, newer := build(t, even, desc(0, 1)), build(t, odd, desc(1, 2))
	held := older.Cursor()
	arenas := []*arena{older.arena}
	for _, p := range plainParts(newer) {
		arenas = append(arenas, p.arena)
	}
	merged := mustMerge(t, older, newer)
	older, newer = nil, nil
	for i := range 5 {
		// Churn: new arenas may take the addresses of released ones.
		_ = build(t, bigUpdates(i, 3, 8192, 0), desc(0, 1))
		runtime.GC()
	}
	collect(arenas[1].released.Load) // newer is unreachable: its arena may go
	got, err := readCursor(held)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(even) {
		t.Fatalf("read %d updates from the held batch, want %d", len(got), len(even))
	}
	for i := range got {
		if got[i] != even[i] {
			t.Fatalf("update %d of the held batch reads %v, want %v", i, got[i], even[i])
		}
	}
	runtime.KeepAlive(merged)
}

// arenaStatesOf returns the state of each arena of b's parts.
func arenaStatesOf(b *Batch) []arenaState {
	var out []arenaState
	for _, p := range plainParts(b) {
		if p.arena != nil {
			out = append(out, arenaState(p.arena.state.Load()))
		}
	}
	return out
}

// TestArenaStateAccounting: OffHeapUsage splits the arenas by where their
// batches stand: a merge's parts count as merging until the merge ends,
// then live; a batch a spine merged away counts as retired until its arena
// is released, and releasing it takes its bytes out of that state.
func TestArenaStateAccounting(t *testing.T) {
	even, odd := bigUpdates(0, 2, 20000, 0), bigUpdates(1, 2, 20000, 1)
	older, newer := build(t, even, desc(0, 1)), build(t, odd, desc(1, 2))
	for _, b := range []*Batch{older, newer} {
		for _, s := range arenaStatesOf(b) {
			if s != arenaLive {
				t.Fatalf("a built batch's arena is in state %d, want live", s)
			}
		}
	}
	m, err := NewMerger(older, newer, frontier.Minimum())
	if err != nil {
		t.Fatal(err)
	}
	m.setParts(2048, 1<<20)
	for fuel := 10000; !m.Work(&fuel) && len(m.w.parts) < 2; fuel = 10000 {
	}
	if len(m.w.parts) < 2 || m.Done() {
		t.Fatalf("merge wrote %d parts (done %v); the test needs a merge in progress", len(m.w.parts), m.Done())
	}
	written := 0
	for _, p := range m.w.parts {
		if s := arenaStatesOf(p); len(s) != 1 || s[0] != arenaMerging {
			t.Fatalf("a part of a merge in progress has arena states %v, want [merging]", s)
		}
		written += p.OffHeapBytes()
	}
	if got := OffHeapUsage().Merging; got < int64(written) {
		t.Fatalf("OffHeapUsage().Merging = %d with %d bytes of parts written", got, written)
	}
	for fuel := 1 << 30; !m.Work(&fuel); fuel = 1 << 30 {
	}
	for _, s := range arenaStatesOf(m.Result()) {
		if s != arenaLive {
			t.Fatalf("a finished merge's arena is in state %d, want live", s)
		}
	}
	older.Retire()
	a, n := older.arena, int64(older.OffHeapBytes())
	if s := arenaState(a.state.Load()); s != arenaRetired {
		t.Fatalf("a retired batch's arena is in state %d, want retired", s)
	}
	withA := OffHeapUsage().Retired
	if withA < n {
		t.Fatalf("OffHeapUsage().Retired = %d with a retired arena of %d bytes mapped", withA, n)
	}
	older, m = nil, nil
	// The cleanup marks the arena released before it unmaps and counts
	// it; other tests' arenas may be released meanwhile, none retired.
	if !collect(func() bool { return a.released.Load() && OffHeapUsage().Retired <= withA-n }) {
		t.Fatalf("after 100 collections: arena released %v, OffHeapUsage().Retired = %d, want at most %d",
			a.released.Load(), OffHeapUsage().Retired, withA-n)
	}
	runtime.KeepAlive(newer)
}
