package spine

import (
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
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

func read(batches []*batch.Batch, t frontier.Time) map[kv]int64 {
	out := map[kv]int64{}
	l := batch.NewCursorList(batches)
	for ; l.KeyValid(); l.StepKey() {
		for ; l.ValValid(); l.StepVal() {
			if d := l.Accumulate(t); d != 0 {
				out[kv{string(l.Key()), string(l.Val())}] = d
			}
		}
	}
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

func checkChain(t tb, s *Spine) {
	t.Helper()
	bs := s.Batches()
	at := s.Lower()
	for _, b := range bs {
		if b.Lower() != at {
			t.Fatalf("chain broken: batch %v after %v", b.Description(), at)
		}
		at = b.Upper()
	}
	if at != s.Upper() {
		t.Fatalf("chain ends at %v, spine upper %v", at, s.Upper())
	}
}

func TestInsertAdjacency(t *testing.T) {
	s := New(frontier.At(0))
	if err := s.Insert(mk(t, 1, 2)); !errors.Is(err, ErrNotAdjacent) {
		t.Fatalf("gap accepted: %v", err)
	}
	if err := s.Insert(mk(t, 0, 2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Insert(mk(t, 2, 2)); err != nil || s.BatchCount() != 1 {
		t.Fatalf("zero-width empty batch: %v, %d batches", err, s.BatchCount())
	}
	if s.Upper() != frontier.At(2) {
		t.Fatalf("upper %v", s.Upper())
	}
	if err := s.SetLogical(frontier.At(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetLogical(frontier.At(0)); !errors.Is(err, ErrRegress) {
		t.Fatalf("regress accepted: %v", err)
	}
}

func TestBatchesThrough(t *testing.T) {
	s := New(frontier.At(0))
	for _, hi := range []frontier.Time{2, 5, 9} {
		lo, _ := s.Upper().Time()
		if err := s.Insert(mk(t, lo, hi, update{"k", "v", lo, 1})); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		cut   frontier.Frontier
		n     int
		wantE error
	}{
		{frontier.At(0), 0, nil},
		{frontier.At(2), 1, nil},
		{frontier.At(5), 2, nil},
		{frontier.At(9), 3, nil},
		{frontier.At(3), 0, ErrStraddle},
		{frontier.At(10), 0, ErrBeyondUpper},
		{frontier.Closed(), 0, ErrBeyondUpper},
	}
	for _, tt := range tests {
		bs, err := s.BatchesThrough(tt.cut)
		if !errors.Is(err, tt.wantE) || (err == nil && len(bs) != tt.n) {
			t.Errorf("cut %v: %d batches, err %v; want %d, %v", tt.cut, len(bs), err, tt.n, tt.wantE)
		}
	}
	s2 := New(frontier.At(4))
	if _, err := s2.BatchesThrough(frontier.At(3)); !errors.Is(err, ErrBeforeLower) {
		t.Errorf("cut before lower: %v", err)
	}
}

// TestPhysicalGate: with the physical frontier at p, the boundary at p
// survives any amount of merging, and merging resumes once p advances.
func TestPhysicalGate(t *testing.T) {
	s := New(frontier.At(0))
	const p = 7
	if err := s.SetPhysical(frontier.At(p)); err != nil {
		t.Fatal(err)
	}
	for i := frontier.Time(0); i < 40; i++ {
		if err := s.Insert(mk(t, i, i+1, update{fmt.Sprint(i % 3), "v", i, 1})); err != nil {
			t.Fatal(err)
		}
		fuel := 1 << 20
		s.Exert(&fuel)
	}
	if _, err := s.BatchesThrough(frontier.At(p)); err != nil {
		t.Fatalf("physical cut merged away: %v", err)
	}
	if _, err := s.BatchesThrough(frontier.At(p + 10)); err != nil {
		t.Fatalf("cut beyond physical merged away: %v", err)
	}
	before := s.BatchCount()
	if err := s.SetPhysical(frontier.Closed()); err != nil {
		t.Fatal(err)
	}
	fuel := 1 << 20
	if s.Exert(&fuel) {
		t.Fatal("merges pending after ample fuel")
	}
	if after := s.BatchCount(); after >= before || after > bits.Len(40)+1 {
		t.Fatalf("batches %d -> %d after lifting the gate", before, after)
	}
	checkChain(t, s)
}

// TestGeometric: with no gate, the chain stays logarithmic and each insert's
// work is bounded, yet merges keep up.
func TestGeometric(t *testing.T) {
	s := New(frontier.At(0))
	if err := s.SetPhysical(frontier.Closed()); err != nil {
		t.Fatal(err)
	}
	var all []update
	for i := frontier.Time(0); i < 1000; i++ {
		n := int(i%7) + 1
		var upds []update
		for j := range n {
			upds = append(upds, update{fmt.Sprint(j, i%13), "v", i, 1})
		}
		all = append(all, upds...)
		if err := s.Insert(mk(t, i, i+1, upds...)); err != nil {
			t.Fatal(err)
		}
		if max := 2*bits.Len(uint(s.Len())) + 2; s.BatchCount() > max {
			t.Fatalf("after %d inserts: %d batches > %d", i+1, s.BatchCount(), max)
		}
	}
	if got, want := read(s.Batches(), 999), naive(all, 999); !maps.Equal(got, want) {
		t.Fatal("read differs from naive")
	}
	checkChain(t, s)
}

// TestSpineMatchesNaive: random streams in random batch boundaries with
// random logical and physical compaction and random idle effort. Every read
// at since <= t < upper equals the naive accumulation, and every inserted
// boundary at or beyond the physical frontier can still be cut, with exact
// reads below it.
func TestSpineMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := New(frontier.At(0))
		var all []update
		boundaries := []frontier.Time{0}
		var cur frontier.Time
		since, physical := frontier.Time(0), frontier.Time(0)
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0, 1, 2:
				hi := cur + frontier.Time(rapid.IntRange(1, 3).Draw(t, "width"))
				n := rapid.IntRange(0, 6).Draw(t, "n")
				var upds []update
				for range n {
					upds = append(upds, update{
						key:  rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "key"),
						val:  rapid.SampledFrom([]string{"x", "y"}).Draw(t, "val"),
						t:    cur + frontier.Time(rapid.IntRange(0, int(hi-cur-1)).Draw(t, "dt")),
						diff: int64(rapid.IntRange(-1, 1).Draw(t, "diff")),
					})
				}
				if err := s.Insert(mk(t, cur, hi, upds...)); err != nil {
					t.Fatal(err)
				}
				all = append(all, upds...)
				cur = hi
				boundaries = append(boundaries, hi)
			case 3:
				since += frontier.Time(rapid.IntRange(0, 3).Draw(t, "dsince"))
				if err := s.SetLogical(frontier.At(since)); err != nil {
					t.Fatal(err)
				}
			case 4:
				physical += frontier.Time(rapid.IntRange(0, 3).Draw(t, "dphys"))
				if err := s.SetPhysical(frontier.At(physical)); err != nil {
					t.Fatal(err)
				}
			case 5:
				fuel := rapid.IntRange(1, 50).Draw(t, "fuel")
				s.Exert(&fuel)
			}
			checkChain(t, s)
			for tm := since; tm < cur; tm++ {
				if got, want := read(s.Batches(), tm), naive(all, tm); !maps.Equal(got, want) {
					t.Fatalf("read at %d (since %d): got %v, want %v", tm, since, got, want)
				}
			}
			for _, b := range boundaries {
				if b < physical {
					continue
				}
				cut, err := s.BatchesThrough(frontier.At(b))
				if err != nil {
					t.Fatalf("boundary %d (physical %d) lost: %v", b, physical, err)
				}
				for tm := since; tm < b; tm++ {
					if got, want := read(cut, tm), naive(all, tm); !maps.Equal(got, want) {
						t.Fatalf("cut %d read at %d: got %v, want %v", b, tm, got, want)
					}
				}
			}
		}
	})
}

