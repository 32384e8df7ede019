package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"pgregory.net/rapid"
)

type update struct {
	key, val string
	t        frontier.Time
	diff     int64
}

type kv struct{ key, val string }

// tb is what the helpers need from *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// accumulate is the naive reference: the sum of diffs per (key, val) over
// updates with time <= t, zero sums dropped.
func accumulate(upds []update, t frontier.Time) map[kv]int64 {
	out := map[kv]int64{}
	for _, u := range upds {
		if u.t <= t {
			out[kv{u.key, u.val}] += u.diff
		}
	}
	maps.DeleteFunc(out, func(_ kv, d int64) bool { return d == 0 })
	return out
}

// accumulateList reads batches as of t through a CursorList.
func accumulateList(batches []*Batch, t frontier.Time) map[kv]int64 {
	out := map[kv]int64{}
	l := NewCursorList(batches)
	for ; l.KeyValid(); l.StepKey() {
		for ; l.ValValid(); l.StepVal() {
			if d := l.Accumulate(t); d != 0 {
				out[kv{string(l.Key()), string(l.Val())}] = d
			}
		}
	}
	return out
}

// contents lists every update of b, in cursor order.
func contents(b *Batch) []update {
	var out []update
	c := b.Cursor()
	for ; c.KeyValid(); c.StepKey() {
		for ; c.ValValid(); c.StepVal() {
			c.ForEachUpdate(func(t frontier.Time, d int64) {
				out = append(out, update{string(c.Key()), string(c.Val()), t, d})
			})
		}
	}
	return out
}

// checkInvariants verifies the layout promises of the package comment.
func checkInvariants(t tb, b *Batch) {
	t.Helper()
	var prevKey []byte
	n := 0
	c := b.Cursor()
	for ; c.KeyValid(); c.StepKey() {
		if prevKey != nil && bytes.Compare(prevKey, c.Key()) >= 0 {
			t.Fatalf("keys not strictly increasing: %q then %q", prevKey, c.Key())
		}
		prevKey = c.Key()
		if !c.ValValid() {
			t.Fatalf("key %q has no values", c.Key())
		}
		var prevVal []byte
		for ; c.ValValid(); c.StepVal() {
			if prevVal != nil && bytes.Compare(prevVal, c.Val()) >= 0 {
				t.Fatalf("vals not strictly increasing under %q", c.Key())
			}
			prevVal = c.Val()
			ts, ds := c.Updates()
			if len(ts) == 0 {
				t.Fatalf("(%q, %q) has no updates", c.Key(), c.Val())
			}
			for i := range ts {
				if i > 0 && ts[i-1] >= ts[i] {
					t.Fatalf("times not strictly increasing: %v", ts)
				}
				if ds[i] == 0 {
					t.Fatalf("zero diff kept")
				}
				if !b.desc.Lower.LessEqualTime(ts[i]) {
					t.Fatalf("time %d below lower %v", ts[i], b.desc.Lower)
				}
				if b.desc.Upper.LessEqualTime(ts[i]) {
					// Only logical compaction may place a time at or beyond upper, and then exactly at since.
					if st, ok := b.desc.Since.Time(); !ok || ts[i] != st {
						t.Fatalf("time %d beyond upper %v not explained by since %v", ts[i], b.desc.Upper, b.desc.Since)
					}
				}
			}
			n += len(ts)
		}
	}
	if n != b.Len() {
		t.Fatalf("cursor saw %d updates, Len %d", n, b.Len())
	}
}

func build(t tb, upds []update, desc Description) *Batch {
	t.Helper()
	var bl Builder
	for _, u := range upds {
		bl.Push([]byte(u.key), []byte(u.val), u.t, u.diff)
	}
	b, err := bl.Build(desc)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, b)
	return b
}

func desc(lo, hi frontier.Time) Description {
	return Description{Lower: frontier.At(lo), Upper: frontier.At(hi), Since: frontier.Minimum()}
}

