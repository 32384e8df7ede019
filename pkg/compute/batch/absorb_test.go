package batch

import (
	"errors"
	"runtime"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// TestAbsorbEmpty: absorbing an empty older batch gives newer's updates
// over both intervals, sharing newer's arena (no second copy mapped), and
// stays readable after every other reference to newer is gone and
// collections have run: the absorbed batch holds the arena's owner.
// Without that hold, newer's cleanup unmaps the arena under it and the
// read faults.
func TestAbsorbEmpty(t *testing.T) {
	upds := bigUpdates(0, 1, 20000, 5)
	newer := build(t, upds, desc(5, 6))
	older := build(t, nil, Description{Lower: frontier.At(0), Upper: frontier.At(5), Since: frontier.At(3)})
	a := newer.arena
	if a == nil {
		t.Fatal("a batch of 20,000 updates stayed on the heap")
	}
	mapped := OffHeapInUse()
	got, err := AbsorbEmpty(older, newer)
	if err != nil {
		t.Fatal(err)
	}
	want := Description{Lower: frontier.At(0), Upper: frontier.At(6), Since: frontier.At(3)}
	if got.Description() != want {
		t.Fatalf("description %v, want %v", got.Description(), want)
	}
	if got.OffHeapBytes() != len(a.mem) || OffHeapInUse() > mapped {
		t.Fatalf("absorbed batch has %d off-heap bytes (newer's arena %d), process %d -> %d: want newer's arena shared, nothing mapped",
			got.OffHeapBytes(), len(a.mem), mapped, OffHeapInUse())
	}
	newer, older = nil, nil
	for i := range 5 {
		// Churn: new arenas may take the addresses of released ones.
		_ = build(t, bigUpdates(i, 3, 8192, 0), desc(0, 1))
		runtime.GC()
	}
	if a.released.Load() {
		t.Fatal("newer's arena was released while the absorbed batch still reads it")
	}
	read, err := readCursor(got.Cursor())
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != len(upds) {
		t.Fatalf("read %d updates, want %d", len(read), len(upds))
	}
	for i := range read {
		if read[i] != upds[i] {
			t.Fatalf("update %d reads %v, want %v", i, read[i], upds[i])
		}
	}
	runtime.KeepAlive(got)
}

func TestAbsorbEmptyRefuses(t *testing.T) {
	one := func(at frontier.Time) []update { return []update{{"k", "v", at, 1}} }
	cases := []struct {
		name         string
		older, newer *Batch
		want         error
	}{
		{"not adjacent", build(t, nil, desc(0, 1)), build(t, one(2), desc(2, 3)), ErrNotAdjacent},
		{"older holds updates", build(t, one(0), desc(0, 1)), build(t, nil, desc(1, 2)), ErrNotEmpty},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := AbsorbEmpty(tc.older, tc.newer); !errors.Is(err, tc.want) {
				t.Fatalf("AbsorbEmpty: %v, want %v", err, tc.want)
			}
		})
	}
}
