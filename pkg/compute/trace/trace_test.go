package trace

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/spine"
	"pgregory.net/rapid"
)

type update struct {
	key, val string
	t        frontier.Time
	diff     int64
}

type kv struct{ key, val string }

type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func naive(upds []update, t frontier.Time) map[kv]int64 {
	out := map[kv]int64{}
	for _, u := range upds {
		if u.t <= t {
			out[kv{u.key, u.val}] += u.diff
		}
	}
	maps.DeleteFunc(out, func(_ kv, d int64) bool { return d == 0 })
	return out
}

func scan(r Read) map[kv]int64 {
	out := map[kv]int64{}
	r.Scan(func(k, v []byte, d int64) bool {
		out[kv{string(k), string(v)}] = d
		return true
	})
	return out
}

func mk(t tb, lo, hi frontier.Time, upds ...update) *batch.Batch {
	t.Helper()
	var bl batch.Builder
	for _, u := range upds {
		bl.Push([]byte(u.key), []byte(u.val), u.t, u.diff)
	}
	b, err := bl.Build(batch.Description{Lower: frontier.At(lo), Upper: frontier.At(hi)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHandlesAndLeaks(t *testing.T) {
	tr := New(frontier.At(0))
	a := tr.NewHandle("a")
	b := tr.NewHandle("b")
	if got := tr.LiveHandles(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("live %v", got)
	}
	if err := a.SetLogical(frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	if err := b.SetLogical(frontier.At(9)); err != nil {
		t.Fatal(err)
	}
	if got := tr.Since(); got != frontier.At(5) {
		t.Fatalf("since %v, want meet [5]", got)
	}
	if err := b.SetLogical(frontier.At(8)); !errors.Is(err, ErrRegress) {
		t.Fatalf("regress: %v", err)
	}
	c, err := a.Clone("c")
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	a.Release() // no-op
	if got := tr.Since(); got != frontier.At(5) {
		t.Fatalf("since %v, clone should still hold [5]", got)
	}
	if got := tr.LiveHandles(); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("live %v", got)
	}
	c.Release()
	if got := tr.Since(); got != frontier.At(9) {
		t.Fatalf("since %v, want [9] after releases", got)
	}
	if err := a.SetLogical(frontier.At(10)); !errors.Is(err, ErrReleased) {
		t.Fatalf("set on released: %v", err)
	}
	if _, err := a.BatchesThrough(frontier.At(0)); !errors.Is(err, ErrReleased) {
		t.Fatalf("cut on released: %v", err)
	}
	b.Release()
	if got := tr.LiveHandles(); len(got) != 0 {
		t.Fatalf("leaked %v", got)
	}
	// With no handle, the trace does not compact on its own.
	if got := tr.Since(); got != frontier.At(9) {
		t.Fatalf("since moved to %v with no handles", got)
	}
	// A new handle starts at the current since.
	d := tr.NewHandle("d")
	defer d.Release()
	if l, _ := d.Frontiers(); l != frontier.At(9) {
		t.Fatalf("new handle at %v", l)
	}
}

func TestReadAtWindow(t *testing.T) {
	tr := New(frontier.At(0))
	h := tr.NewHandle("reader")
	defer h.Release()
	if _, err := tr.ReadAt(0); !errors.Is(err, ErrNotYetReadable) {
		t.Fatalf("empty trace read: %v", err)
	}
	upds := []update{{"k", "a", 1, 1}, {"k", "b", 2, 1}, {"k", "a", 3, -1}, {"j", "a", 3, 2}}
	if err := tr.Insert(mk(t, 0, 4, upds...)); err != nil {
		t.Fatal(err)
	}
	if err := h.SetLogical(frontier.At(2)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		t    frontier.Time
		err  error
		want map[kv]int64
	}{
		{0, ErrCompacted, nil},
		{1, ErrCompacted, nil},
		{2, nil, map[kv]int64{{"k", "a"}: 1, {"k", "b"}: 1}},
		{3, nil, map[kv]int64{{"k", "b"}: 1, {"j", "a"}: 2}},
		{4, ErrNotYetReadable, nil},
	}
	for _, tt := range tests {
		r, err := tr.ReadAt(tt.t)
		if !errors.Is(err, tt.err) {
			t.Fatalf("read at %d: err %v, want %v", tt.t, err, tt.err)
		}
		if err == nil {
			if got := scan(r); !maps.Equal(got, tt.want) {
				t.Fatalf("read at %d: %v, want %v", tt.t, got, tt.want)
			}
		}
	}
	r, err := tr.ReadAt(2)
	if err != nil {
		t.Fatal(err)
	}
	got := r.Lookup([]byte("k"), nil)
	if len(got) != 2 || string(got[0].Val) != "a" || got[0].Diff != 1 || string(got[1].Val) != "b" {
		t.Fatalf("lookup k: %v", got)
	}
	if got := r.Lookup([]byte("zz"), nil); len(got) != 0 {
		t.Fatalf("lookup missing: %v", got)
	}
}

func TestLookupAcrossBatches(t *testing.T) {
	bs := []*batch.Batch{
		mk(t, 0, 2, update{"k", "b", 0, 1}, update{"k", "c", 1, 1}),
		mk(t, 2, 4, update{"k", "a", 2, 1}, update{"k", "b", 3, -1}),
		mk(t, 4, 6, update{"k", "c", 4, 2}, update{"l", "c", 4, 2}),
	}
	got := AccumulateKey(bs, []byte("k"), 5, []ValDiff{{Val: []byte("keep"), Diff: 7}})
	want := []string{"keep:7", "a:1", "c:3"}
	var s []string
	for _, vd := range got {
		s = append(s, fmt.Sprintf("%s:%d", vd.Val, vd.Diff))
	}
	if !slices.Equal(s, want) {
		t.Fatalf("got %v, want %v", s, want)
	}
}

// TestPhysicalHoldKeepsCut: a handle's physical cut survives merging however
// much data arrives, and is released with the handle.
func TestPhysicalHoldKeepsCut(t *testing.T) {
	tr := New(frontier.At(0))
	h := tr.NewHandle("cut")
	owner := tr.NewHandle("owner")
	if err := h.SetPhysical(frontier.At(3)); err != nil {
		t.Fatal(err)
	}
	if err := owner.SetPhysical(frontier.Closed()); err != nil {
		t.Fatal(err)
	}
	for i := frontier.Time(0); i < 64; i++ {
		if err := tr.Insert(mk(t, i, i+1, update{"k", "v", i, 1})); err != nil {
			t.Fatal(err)
		}
		fuel := 1 << 20
		tr.Exert(&fuel)
		if i >= 3 {
			bs, err := h.BatchesThrough(frontier.At(3))
			if err != nil {
				t.Fatalf("after %d inserts: %v", i+1, err)
			}
			n := 0
			for _, b := range bs {
				n += b.Len()
			}
			if n != 3 {
				t.Fatalf("cut at 3 holds %d updates, want 3", n)
			}
		}
	}
	if _, err := h.BatchesThrough(frontier.At(2)); !errors.Is(err, ErrCompacted) {
		t.Fatalf("cut before physical hold: %v", err)
	}
	h.Release()
	fuel := 1 << 20
	tr.Exert(&fuel)
	if _, err := tr.spine.BatchesThrough(frontier.At(3)); !errors.Is(err, spine.ErrStraddle) {
		t.Fatalf("cut survived after release (gate not lifted): %v", err)
	}
	owner.Release()
}

// TestTraceMatchesNaive: random inserts, handles created, advanced and
// released in random order, and random reads; every successful read equals
// the naive accumulation, reads outside [since, upper) fail with the right
// error, each handle's physical cut stays available, and no handle leaks.
func TestTraceMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := New(frontier.At(0))
		var all []update
		var cur frontier.Time
		type held struct {
			h                 *Handle
			logical, physical frontier.Time
		}
		var handles []*held
		boundaries := map[frontier.Time]bool{0: true}
		for i := range rapid.IntRange(1, 50).Draw(t, "steps") {
			switch op := rapid.IntRange(0, 6).Draw(t, "op"); op {
			case 0, 1, 2:
				hi := cur + frontier.Time(rapid.IntRange(1, 3).Draw(t, "width"))
				var upds []update
				for range rapid.IntRange(0, 6).Draw(t, "n") {
					upds = append(upds, update{
						key:  rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "key"),
						val:  rapid.SampledFrom([]string{"x", "y"}).Draw(t, "val"),
						t:    cur + frontier.Time(rapid.IntRange(0, int(hi-cur-1)).Draw(t, "dt")),
						diff: int64(rapid.IntRange(-1, 1).Draw(t, "diff")),
					})
				}
				if err := tr.Insert(mk(t, cur, hi, upds...)); err != nil {
					t.Fatal(err)
				}
				all = append(all, upds...)
				cur = hi
				boundaries[hi] = true
			case 3:
				h := tr.NewHandle(fmt.Sprint("h", i))
				l, p := h.Frontiers()
				lt, _ := l.Time()
				pt, _ := p.Time()
				handles = append(handles, &held{h, lt, pt})
			case 4, 5:
				if len(handles) == 0 {
					continue
				}
				x := handles[rapid.IntRange(0, len(handles)-1).Draw(t, "handle")]
				x.logical += frontier.Time(rapid.IntRange(0, 3).Draw(t, "dl"))
				// Physical cuts are only useful at batch boundaries the reader saw; any time is legal.
				x.physical = max(x.physical, min(cur, x.physical+frontier.Time(rapid.IntRange(0, 3).Draw(t, "dp"))))
				if err := x.h.SetLogical(frontier.At(x.logical)); err != nil {
					t.Fatal(err)
				}
				if err := x.h.SetPhysical(frontier.At(x.physical)); err != nil {
					t.Fatal(err)
				}
			case 6:
				if len(handles) == 0 {
					continue
				}
				j := rapid.IntRange(0, len(handles)-1).Draw(t, "release")
				handles[j].h.Release()
				handles = slices.Delete(handles, j, j+1)
			}
			fuel := rapid.IntRange(0, 20).Draw(t, "fuel")
			tr.Exert(&fuel)

			since := tr.Since()
			for _, x := range handles {
				if !since.LessEqualTime(x.logical) {
					t.Fatalf("since %v beyond handle logical %d", since, x.logical)
				}
				if !boundaries[x.physical] {
					continue
				}
				// A held cut at an inserted boundary is never merged away,
				// and reads through it are exact.
				cut, err := x.h.BatchesThrough(frontier.At(x.physical))
				if err != nil {
					t.Fatalf("handle %s: cut at %d lost: %v", x.h.Name(), x.physical, err)
				}
				sinceT, _ := since.Time()
				for tm := sinceT; tm < x.physical; tm++ {
					got := map[kv]int64{}
					ScanAsOf(cut, tm, func(k, v []byte, d int64) bool { got[kv{string(k), string(v)}] = d; return true })
					if want := naive(all, tm); !maps.Equal(got, want) {
						t.Fatalf("cut %d read at %d: got %v, want %v", x.physical, tm, got, want)
					}
				}
			}
			for tm := frontier.Time(0); tm <= cur+1; tm++ {
				r, err := tr.ReadAt(tm)
				switch {
				case !since.LessEqualTime(tm):
					if !errors.Is(err, ErrCompacted) {
						t.Fatalf("read at %d before since %v: %v", tm, since, err)
					}
				case tm >= cur:
					if !errors.Is(err, ErrNotYetReadable) {
						t.Fatalf("read at %d at/after upper %d: %v", tm, cur, err)
					}
				case err != nil:
					t.Fatalf("read at %d: %v", tm, err)
				default:
					if got, want := scan(r), naive(all, tm); !maps.Equal(got, want) {
						t.Fatalf("read at %d: got %v, want %v", tm, got, want)
					}
					byKey := map[kv]int64{}
					r.ScanKeys(func(k []byte, vals []ValDiff) bool {
						for _, vd := range vals {
							byKey[kv{string(k), string(vd.Val)}] = vd.Diff
						}
						return true
					})
					if want := naive(all, tm); !maps.Equal(byKey, want) {
						t.Fatalf("ScanKeys at %d: got %v, want %v", tm, byKey, want)
					}
					for _, k := range []string{"a", "b", "c"} {
						for _, vd := range r.Lookup([]byte(k), nil) {
							if want := naive(all, tm)[kv{k, string(vd.Val)}]; vd.Diff != want {
								t.Fatalf("lookup %s/%s at %d: %d, want %d", k, vd.Val, tm, vd.Diff, want)
							}
						}
					}
				}
			}
		}
		for _, x := range handles {
			x.h.Release()
		}
		if live := tr.LiveHandles(); len(live) != 0 {
			t.Fatalf("leaked handles %v", live)
		}
	})
}