// TestInsertWorkBounded: no Insert does more merge work than its fuel grant
// to each in-progress merge (plus one value's overrun per merge), however
// the batch sizes vary, and merges still keep the chain logarithmic.
func TestInsertWorkBounded(t *testing.T) {
	s := New(frontier.At(0))
	if err := s.SetPhysical(frontier.Closed()); err != nil {
		t.Fatal(err)
	}
	sizes := []int{1, 0, 500, 3, 3, 3, 64, 1000, 2, 0, 0, 7, 250}
	for i := frontier.Time(0); i < 400; i++ {
		n := sizes[int(i)%len(sizes)]
		var upds []update
		for j := range n {
			upds = append(upds, update{fmt.Sprintf("%05d", (j*7919+int(i))%2003), "v", i, 1})
		}
		merges := 0
		for _, e := range s.entries {
			if e.merge != nil {
				merges++
			}
		}
		before := s.WorkDone()
		if err := s.Insert(mk(t, i, i+1, upds...)); err != nil {
			t.Fatal(err)
		}
		// Merges started by this insert get fuel too: at most one per pair.
		bound := int64(FuelPerUpdate*(n+1)+2) * int64(merges+s.BatchCount())
		if w := s.WorkDone() - before; w > bound {
			t.Fatalf("insert %d of %d updates did %d work > %d", i, n, w, bound)
		}
	}
	if max := 2*bits.Len(uint(s.Len())) + 2; s.BatchCount() > max {
		t.Fatalf("%d batches > %d", s.BatchCount(), max)
	}
}

