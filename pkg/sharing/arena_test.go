package sharing

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// TestImportKeepsOffHeapBatchesAfterPublisherCloses: a reader that took a
// snapshot through the registry reads its batches, whose columns live off
// the Go heap, exactly after the publisher has closed and its trace is
// gone and collections have run: the snapshot's hold on the batches is what
// keeps their arenas mapped.
func TestImportKeepsOffHeapBatchesAfterPublisherCloses(t *testing.T) {
	const keys = 8192
	reg := NewRegistry()
	k := Key{ID: "u9", Worker: 0, Incarnation: 1}
	tr := trace.New(frontier.Minimum())
	pub, err := reg.Publish(k, "maintenance", tr)
	if err != nil {
		t.Fatal(err)
	}
	var b batch.Builder
	for i := range keys {
		b.Push(key8(uint64(i)), fmt.Appendf(nil, "value-%020d", i), 0, 1)
	}
	bat, err := b.Build(batch.Description{Lower: frontier.At(0), Upper: frontier.At(1), Since: frontier.Minimum()})
	if err != nil {
		t.Fatal(err)
	}
	if bat.OffHeapBytes() == 0 {
		t.Fatal("the published batch stayed on the Go heap")
	}
	if err := tr.Insert(bat); err != nil {
		t.Fatal(err)
	}
	bat = nil
	if err := pub.Refresh(); err != nil {
		t.Fatal(err)
	}
	snap, err := reg.Import(k).Wait(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	pub.Close()
	tr = nil
	for range 10 {
		runtime.GC()
		runtime.Gosched()
	}
	n, err := countFaulting(snap)
	if err != nil {
		t.Fatal(err)
	}
	if n != keys {
		t.Fatalf("the import's snapshot counts %d rows, want %d", n, keys)
	}
}

// countFaulting is count at time 0 checking every value, with a fault in
// released memory recovered as an error.
func countFaulting(s *Snapshot) (n int64, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading an imported snapshot faulted: %v", r)
		}
	}()
	trace.ScanAsOf(s.Batches, 0, func(key, val []byte, d int64) bool {
		if want := fmt.Sprintf("value-%020d", binaryKey(key)); string(val) != want {
			err = fmt.Errorf("key %x reads value %q, want %q", key, val, want)
			return false
		}
		n += d
		return true
	})
	return n, err
}

func binaryKey(k []byte) uint64 {
	var v uint64
	for _, b := range k {
		v = v<<8 | uint64(b)
	}
	return v
}

// TestOldSnapshotPinsOnlyItsBatches: a reader holding an old snapshot
// across the publisher's merges keeps mapped only the batches of its own
// snapshot; the batches merged away since (intermediate merge outputs that
// nobody else holds) are released by collections, so what stays retired
// is bounded by the reader's snapshot, not by the merges it outlived
// (counted in bytes, batch.OffHeapUsage). A point that kept its earlier
// snapshots would pin every intermediate chain.
func TestOldSnapshotPinsOnlyItsBatches(t *testing.T) {
	settle := func() int64 {
		for range 10 {
			runtime.GC()
			runtime.Gosched()
		}
		return batch.OffHeapUsage().Retired
	}
	reg := NewRegistry()
	k := Key{ID: "u10", Worker: 0, Incarnation: 1}
	tr := trace.New(frontier.Minimum())
	pub, err := reg.Publish(k, "maintenance", tr)
	if err != nil {
		t.Fatal(err)
	}
	const keys = 4096
	insert := func(i int) {
		var b batch.Builder
		for j := range keys {
			key := uint64(j*16 + i) // keys distinct across batches
			b.Push(key8(key), fmt.Appendf(nil, "value-%020d", key), frontier.Time(i), 1)
		}
		bat, err := b.Build(batch.Description{Lower: frontier.At(frontier.Time(i)), Upper: frontier.At(frontier.Time(i + 1)), Since: frontier.Minimum()})
		if err != nil {
			t.Fatal(err)
		}
		if bat.OffHeapBytes() == 0 {
			t.Fatal("a published batch stayed on the Go heap")
		}
		if err := tr.Insert(bat); err != nil {
			t.Fatal(err)
		}
		// Let the publisher merge everything before the newest batch.
		if err := reg.AdvanceStandingHold(k, frontier.At(frontier.Time(i))); err != nil {
			t.Fatal(err)
		}
		for fuel := 1 << 30; tr.Exert(&fuel); fuel = 1 << 30 {
		}
		if err := pub.Refresh(); err != nil {
			t.Fatal(err)
		}
	}
	insert(0)
	insert(1)
	before := settle()
	snap, err := reg.Import(k).Wait(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, b := range snap.Batches {
		held += b.OffHeapBytes()
	}
	for i := 2; i < 16; i++ {
		insert(i)
	}
	if n := tr.Stats().Batches; n > 8 {
		t.Fatalf("the publisher holds %d batches of 16: the test needs them merged", n)
	}
	if got := settle(); got > before+int64(held) {
		t.Fatalf("%d bytes retired but mapped after 14 merges under a snapshot of %d bytes (%d before it)", got, held, before)
	}
	n, err := countAt(snap, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2*keys {
		t.Fatalf("the old snapshot counts %d rows, want %d", n, 2*keys)
	}
	pub.Close()
}

// countAt counts the snapshot's rows at t, with a fault in released
// memory recovered as an error.
func countAt(s *Snapshot, t frontier.Time) (n int64, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading an imported snapshot faulted: %v", r)
		}
	}()
	trace.ScanAsOf(s.Batches, t, func(_, _ []byte, d int64) bool {
		n += d
		return true
	})
	return n, err
}