func TestBuilderConsolidates(t *testing.T) {
	tests := []struct {
		name string
		in   []update
		want []update
	}{
		{"empty", nil, nil},
		{"sorts", []update{{"b", "x", 1, 1}, {"a", "y", 2, 1}, {"a", "x", 3, 1}, {"a", "x", 1, 2}},
			[]update{{"a", "x", 1, 2}, {"a", "x", 3, 1}, {"a", "y", 2, 1}, {"b", "x", 1, 1}}},
		{"sums equal triples", []update{{"k", "v", 4, 1}, {"k", "v", 4, 2}, {"k", "v", 4, -1}},
			[]update{{"k", "v", 4, 2}}},
		{"drops cancelled and empty keys", []update{{"k", "v", 4, 1}, {"k", "v", 4, -1}, {"z", "v", 1, 1}},
			[]update{{"z", "v", 1, 1}}},
		{"long keys share prefix", []update{{"prefix-long-b", "", 1, 1}, {"prefix-long-a", "", 1, 1}, {"prefix", "", 1, 1}, {"prefix\x00", "", 1, 1}},
			[]update{{"prefix", "", 1, 1}, {"prefix\x00", "", 1, 1}, {"prefix-long-a", "", 1, 1}, {"prefix-long-b", "", 1, 1}}},
		{"empty key and val", []update{{"", "", 1, 1}, {"", "", 2, 1}}, []update{{"", "", 1, 1}, {"", "", 2, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := build(t, tt.in, desc(0, 10))
			if got := contents(b); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBuilderRejectsOutOfRange(t *testing.T) {
	for _, tm := range []frontier.Time{2, 10, 11} {
		var bl Builder
		bl.Push([]byte("k"), nil, tm, 1)
		if _, err := bl.Build(desc(3, 10)); !errors.Is(err, ErrTimeOutOfRange) {
			t.Errorf("time %d: got %v, want ErrTimeOutOfRange", tm, err)
		}
	}
	var bl Builder
	if _, err := bl.Build(desc(5, 3)); err == nil {
		t.Error("lower beyond upper accepted")
	}
}

func TestBuilderSinceAdvances(t *testing.T) {
	d := Description{Lower: frontier.At(0), Upper: frontier.At(10), Since: frontier.At(5)}
	b := build(t, []update{{"k", "v", 1, 1}, {"k", "v", 3, -1}, {"k", "w", 2, 1}, {"k", "w", 7, 1}}, d)
	want := []update{{"k", "w", 5, 1}, {"k", "w", 7, 1}}
	if got := contents(b); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestMergerRejects(t *testing.T) {
	a, b := Empty(desc(0, 5)), Empty(desc(6, 9))
	if _, err := NewMerger(a, b, frontier.Minimum()); !errors.Is(err, ErrNotAdjacent) {
		t.Fatalf("got %v", err)
	}
}

func TestMergerCompacts(t *testing.T) {
	a := build(t, []update{{"k", "v", 1, 1}, {"k", "x", 2, 1}, {"j", "v", 1, 1}}, desc(0, 5))
	b := build(t, []update{{"k", "v", 6, -1}, {"k", "x", 5, 1}, {"l", "v", 9, 2}}, desc(5, 10))
	m, err := Merge(a, b, frontier.At(7))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, m)
	want := []update{{"j", "v", 7, 1}, {"k", "x", 7, 2}, {"l", "v", 9, 2}}
	if got := contents(m); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if d := m.Description(); d.Lower != frontier.At(0) || d.Upper != frontier.At(10) || d.Since != frontier.At(7) {
		t.Fatalf("description %v", d)
	}
}

func TestCursorSeek(t *testing.T) {
	var upds []update
	for i := 0; i < 100; i += 2 {
		upds = append(upds, update{fmt.Sprintf("k%03d", i), "a", 1, 1}, update{fmt.Sprintf("k%03d", i), "c", 1, 1})
	}
	b := build(t, upds, desc(0, 2))
	c := b.Cursor()
	c.SeekKey([]byte("k041"))
	if !c.KeyValid() || string(c.Key()) != "k042" {
		t.Fatalf("seek: %q", c.Key())
	}
	c.SeekVal([]byte("b"))
	if !c.ValValid() || string(c.Val()) != "c" {
		t.Fatalf("seek val: %q", c.Val())
	}
	c.RewindVals()
	if string(c.Val()) != "a" {
		t.Fatalf("rewind val: %q", c.Val())
	}
	c.SeekKey([]byte("k000")) // never moves backwards
	if string(c.Key()) != "k042" {
		t.Fatalf("seek moved backwards to %q", c.Key())
	}
	c.SeekKey([]byte("z"))
	if c.KeyValid() {
		t.Fatal("seek past end still valid")
	}
	c.RewindKeys()
	if string(c.Key()) != "k000" {
		t.Fatalf("rewind: %q", c.Key())
	}
	// Slices returned by the cursor must not let appends reach the arena.
	k := c.Key()
	_ = append(k, 'X')
	if c.StepKey(); string(c.Key()) != "k002" {
		t.Fatalf("append through Key clobbered arena: %q", c.Key())
	}
}

func TestCursorListSeek(t *testing.T) {
	a := build(t, []update{{"a", "1", 1, 1}, {"c", "1", 1, 1}, {"e", "1", 1, 1}}, desc(0, 2))
	b := build(t, []update{{"b", "1", 2, 1}, {"c", "0", 2, 1}, {"c", "1", 2, 1}}, desc(2, 3))
	l := NewCursorList([]*Batch{a, Empty(desc(3, 4)), b})
	l.SeekKey([]byte("bb"))
	if string(l.Key()) != "c" || string(l.Val()) != "0" {
		t.Fatalf("at %q/%q", l.Key(), l.Val())
	}
	l.StepVal()
	if got := l.Accumulate(5); got != 2 {
		t.Fatalf("c/1 accumulates %d, want 2", got)
	}
	if got := l.Accumulate(1); got != 1 {
		t.Fatalf("c/1 at 1 accumulates %d, want 1", got)
	}
	l.StepKey()
	if string(l.Key()) != "e" {
		t.Fatalf("at %q", l.Key())
	}
	l.StepKey()
	if l.KeyValid() {
		t.Fatal("list valid past end")
	}
}

// TestCursorListLead: a walk that steps the list's Lead alone while its key
// is below the bound, and the list otherwise, visits the same (key, value,
// accumulation) sequence as a walk of the list alone, over any number of
// batches with shared and interleaved keys. Sabotage: a bound of the
// second batch's key instead of the least other key, or ignoring the
// bound, visits shared keys once per batch and fails.
func TestCursorListLead(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var batches []*Batch
		for i := range rapid.IntRange(1, 5).Draw(t, "batches") {
			var ups []update
			for range rapid.IntRange(0, 30).Draw(t, "updates") {
				ups = append(ups, update{
					key:  fmt.Sprintf("k%02d", rapid.IntRange(0, 40).Draw(t, "key")),
					val:  rapid.SampledFrom([]string{"x", "y"}).Draw(t, "val"),
					t:    frontier.Time(i),
					diff: int64(rapid.IntRange(1, 3).Draw(t, "diff")),
				})
			}
			batches = append(batches, build(t, ups, desc(frontier.Time(i), frontier.Time(i+1))))
		}
		type visit struct {
			key, val string
			m        int64
		}
		var want, got []visit
		for l := NewCursorList(batches); l.KeyValid(); l.StepKey() {
			for ; l.ValValid(); l.StepVal() {
				want = append(want, visit{string(l.Key()), string(l.Val()), l.Accumulate(10)})
			}
		}
		l := NewCursorList(batches)
		for l.KeyValid() {
			if lead, bound := l.Lead(); lead != nil {
				for ; lead.KeyValid() && (bound == nil || bytes.Compare(lead.Key(), bound) < 0); lead.StepKey() {
					for ; lead.ValValid(); lead.StepVal() {
						got = append(got, visit{string(lead.Key()), string(lead.Val()), lead.Accumulate(10)})
					}
				}
				if l.Resync(); !l.KeyValid() {
					break
				}
			}
			for ; l.ValValid(); l.StepVal() {
				got = append(got, visit{string(l.Key()), string(l.Val()), l.Accumulate(10)})
			}
			l.StepKey()
		}
		if !slices.Equal(got, want) {
			t.Fatalf("walk with Lead %v, want %v", got, want)
		}
	})
}

// genUpdates draws updates with few distinct keys and values so collisions
// and cancellations are common.
func genUpdates(t *rapid.T, maxTime int) []update {
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) update {
		return update{
			key:  rapid.SampledFrom([]string{"", "a", "ab", "abcdefghij", "abcdefghik", "b"}).Draw(t, "key"),
			val:  rapid.SampledFrom([]string{"", "x", "y", "zzzzzzzzzz"}).Draw(t, "val"),
			t:    frontier.Time(rapid.IntRange(0, maxTime-1).Draw(t, "time")),
			diff: int64(rapid.IntRange(-2, 2).Draw(t, "diff")),
		}
	}), 0, 60).Draw(t, "updates")
}