// TestInsertBoundedDefersMergeWork: inserting a large batch after another
// large one starts their merge; a bounded insert does at most its fuel of
// that merge's work and owes the rest (FuelPerUpdate a new update), which
// PayDebt pays at most its fuel a call; the contents are those of an
// unbounded insert. No fuel (nil) pays everything owed in the insert.
func TestInsertBoundedDefersMergeWork(t *testing.T) {
	const n, limit = 20_000, 1_000
	big := func(lo frontier.Time) (*batch.Batch, []update) {
		var upds []update
		for j := range n {
			upds = append(upds, update{fmt.Sprintf("%06d", (j*7919)%n), fmt.Sprint(lo), lo, 1})
		}
		return mk(t, lo, lo+1, upds...), upds
	}
	a, ua := big(0)
	b, ub := big(1)
	for _, tc := range []struct {
		name  string
		limit int
	}{{"bounded", limit}, {"unbounded", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(frontier.At(0))
			if err := s.SetPhysical(frontier.Closed()); err != nil {
				t.Fatal(err)
			}
			if err := s.InsertBounded(a, fuelOf(tc.limit)); err != nil {
				t.Fatal(err)
			}
			before := s.WorkDone()
			if err := s.InsertBounded(b, fuelOf(tc.limit)); err != nil {
				t.Fatal(err)
			}
			w := s.WorkDone() - before
			calls := 0
			if tc.limit == 0 {
				if w < FuelPerUpdate*n || s.Debt() != 0 {
					t.Fatalf("unbounded insert did %d work, debt %d: want all %d owed", w, s.Debt(), FuelPerUpdate*(n+1))
				}
			} else {
				if w > limit+2 {
					t.Fatalf("bounded insert did %d units of merge work, limit %d", w, limit)
				}
				for more := true; more; calls++ {
					before := s.WorkDone()
					more = s.PayDebt(fuelOf(limit))
					if w := s.WorkDone() - before; w > limit+2 {
						t.Fatalf("PayDebt did %d units, limit %d", w, limit)
					}
					if calls > 4*n/limit {
						t.Fatal("debt never paid")
					}
				}
				if calls < FuelPerUpdate*n/limit-1 {
					t.Fatalf("debt paid in %d PayDebt calls, want at least %d", calls, FuelPerUpdate*n/limit-1)
				}
			}
			for fuel := 1 << 20; s.Exert(&fuel); fuel = 1 << 20 {
			}
			if s.BatchCount() != 1 {
				t.Fatalf("%d batches after the merge, want 1", s.BatchCount())
			}
			upds := append(append([]update(nil), ua...), ub...)
			if got, want := read(s.Batches(), 1), naive(upds, 1); !maps.Equal(got, want) {
				t.Fatalf("merged contents differ: %d keys, want %d", len(got), len(want))
			}
		})
	}
}

// fuelOf is a fresh budget of n units; 0 is no budget (nil).
func fuelOf(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

// TestPayDebtBoundsTotalWork: with several merges in progress, each owed
// by inserts, one PayDebt spends at most its fuel in all (plus the updates
// of one value per merge it touches), not its fuel once per merge, and
// subtracts exactly what it spent; the debt is still paid in full.
func TestPayDebtBoundsTotalWork(t *testing.T) {
	const fuel = 500
	s := New(frontier.At(0))
	if err := s.SetPhysical(frontier.Closed()); err != nil {
		t.Fatal(err)
	}
	// Pairs of equal batches, halving: each pair starts a merge that the
	// zero-fuel inserts leave in progress, so several are owed at once.
	lo := frontier.Time(0)
	for _, n := range []int{4096, 4096, 1024, 1024, 256, 256, 64, 64} {
		var upds []update
		for j := range n {
			upds = append(upds, update{fmt.Sprintf("%06d", j), "v", lo, 1})
		}
		zero := 0
		if err := s.InsertBounded(mk(t, lo, lo+1, upds...), &zero); err != nil {
			t.Fatal(err)
		}
		lo++
	}
	merges := 0
	for i := range s.entries {
		if s.entries[i].merge != nil {
			merges++
		}
	}
	if merges < 3 {
		t.Fatalf("%d merges in progress, want at least 3 for the test to mean anything", merges)
	}
	for calls := 0; s.Debt() > 0; calls++ {
		if calls > 1000 {
			t.Fatal("debt never paid")
		}
		f := fuel
		before := s.WorkDone()
		s.PayDebt(&f)
		w := s.WorkDone() - before
		if w > fuel+2*int64(merges) {
			t.Fatalf("PayDebt did %d units with %d in progress, fuel %d", w, merges, fuel)
		}
		if int64(fuel-f) != w {
			t.Fatalf("PayDebt did %d units but took %d of its fuel", w, fuel-f)
		}
	}
}