// TestConcurrentReaders: readers, each holding a handle that they advance,
// scan captured reads while the writer inserts, merges and compacts; run
// with -race. A read at a time the reader holds must always succeed.
func TestConcurrentReaders(t *testing.T) {
	tr := New(frontier.At(0))
	owner := tr.NewHandle("owner")
	defer owner.Release()
	if err := owner.SetPhysical(frontier.Closed()); err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := range 4 {
		h := tr.NewHandle(fmt.Sprint("reader ", r))
		if err := h.SetPhysical(frontier.Closed()); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer h.Release()
			held := frontier.Time(0) // h's logical frontier
			for i := 0; i < n; i++ {
				upper, _ := tr.Upper().Time()
				if upper == 0 {
					continue
				}
				tm := max(upper-1, held)
				rd, err := tr.ReadAt(tm)
				if err != nil {
					errs <- fmt.Errorf("reader %d at %d (holding %d): %w", r, tm, held, err)
					return
				}
				var total int64
				rd.Scan(func(_, _ []byte, d int64) bool { total += d; return true })
				if total != int64(rd.Time)+1 {
					errs <- fmt.Errorf("reader %d at %d: total %d", r, rd.Time, total)
					return
				}
				// Let the trace compact up to half of what was just read.
				if next := tm / 2; next > held {
					if err := h.SetLogical(frontier.At(next)); err != nil {
						errs <- err
						return
					}
					held = next
				}
			}
		}()
	}
	for i := frontier.Time(0); i < n; i++ {
		if err := tr.Insert(mk(t, i, i+1, update{fmt.Sprint(i % 17), "v", i, 1})); err != nil {
			t.Fatal(err)
		}
		if err := owner.SetLogical(frontier.At(i)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if live := tr.LiveHandles(); !slices.Equal(live, []string{"owner"}) {
		t.Fatalf("live handles %v", live)
	}
}
