package sink

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/storage"
)

// view is a random collection history: updates at times base+1 ...
// base+steps, rows from a small universe, multiplicities kept non-negative
// (a real view's contents). Its contents at a time are the accumulation of
// every update at or before it.
type view struct {
	base    frontier.Time
	steps   int
	updates []Update // sorted by time
}

func randomView(rng *rand.Rand, steps int) view {
	v := view{base: 1000, steps: steps}
	counts := map[string]int64{}
	for s := 1; s <= steps; s++ {
		t := v.base + frontier.Time(s)
		for range rng.IntN(4) {
			r := fmt.Sprintf("row%02d", rng.IntN(12))
			d := int64(rng.IntN(3) + 1)
			if counts[r] > 0 && rng.IntN(2) == 0 {
				d = -min(d, counts[r])
			}
			counts[r] += d
			v.updates = append(v.updates, Update{Row: []byte(r), Time: t, Diff: d})
		}
	}
	return v
}

// at returns the view's contents at t.
func (v view) at(t frontier.Time) map[string]int64 {
	out := map[string]int64{}
	for _, u := range v.updates {
		if u.Time <= t {
			out[string(u.Row)] += u.Diff
		}
	}
	for r, n := range out {
		if n == 0 {
			delete(out, r)
		}
	}
	return out
}

func (v view) end() frontier.Time { return v.base + frontier.Time(v.steps) + 1 }

// feed plays the view to w as a dataflow started at asOf would produce it:
// the snapshot at asOf, then each later time's updates in random chunks,
// with the frontier advancing by random amounts, up to `until`.
func feed(rng *rand.Rand, w *Writer, v view, asOf, until frontier.Time) {
	var snap []Update
	for r, n := range v.at(asOf) {
		snap = append(snap, Update{Row: []byte(r), Time: asOf, Diff: n})
	}
	w.Push(snap, nil, frontier.At(asOf))
	var pending []Update
	for _, u := range v.updates {
		if u.Time > asOf && u.Time < until {
			pending = append(pending, u)
		}
	}
	f := asOf
	for f < until {
		next := min(until, f+frontier.Time(rng.IntN(4)+1))
		var out []Update
		for len(pending) > 0 && pending[0].Time < next {
			out = append(out, pending[0])
			pending = pending[1:]
		}
		// Some updates arrive before their frontier, some with it.
		cut := rng.IntN(len(out) + 1)
		w.Push(out[:cut], nil, frontier.At(f))
		w.Push(out[cut:], nil, frontier.At(next))
		f = next
		if rng.IntN(4) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// waitUpper waits until the shard's upper reaches want.
func waitUpper(t *testing.T, st *storage.Store, shard string, want frontier.Time) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, upper, err := st.Frontiers(shard)
		if err != nil {
			t.Fatal(err)
		}
		if upper.IsComplete(want - 1) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("shard upper %v never reached %d", upper, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// checkShard compares the shard with the view at every time in [from,
// upper).
func checkShard(t *testing.T, st *storage.Store, shard string, v view, from frontier.Time) {
	t.Helper()
	_, upper, err := st.Frontiers(shard)
	if err != nil {
		t.Fatal(err)
	}
	ut, _ := upper.Time()
	for ts := from; ts < ut; ts++ {
		snap, err := st.Snapshot(context.Background(), shard, ts)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, u := range snap {
			got[string(u.Row)] += u.Diff
		}
		if want := v.at(ts); fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) {
			t.Fatalf("shard at %d = %v, view = %v", ts, sorted(got), sorted(want))
		}
	}
}

func sorted(m map[string]int64) []string {
	var out []string
	for r, n := range m {
		out = append(out, fmt.Sprintf("%s:%d", r, n))
	}
	sort.Strings(out)
	return out
}

func newStore(t *testing.T, shard string, initial frontier.Time) *storage.Store {
	t.Helper()
	st, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateSinkShard(shard, initial); err != nil {
		t.Fatal(err)
	}
	return st
}

func startWriter(t *testing.T, st *storage.Store, asOf frontier.Time) *Writer {
	return Start(Config{Shard: "u9", Storage: storeShard{st}, AsOf: asOf, Log: testr.New(t), MinBackoff: time.Millisecond})
}

func TestRandomStreamsOneWriter(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		v := randomView(rng, 40)
		st := newStore(t, "u9", v.base)
		w := startWriter(t, st, v.base)
		feed(rng, w, v, v.base, v.end())
		waitUpper(t, st, "u9", v.end())
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		checkShard(t, st, "u9", v, v.base)
	}
}

// TestConcurrentWritersNeitherDuplicateNorLose runs three writers of the
// same view at once, each with its own chunking and timing, as three
// replicas of a cluster do, while a reader checks the shard below its
// upper.
func TestConcurrentWritersNeitherDuplicateNorLose(t *testing.T) {
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 2))
		v := randomView(rng, 60)
		st := newStore(t, "u9", v.base)
		var wg sync.WaitGroup
		var writers []*Writer
		for i := range 3 {
			w := startWriter(t, st, v.base)
			writers = append(writers, w)
			wrng := rand.New(rand.NewPCG(seed, uint64(10+i)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				feed(wrng, w, v, v.base, v.end())
			}()
		}
		// Check while they race: every time below the upper is right.
		for range 5 {
			time.Sleep(2 * time.Millisecond)
			checkShard(t, st, "u9", v, v.base)
		}
		wg.Wait()
		waitUpper(t, st, "u9", v.end())
		for _, w := range writers {
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		checkShard(t, st, "u9", v, v.base)
	}
}