// TestMergeMatchesNaive: for random updates split at a random boundary and a
// random since, reading the merged batch at any t >= since equals the naive
// accumulation, whatever the fuel per Work call.
func TestMergeMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const maxTime = 12
		upds := genUpdates(t, maxTime)
		mid := frontier.Time(rapid.IntRange(0, maxTime).Draw(t, "mid"))
		since := frontier.Time(rapid.IntRange(0, maxTime+3).Draw(t, "since"))
		var lo, hi []update
		for _, u := range upds {
			if u.t < mid {
				lo = append(lo, u)
			} else {
				hi = append(hi, u)
			}
		}
		a := build(t, lo, desc(0, mid))
		b := build(t, hi, desc(mid, maxTime))
		for tm := frontier.Time(0); tm <= maxTime+3; tm++ {
			if got, want := accumulateList([]*Batch{a, b}, tm), accumulate(upds, tm); !maps.Equal(got, want) {
				t.Fatalf("unmerged read at %d: got %v, want %v", tm, got, want)
			}
		}
		m, err := NewMerger(a, b, frontier.At(since))
		if err != nil {
			t.Fatal(err)
		}
		// Parts of a few updates: the merged batch is parted (parted.go).
		m.setParts(rapid.IntRange(1, 8).Draw(t, "part"), 1<<20)
		step := rapid.IntRange(1, 10).Draw(t, "fuel")
		for calls := 0; ; calls++ {
			fuel := step
			if m.Work(&fuel) {
				break
			}
			if calls > 10*(len(upds)+10) {
				t.Fatal("merge made no progress")
			}
		}
		merged := m.Result()
		checkInvariants(t, merged)
		if merged.Len() > a.Len()+b.Len() {
			t.Fatalf("merge grew: %d > %d+%d", merged.Len(), a.Len(), b.Len())
		}
		for tm := since; tm <= maxTime+3; tm++ {
			if got, want := accumulateList([]*Batch{merged}, tm), accumulate(upds, tm); !maps.Equal(got, want) {
				t.Fatalf("merged read at %d (since %d): got %v, want %v", tm, since, got, want)
			}
		}
	})
}

