package spine

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// bigBatch returns a batch at [t, t+1) of n keys from first with 16-byte
// values: large enough that its columns live in an arena off the Go heap.
func bigBatch(t *testing.T, first, n int, at frontier.Time) ([]update, *batch.Batch) {
	t.Helper()
	upds := make([]update, n)
	for i := range upds {
		var key [8]byte
		binary.BigEndian.PutUint64(key[:], uint64(first+i))
		upds[i] = update{string(key[:]), fmt.Sprintf("value-%010d", first+i), at, 1}
	}
	b := mk(t, at, at+1, upds...)
	if b.OffHeapBytes() == 0 {
		t.Fatalf("a batch of %d updates stayed on the Go heap", n)
	}
	return upds, b
}

// readFaulting is read, recovering a fault in a released arena as an error.
func readFaulting(batches []*batch.Batch, t frontier.Time) (got map[kv]int64, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading a snapshot faulted: %v", r)
		}
	}()
	return read(batches, t), nil
}

// TestSnapshotOutlivesMerges: a reader's snapshot of the chain stays
// readable, exactly, after the spine has merged its batches away and
// collections have run; the spine's batches and the reader's share nothing
// the spine frees.
func TestSnapshotOutlivesMerges(t *testing.T) {
	s := New(frontier.At(0))
	var all []update
	insert := func(i int) {
		upds, b := bigBatch(t, i*5000, 5000, frontier.Time(i))
		all = append(all, upds...)
		if err := s.Insert(b); err != nil {
			t.Fatal(err)
		}
	}
	insert(0)
	insert(1)
	snap := s.Snapshot()
	want := naive(all, 10)
	if err := s.SetPhysical(frontier.At(10)); err != nil {
		t.Fatal(err)
	}
	for i := 2; i < 8; i++ {
		insert(i)
	}
	for fuel := 1 << 30; s.Exert(&fuel); fuel = 1 << 30 {
	}
	for _, b := range s.Batches() {
		for _, h := range snap.Batches {
			if b == h {
				t.Fatal("the spine still holds a snapshot batch: the test needs them merged away")
			}
		}
	}
	for range 5 {
		runtime.GC()
	}
	got, err := readFaulting(snap.Batches, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("snapshot reads %d (key, val)s, want %d", len(got), len(want))
	}
	for k, d := range want {
		if got[k] != d {
			t.Fatalf("snapshot: %q has diff %d, want %d", k, got[k], d)
		}
	}
}

// TestDroppedBatchesReclaimed: once the spine has dropped enough off-heap
// memory (merge inputs), it starts a collection itself, so batches nobody
// holds are reclaimed (and their arenas released, which package batch
// tests) without the process allocating enough Go heap to trigger one.
// Automatic collection is off for the test, so a collection that happens is
// one the spine asked for.
func TestDroppedBatchesReclaimed(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	cases := []struct {
		name      string
		reclaimAt int
		want      bool
	}{
		{"below the threshold", 1 << 40, false},
		{"at the threshold", 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(frontier.At(0))
			s.reclaim.At = tc.reclaimAt
			for i := range 4 {
				_, b := bigBatch(t, i*5000, 5000, frontier.Time(i))
				if err := s.Insert(b); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.SetPhysical(frontier.At(4)); err != nil {
				t.Fatal(err)
			}
			before := gcCycles()
			for fuel := 1 << 30; s.Exert(&fuel); fuel = 1 << 30 {
			}
			if s.BatchCount() != 1 {
				t.Fatalf("spine holds %d batches after merging, want 1", s.BatchCount())
			}
			// Wait for the spine's background collection (bounded; not a
			// timing assertion: it fails only if no collection ever comes).
			for i := 0; tc.want && i < 2000 && gcCycles() == before; i++ {
				time.Sleep(time.Millisecond)
			}
			if got := gcCycles() > before; got != tc.want {
				t.Fatalf("collection after dropping merge inputs: %v, want %v", got, tc.want)
			}
		})
	}
}

// gcCycles returns the number of completed collections.
func gcCycles() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}

// TestSnapshotAfterEmptyTicksNotRewritten: an arrangement whose snapshot
// arrives after a run of empty batches (ticks sealed while the snapshot
// was still being built, merges held back by the physical frontier) takes
// those empty batches into the snapshot without merging it: no merge reads
// the snapshot's updates, and its arena is the only one mapped for it.
// Merging them instead (an empty older batch is in a lower size class than
// the snapshot) rewrites the whole snapshot, its copy mapped beside it
// until the merge ends: an index's size again, while readers run.
func TestSnapshotAfterEmptyTicksNotRewritten(t *testing.T) {
	cases := []struct {
		name    string
		empties int
	}{{"one empty tick", 1}, {"a run of empty ticks", 37}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(frontier.At(0))
			for i := range tc.empties {
				if err := s.Insert(mk(t, frontier.Time(i), frontier.Time(i+1))); err != nil {
					t.Fatal(err)
				}
			}
			at := frontier.Time(tc.empties)
			upds, snap := bigBatch(t, 0, 20000, at)
			if err := s.Insert(snap); err != nil {
				t.Fatal(err)
			}
			if err := s.SetPhysical(frontier.At(at + 1)); err != nil {
				t.Fatal(err)
			}
			for fuel := 1 << 30; s.Exert(&fuel); fuel = 1 << 30 {
			}
			chain := s.Batches()
			if len(chain) != 1 {
				t.Fatalf("spine holds %d batches, want 1", len(chain))
			}
			// Merging the empty batches among themselves costs a unit or
			// so each; reading the snapshot would cost 20,000.
			if w := s.WorkDone(); w >= int64(len(upds)) {
				t.Fatalf("merge work %d for %d empty batches before a snapshot of %d updates: the snapshot was rewritten", w, tc.empties, len(upds))
			}
			if got, want := chain[0].OffHeapBytes(), snap.OffHeapBytes(); got != want {
				t.Fatalf("the chain maps %d off-heap bytes for a snapshot of %d", got, want)
			}
			if d := chain[0].Description(); d.Lower != frontier.At(0) || d.Upper != frontier.At(at+1) {
				t.Fatalf("chain batch covers %v, want [0, %d)", d, at+1)
			}
			got, want := read(chain, at), naive(upds, at)
			if len(got) != len(want) {
				t.Fatalf("read %d (key, val)s, want %d", len(got), len(want))
			}
			for k, d := range want {
				if got[k] != d {
					t.Fatalf("%q: diff %d, want %d", k, got[k], d)
				}
			}
		})
	}
}