// TestRestartMidStream stops a writer part way and starts a new one, as a
// replica restart does: at an as_of below the shard's upper (the normal
// case: the shard is consistent and only the rest is written) and above it
// (the inputs were compacted past the shard's upper while nothing ran: the
// gap reads as the old contents until the new as_of).
func TestRestartMidStream(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		v := randomView(rng, 50)
		st := newStore(t, "u9", v.base)
		mid := v.base + frontier.Time(10+rng.IntN(20))
		w := startWriter(t, st, v.base)
		feed(rng, w, v, v.base, mid)
		waitUpper(t, st, "u9", mid)
		w.Close()
		_, upper, _ := st.Frontiers("u9")
		ut, _ := upper.Time()

		// Restart below the upper: the replayed history is not written
		// again.
		asOf := ut - frontier.Time(rng.IntN(5)) - 1
		w = startWriter(t, st, asOf)
		end := mid + 10
		feed(rng, w, v, asOf, end)
		waitUpper(t, st, "u9", end)
		w.Close()
		checkShard(t, st, "u9", v, v.base)

		// Restart above the upper.
		gap := end + 5
		w = startWriter(t, st, gap)
		feed(rng, w, v, gap, v.end())
		waitUpper(t, st, "u9", v.end())
		w.Close()
		checkShard(t, st, "u9", v, gap)
		old := v.at(end - 1)
		for ts := end; ts < gap; ts++ {
			snap, _ := st.Snapshot(context.Background(), "u9", ts)
			got := map[string]int64{}
			for _, u := range snap {
				got[string(u.Row)] += u.Diff
			}
			if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(old)) {
				t.Fatalf("gap time %d reads %v, want the contents before the restart %v", ts, sorted(got), sorted(old))
			}
		}
	}
}