func TestSizeBytes(t *testing.T) {
	tests := []struct {
		name     string
		upd      func(i int) []update
		perUpd   int // expected bytes per update, within 10%
		constant bool
	}{
		// A snapshot: one value and update per key, all at one time with
		// diff 1: 8 key + 16 val + 2*4 offsets; offset and update columns elided.
		{"snapshot", func(i int) []update {
			return []update{{fmt.Sprintf("%08d", i), "0123456789abcdef", 1, 1}}
		}, 32, true},
		// Two updates per value at distinct times and diffs: only keyVals elided.
		{"history", func(i int) []update {
			k := fmt.Sprintf("%08d", i)
			return []update{{k, "0123456789abcdef", 1, 1}, {k, "0123456789abcdef", 2, int64(i%3) + 2}}
		}, (8+16+4+4+4)/2 + 16, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var upds []update
			for i := range 1000 {
				upds = append(upds, tt.upd(i)...)
			}
			b := build(t, upds, desc(0, 3))
			if b.constTimes != tt.constant || b.constDiffs != tt.constant {
				t.Fatalf("constant columns: times %v diffs %v, want %v", b.constTimes, b.constDiffs, tt.constant)
			}
			got, want := float64(b.SizeBytes())/float64(len(upds)), float64(tt.perUpd)
			if got < want || got > want*1.1 {
				t.Fatalf("SizeBytes per update %.1f, want about %v", got, want)
			}
			if !slices.Equal(contents(b), contents(mustMerge(t, b, Empty(desc(3, 4))))) {
				t.Fatal("merge with an empty batch changed the contents")
			}
		})
	}
}

