package batch

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime/metrics"
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"pgregory.net/rapid"
)

// mergeParted run-merges a and b to completion with parts of partUpds
// updates and fuel per call.
func mergeParted(t tb, a, b *Batch, partUpds, fuel int) *Batch {
	t.Helper()
	m, err := NewRunsMerger([]*Batch{a, b})
	if err != nil {
		t.Fatal(err)
	}
	m.setParts(partUpds, 1<<20)
	for f := fuel; !m.Work(&f); f = fuel {
	}
	return m.Result()
}

// TestPartedBatchReadsLikePlain: a batch a merge wrote in parts reads like
// the plain batch one Build of the same updates gives (contents, counts,
// AccumulateAll, cursor seeks from any position, rewinds), and merging
// parted batches with each other keeps that.
func TestPartedBatchReadsLikePlain(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := desc(0, 8)
		upds := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) update {
			return update{
				key:  fmt.Sprintf("k%02d", rapid.IntRange(0, 30).Draw(t, "key")),
				val:  rapid.SampledFrom([]string{"", "x", "y"}).Draw(t, "val"),
				t:    frontier.Time(rapid.IntRange(0, 7).Draw(t, "time")),
				diff: int64(rapid.IntRange(-2, 2).Draw(t, "diff")),
			}
		}), 0, 120).Draw(t, "updates")
		// Four runs, merged pairwise and then the (parted) results.
		var runs [4][]update
		for _, u := range upds {
			i := rapid.IntRange(0, 3).Draw(t, "run")
			runs[i] = append(runs[i], u)
		}
		part := rapid.IntRange(1, 6).Draw(t, "part")
		fuel := rapid.IntRange(1, 20).Draw(t, "fuel")
		x := mergeParted(t, build(t, runs[0], d), build(t, runs[1], d), part, fuel)
		y := mergeParted(t, build(t, runs[2], d), build(t, runs[3], d), part, fuel)
		got := mergeParted(t, x, y, part, fuel)
		want := build(t, upds, d)
		checkInvariants(t, got)
		if !slices.Equal(contents(got), contents(want)) {
			t.Fatalf("parted contents %v, want %v", contents(got), contents(want))
		}
		if got.Len() != want.Len() || got.KeyCount() != want.KeyCount() || got.ValCount() != want.ValCount() {
			t.Fatalf("counts %d/%d/%d, want %d/%d/%d", got.Len(), got.KeyCount(), got.ValCount(), want.Len(), want.KeyCount(), want.ValCount())
		}
		for tm := frontier.Time(0); tm < 8; tm++ {
			if got.AccumulateAll(tm) != want.AccumulateAll(tm) {
				t.Fatalf("AccumulateAll(%d) = %d, want %d", tm, got.AccumulateAll(tm), want.AccumulateAll(tm))
			}
			if g, w := accumulateList([]*Batch{got}, tm), accumulate(upds, tm); !maps.Equal(g, w) {
				t.Fatalf("read at %d: %v, want %v", tm, g, w)
			}
		}
		// Seeks: the same ascending probes on both cursors land alike.
		gc, wc := got.Cursor(), want.Cursor()
		for i := 0; i < 8; i++ {
			if rapid.Bool().Draw(t, "rewind") {
				gc.RewindKeys()
				wc.RewindKeys()
			}
			k := []byte(fmt.Sprintf("k%02d", rapid.IntRange(0, 32).Draw(t, "probe")))
			gc.SeekKey(k)
			wc.SeekKey(k)
			if gc.KeyValid() != wc.KeyValid() || gc.KeyValid() && string(gc.Key()) != string(wc.Key()) {
				t.Fatalf("seek %q: parted at %v %q, plain at %v %q", k, gc.KeyValid(), keyOr(gc), wc.KeyValid(), keyOr(wc))
			}
			if gc.KeyValid() && rapid.Bool().Draw(t, "step") {
				gc.StepKey()
				wc.StepKey()
			}
		}
	})
}

func keyOr(c Cursor) string {
	if c.KeyValid() {
		return string(c.Key())
	}
	return "<end>"
}

// heapAllocBytes returns the bytes the process has allocated on the heap.
func heapAllocBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// maxStepAlloc run-merges two runs of n/2 distinct keys each with fuel per
// Work call and returns the most heap bytes NewRunsMerger or one Work call
// allocated, and the number of parts of the result.
func maxStepAlloc(t *testing.T, n, fuel int) (maxBytes uint64, parts int) {
	d := desc(0, 10)
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	var runs [2]Builder
	val := make([]byte, 16)
	for i := 0; i < n; i++ {
		key := fmt.Appendf(nil, "key%09d", rng.Uint64()%(uint64(n)*1000))
		runs[i%2].Push(key, val, 1, 1)
	}
	a, err := runs[0].Build(d)
	if err != nil {
		t.Fatal(err)
	}
	b, err := runs[1].Build(d)
	if err != nil {
		t.Fatal(err)
	}
	before := heapAllocBytes()
	m, err := NewRunsMerger([]*Batch{a, b})
	if err != nil {
		t.Fatal(err)
	}
	maxBytes = heapAllocBytes() - before
	for done := false; !done; {
		f := fuel
		before := heapAllocBytes()
		done = m.Work(&f)
		maxBytes = max(maxBytes, heapAllocBytes()-before)
	}
	if got := m.Result().Len(); got < n*9/10 {
		t.Fatalf("merged %d updates of %d", got, n)
	}
	return maxBytes, m.Result().PartCount()
}

// TestMergeStepAllocatesByFuelNotSize: the memory one step of a merge
// allocates (and so clears) is bounded by the fuel and the part size, not
// by the size of the batches merged: merging 400,000 updates allocates no
// more in its largest step than merging 40,000 does. Before the output was
// written in parts, the first step allocated the whole merged output (for
// a million keys, ~100 MB cleared in one step).
func TestMergeStepAllocatesByFuelNotSize(t *testing.T) {
	const fuel = 4096
	// A part holds ~partUpdates updates of 12-byte keys and 16-byte
	// values, plus their offsets, times and diffs (~64 bytes an update);
	// one step may seal one part and start the next.
	bound := uint64(3 * partUpdates * 64)
	var small uint64
	for _, n := range []int{40_000, 400_000} {
		got, parts := maxStepAlloc(t, n, fuel)
		t.Logf("n=%d: largest step allocated %d bytes, %d parts", n, got, parts)
		if got > bound {
			t.Errorf("n=%d: a merge step allocated %d bytes, more than %d (a few parts' worth)", n, got, bound)
		}
		if parts < n/partUpdates {
			t.Errorf("n=%d: %d parts, want at least %d", n, parts, n/partUpdates)
		}
		if n == 40_000 {
			small = got
		} else if got > small+small/2 {
			t.Errorf("largest step allocated %d bytes for %d updates against %d for 40,000: it grows with the batch", got, n, small)
		}
	}
}