// TestCorrectsAWrongShard starts a writer against a shard holding rows the
// view never had (a writer of an older definition, or a bug): the first
// append retracts them.
func TestCorrectsAWrongShard(t *testing.T) {
	ctx := context.Background()
	st := newStore(t, "u9", 10)
	if err := st.CompareAndAppend(ctx, "u9", 10, 20, storageUpdates([]Update{
		{Row: []byte("stale"), Time: 10, Diff: 2}, {Row: []byte("kept"), Time: 12, Diff: 1},
	})); err != nil {
		t.Fatal(err)
	}
	w := startWriter(t, st, 15)
	w.Push([]Update{{Row: []byte("kept"), Time: 15, Diff: 1}, {Row: []byte("new"), Time: 15, Diff: 1}}, nil, frontier.At(25))
	waitUpper(t, st, "u9", 25)
	w.Close()
	snap, _ := st.Snapshot(ctx, "u9", 24)
	if got := fmt.Sprint(snap); got != "[{[107 101 112 116] 24 1} {[110 101 119] 24 1}]" {
		t.Fatalf("corrected shard = %v, want kept and new once each", snap)
	}
	// The correction went in at the old upper: 20..24 read corrected.
	snap, _ = st.Snapshot(ctx, "u9", 20)
	if len(snap) != 2 {
		t.Fatalf("shard at the old upper = %v", snap)
	}
}

// TestErrorsAreStored: the view's error rows are stored, marked, beside
// its ok rows, and retracted with them.
func TestErrorsAreStored(t *testing.T) {
	ctx := context.Background()
	st := newStore(t, "u9", 10)
	w := startWriter(t, st, 10)
	defer w.Close()
	boom := []byte("division by zero")
	w.Push([]Update{{Row: []byte("a"), Time: 10, Diff: 1}}, []Update{{Row: boom, Time: 13, Diff: 1}}, frontier.At(20))
	waitUpper(t, st, "u9", 20)
	w.Push(nil, []Update{{Row: boom, Time: 20, Diff: -1}}, frontier.At(30))
	waitUpper(t, st, "u9", 30)
	stored := string(render.StoredError(boom))
	for ts, want := range map[frontier.Time]string{12: "[a:1]", 13: "[a:1 " + stored + ":1]", 19: "[a:1 " + stored + ":1]", 20: "[a:1]"} {
		snap, _ := st.Snapshot(ctx, "u9", ts)
		got := map[string]int64{}
		for _, u := range snap {
			got[string(u.Row)] += u.Diff
		}
		if fmt.Sprint(sorted(got)) != want {
			t.Fatalf("shard at %d = %v, want %s", ts, sorted(got), want)
		}
	}
}

// TestDroppedShardEndsTheWriter: dropping the shard stops the writer
// without an error.
func TestDroppedShardEndsTheWriter(t *testing.T) {
	st := newStore(t, "u9", 10)
	w := startWriter(t, st, 10)
	w.Push([]Update{{Row: []byte("a"), Time: 10, Diff: 1}}, nil, frontier.At(12))
	waitUpper(t, st, "u9", 12)
	st.DropShard("u9")
	w.Push(nil, nil, frontier.At(20))
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		t.Fatal("writer kept running after its shard was dropped")
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close after drop: %v", err)
	}
}

// TestFinishedDataflowFollowsTheClock: a dataflow whose frontier closed (a
// constant view) is written once and its upper then follows the clock.
func TestFinishedDataflowFollowsTheClock(t *testing.T) {
	st := newStore(t, "u9", 10)
	var mu sync.Mutex
	now := time.UnixMilli(50)
	w := Start(Config{Shard: "u9", Storage: storeShard{st}, AsOf: 10, Log: testr.New(t), Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	defer w.Close()
	w.Push([]Update{{Row: []byte("one"), Time: 10, Diff: 1}}, nil, frontier.Closed())
	waitUpper(t, st, "u9", 50)
	mu.Lock()
	now = time.UnixMilli(90)
	mu.Unlock()
	waitUpper(t, st, "u9", 90)
	snap, _ := st.Snapshot(context.Background(), "u9", 89)
	if len(snap) != 1 || string(snap[0].Row) != "one" || snap[0].Diff != 1 {
		t.Fatalf("finished view's shard = %v", snap)
	}
}