func mustMerge(t *testing.T, a, b *Batch) *Batch {
	m, err := Merge(a, b, frontier.Minimum())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBuilderRadixPath checks the radix sort used for large batches against
// a comparison sort, with keys that share long prefixes, short keys that are
// prefixes of others, and repeated (key, val, time) triples.
func TestBuilderRadixPath(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	n := 3 * radixMin
	upds := make([]update, 0, n)
	keys := []string{"", "a", "a\x00", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefghj", "zzzzzzzzzzzz"}
	for range n {
		var k string
		if r.IntN(2) == 0 {
			k = keys[r.IntN(len(keys))]
		} else {
			var buf [8]byte
			binary.BigEndian.PutUint64(buf[:], r.Uint64()%5000)
			k = string(buf[:r.IntN(9)])
		}
		upds = append(upds, update{k, fmt.Sprint(r.IntN(3)), frontier.Time(r.IntN(4)), int64(r.IntN(3) - 1)})
	}
	b := build(t, upds, desc(0, 4))
	// Reference: sort with the comparison sort and consolidate naively.
	sums := map[update]int64{}
	for _, u := range upds {
		key := u
		key.diff = 0
		sums[key] += u.diff
	}
	var want []update
	for u, d := range sums {
		if d != 0 {
			u.diff = d
			want = append(want, u)
		}
	}
	slices.SortFunc(want, func(x, y update) int {
		if c := strings.Compare(x.key, y.key); c != 0 {
			return c
		}
		if c := strings.Compare(x.val, y.val); c != 0 {
			return c
		}
		return int(x.t) - int(y.t)
	})
	if got := contents(b); !slices.Equal(got, want) {
		t.Fatalf("radix path: %d updates, want %d", len(got), len(want))
	}
}

// TestSeekKeyIndexed checks SeekKey, which uses the sampled prefix index on
// large batches, against a linear scan, from random starting positions and
// with many keys sharing their 8-byte prefix.
func TestSeekKeyIndexed(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	prefixes := []string{"", "a", "prefix12", "prefix13", "zz"}
	gen := func() string {
		s := []byte(prefixes[r.IntN(len(prefixes))])
		for range r.IntN(5) {
			s = append(s, byte('a'+r.IntN(4)))
		}
		return string(s)
	}
	set := map[string]bool{}
	for range 3000 {
		set[gen()] = true
	}
	keys := slices.Sorted(maps.Keys(set))
	var upds []update
	for _, k := range keys {
		upds = append(upds, update{k, "v", 0, 1})
	}
	b := build(t, upds, desc(0, 1))
	if len(b.index) == 0 {
		t.Fatal("large batch has no seek index")
	}
	for range 3000 {
		start := r.IntN(len(keys) + 1)
		target := gen()
		c := b.Cursor()
		for range start {
			c.StepKey()
		}
		c.SeekKey([]byte(target))
		want := start
		for want < len(keys) && keys[want] < target {
			want++
		}
		if want == len(keys) {
			if c.KeyValid() {
				t.Fatalf("seek %q from %d: at %q, want end", target, start, c.Key())
			}
		} else if !c.KeyValid() || string(c.Key()) != keys[want] {
			t.Fatalf("seek %q from %d: got valid=%v, want %q", target, start, c.KeyValid(), keys[want])
		}
	}
}

// TestAccumulateAllMatchesNaive: a batch's total multiplicity as of t is
// the sum of its accumulated (key, val) multiplicities, also after a merge
// compacted its times (constant time and diff columns).
func TestAccumulateAllMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const maxTime = 12
		upds := genUpdates(t, maxTime)
		since := frontier.Time(rapid.IntRange(0, maxTime+3).Draw(t, "since"))
		b := build(t, upds, desc(0, maxTime))
		m, err := NewMerger(b, Empty(desc(maxTime, maxTime+1)), frontier.At(since))
		if err != nil {
			t.Fatal(err)
		}
		for fuel := 1 << 20; !m.Work(&fuel); fuel = 1 << 20 {
		}
		for _, bt := range []*Batch{b, m.Result()} {
			from, _ := bt.Description().Since.Time()
			for tm := from; tm <= maxTime+3; tm++ {
				var want int64
				for _, d := range accumulate(upds, tm) {
					want += d
				}
				if got := bt.AccumulateAll(tm); got != want {
					t.Fatalf("AccumulateAll(%d) = %d, want %d", tm, got, want)
				}
			}
		}
	})
}

// TestRunsMerger: any number of runs of one interval, merged with any fuel
// per call, give the batch one Build of all their updates gives (equal
// triples summed across runs, cancellations dropped); runs of different
// intervals are refused.
func TestRunsMerger(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := desc(0, 10)
		upds := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) update {
			return update{
				key:  fmt.Sprintf("k%02d", rapid.IntRange(0, 20).Draw(t, "key")),
				val:  rapid.SampledFrom([]string{"", "v", "w"}).Draw(t, "val"),
				t:    frontier.Time(rapid.IntRange(0, 9).Draw(t, "time")),
				diff: int64(rapid.IntRange(-2, 2).Draw(t, "diff")),
			}
		}), 0, 150).Draw(t, "updates")
		runs := make([][]update, rapid.IntRange(1, 9).Draw(t, "runs"))
		for _, u := range upds {
			i := rapid.IntRange(0, len(runs)-1).Draw(t, "run")
			runs[i] = append(runs[i], u)
		}
		var bs []*Batch
		for _, r := range runs {
			bs = append(bs, build(t, r, d))
		}
		m, err := NewRunsMerger(bs)
		if err != nil {
			t.Fatal(err)
		}
		m.setParts(rapid.IntRange(1, 8).Draw(t, "part"), 1<<20)
		fuel := rapid.IntRange(1, 30).Draw(t, "fuel")
		for f := fuel; !m.Work(&f); f = fuel {
		}
		got := m.Result()
		checkInvariants(t, got)
		if want := build(t, upds, d); !slices.Equal(contents(got), contents(want)) || got.Description() != d {
			t.Fatalf("merged runs %v %v, want %v", contents(got), got.Description(), contents(want))
		}
	})
	if _, err := NewRunsMerger([]*Batch{Empty(desc(0, 5)), Empty(desc(0, 6))}); !errors.Is(err, ErrNotSameInterval) {
		t.Fatalf("runs of different intervals: %v", err)
	}
}
