package render

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// batchContents lists a batch's updates in its order.
func batchContents(b *batch.Batch) []string {
	var out []string
	c := b.Cursor()
	for ; c.KeyValid(); c.StepKey() {
		for ; c.ValValid(); c.StepVal() {
			c.ForEachUpdate(func(t frontier.Time, d int64) {
				out = append(out, fmt.Sprintf("%x/%x@%d:%d", c.Key(), c.Val(), t, d))
			})
		}
	}
	return out
}

// buildUpdates is n updates at times [1, 4) over n/3 keys, with repeats
// and cancellations that only consolidation across runs removes.
func buildUpdates(n int, seed uint64) []dataflow.Update {
	rng := rand.New(rand.NewPCG(seed, 1))
	ups := make([]dataflow.Update, n)
	for i := range ups {
		k, v := rng.IntN(max(n/3, 1)), rng.IntN(3)
		d := int64(1)
		if rng.IntN(4) == 0 {
			d = -1
		}
		ups[i] = dataflow.Update{Key: row.Pack(row.Int64(int64(k))), Val: row.Pack(row.Int64(int64(v))), Time: frontier.Time(1 + rng.IntN(3)), Diff: d}
	}
	return ups
}

// maxKeyUpdates is the most updates one key holds in ups.
func maxKeyUpdates(ups []dataflow.Update) int {
	per := map[string]int{}
	most := 0
	for _, u := range ups {
		per[string(u.Key)]++
		most = max(most, per[string(u.Key)])
	}
	return most
}

// TestBatchBuildOnFuel: a build of 50,000 updates on fuel F takes at least
// N/F calls, none doing more than F units of work (plus the updates of one
// key, where writing a run or a merge may stop), staging more than
// F/stageUnitsPerUpdate updates into a run or writing more than
// F/writeUnitsPerUpdate (plus one key's) into one, while its runs hold
// runUpdates(F) updates whatever F (a smaller fuel spreads a run over more
// calls instead of adding merge levels), merged in one merge of them all
// (each update rewritten once, not once per level of pairwise merges); it
// gives exactly the batch one Build of every update gives; fuel 0 builds it
// in one call.
func TestBatchBuildOnFuel(t *testing.T) {
	const n = 50_000
	desc := batch.Description{Lower: frontier.At(1), Upper: frontier.At(4), Since: frontier.Minimum()}
	var one batch.Builder
	for _, u := range buildUpdates(n, 7) {
		one.Push(u.Key, u.Val, u.Time, u.Diff)
	}
	want, err := one.Build(desc)
	if err != nil {
		t.Fatal(err)
	}
	wantContents := batchContents(want)
	keyMax := maxKeyUpdates(buildUpdates(n, 7))
	for _, fuel := range []int{0, 1000, 4096, 20_000, 100_000} {
		t.Run(fmt.Sprintf("fuel=%d", fuel), func(t *testing.T) {
			bb := newBatchBuild(desc, pendingOf(buildUpdates(n, 7)))
			var b batch.Builder
			var got *batch.Batch
			for got == nil {
				if got, _, err = bb.work(&b, fuel); err != nil {
					t.Fatal(err)
				}
				if bb.calls > 10*n {
					t.Fatal("build never finished")
				}
			}
			minCalls := 1
			if fuel > 0 {
				minCalls = (n + fuel - 1) / fuel
			}
			if bb.calls < minCalls {
				t.Errorf("%d calls, want at least %d", bb.calls, minCalls)
			}
			// A call stops between keys (writing a run) or values (a
			// merge): it overruns its fuel by at most one key's updates.
			if fuel > 0 && bb.maxWork > fuel+writeUnitsPerUpdate*keyMax {
				t.Errorf("a call did %d units of work, fuel %d", bb.maxWork, fuel)
			}
			// Writing a run (fresh memory) is what a run costs: a call
			// writes at most its fuel's share of a run, not the run.
			if fuel > 0 && bb.maxWritten > fuel/writeUnitsPerUpdate+keyMax {
				t.Errorf("a call wrote %d updates into a run, fuel %d allows %d", bb.maxWritten, fuel, fuel/writeUnitsPerUpdate)
			}
			if fuel > 0 && bb.maxStaged > fuel/stageUnitsPerUpdate {
				t.Errorf("a call staged %d updates, fuel %d allows %d", bb.maxStaged, fuel, fuel/stageUnitsPerUpdate)
			}
			if fuel > 0 && fuel/stageUnitsPerUpdate < n && bb.maxStaged < min(fuel/stageUnitsPerUpdate, runUpdates(fuel)) {
				t.Errorf("no call staged more than %d updates, fuel %d allows %d: the build does more calls than it needs", bb.maxStaged, fuel, fuel/stageUnitsPerUpdate)
			}
			if wantRun := min(n, runUpdates(fuel)); bb.maxRun != wantRun {
				t.Errorf("the largest run held %d updates, want %d (runUpdates(%d))", bb.maxRun, wantRun, fuel)
			}
			if runs := (n + runUpdates(fuel) - 1) / runUpdates(fuel); runs > 1 && bb.merges != 1 {
				t.Errorf("%d runs were merged in %d merges, want one", runs, bb.merges)
			}
			if fuel == 0 && bb.calls != 1 {
				t.Errorf("unbounded build took %d calls, want 1", bb.calls)
			}
			if got.Description() != desc {
				t.Errorf("description %v, want %v", got.Description(), desc)
			}
			if gc := batchContents(got); !slices.Equal(gc, wantContents) {
				t.Errorf("fuelled build gave %d updates, one Build %d; they differ", len(gc), len(wantContents))
			}
		})
	}
}

// TestArrangeBuildSpansSteps: a 60,000-update snapshot sealed with 4,096
// units of fuel per step takes at least 15 schedules of the arrangement;
// while it is in progress the arrangement's stream frontier never passes
// its trace's upper (a consumer never sees a time whose batch is not in
// the trace); the arranged contents are those of an unbounded build.
func TestArrangeBuildSpansSteps(t *testing.T) {
	const n, fuel = 60_000, 4096
	for _, tc := range []struct {
		fuel     int
		minCalls int
	}{{fuel, n / fuel}, {0, 1}} {
		t.Run(fmt.Sprintf("fuel=%d", tc.fuel), func(t *testing.T) {
			ws, err := dataflow.New(dataflow.Config{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			var (
				mu       sync.Mutex
				builds   []*batchBuild
				tr       *trace.Trace
				overtook []string
			)
			done := make(chan struct{}, 1)
			ws.Install("arrange", func(b *dataflow.Builder) error {
				sent := false
				src := b.AddOperator("src", nil, 1, dataflow.LogicFunc(func(op *dataflow.Operator) {
					if !sent {
						sent = true
						op.Output(0).Send(buildUpdates(n, 3))
					}
					op.SetHold(frontier.Closed())
				}))
				src.SetHold(frontier.At(1))
				a, lg := arrange(b, "test", src.Stream(0), func(err error) { t.Error(err) })
				lg.fuel = func() int { return tc.fuel }
				lg.onBuilt = func(bb *batchBuild) { mu.Lock(); builds = append(builds, bb); mu.Unlock() }
				mu.Lock()
				tr = a.Trace
				mu.Unlock()
				fired := false
				b.AddOperator("probe", []dataflow.Connection{{From: a.Stream}}, 0, dataflow.LogicFunc(func(op *dataflow.Operator) {
					f := op.InputFrontier()
					if !f.LessEqual(a.Trace.Upper()) {
						mu.Lock()
						overtook = append(overtook, fmt.Sprintf("stream %v, trace upper %v", f, a.Trace.Upper()))
						mu.Unlock()
					}
					if !fired && f.IsClosed() {
						fired = true
						done <- struct{}{}
					}
				}))
				return nil
			}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			ws.Start(ctx)
			defer func() { cancel(); ws.Stop() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("arrangement never closed")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(overtook) > 0 {
				t.Errorf("the stream's frontier passed the trace's upper: %v", overtook)
			}
			var big *batchBuild
			for _, bb := range builds {
				if big == nil || bb.calls > big.calls {
					big = bb
				}
			}
			if big == nil || big.calls < tc.minCalls {
				t.Fatalf("the snapshot's build took %v calls, want at least %d", big, tc.minCalls)
			}
			if tc.fuel > 0 && big.maxWork > tc.fuel+8 {
				t.Errorf("one step of the build did %d units of work, fuel %d", big.maxWork, tc.fuel)
			}
			rd, err := tr.ReadAt(3)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			rd.Scan(func(k, v []byte, d int64) bool { got[fmt.Sprintf("%x/%x", k, v)] += d; return true })
			want := map[string]int64{}
			for _, u := range buildUpdates(n, 3) {
				want[fmt.Sprintf("%x/%x", u.Key, u.Val)] += u.Diff
			}
			for k, d := range want {
				if d == 0 {
					delete(want, k)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("arranged %d (key, val) pairs, want %d", len(got), len(want))
			}
			for k, d := range want {
				if got[k] != d {
					t.Fatalf("(key, val) %s: %d, want %d", k, got[k], d)
				}
			}
		})
	}
}

// TestBatchBuildReclaimsMergedRuns: a build whose run merges drop enough
// off-heap memory starts a collection itself, so a hydration's consumed
// runs (the index several times over) are unmapped without waiting for the
// heap to grow. Automatic collection is off, so a collection that happens
// is one the build asked for.
func TestBatchBuildReclaimsMergedRuns(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	desc := batch.Description{Lower: frontier.At(1), Upper: frontier.At(4), Since: frontier.Minimum()}
	cases := []struct {
		name string
		at   int
		want bool
	}{
		{"below the threshold", 1 << 40, false},
		{"at the threshold", 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bb := newBatchBuild(desc, pendingOf(buildUpdates(50_000, 7)))
			bb.reclaim.At = tc.at
			before := numGC()
			var b batch.Builder
			for got := (*batch.Batch)(nil); got == nil; {
				var err error
				if got, _, err = bb.work(&b, 20_000); err != nil {
					t.Fatal(err)
				}
				if got != nil && got.OffHeapBytes() == 0 {
					t.Fatal("the built batch stayed on the Go heap: the test needs arenas")
				}
			}
			// Wait for the background collection (bounded; it fails only
			// if none ever comes).
			for i := 0; tc.want && i < 2000 && numGC() == before; i++ {
				time.Sleep(time.Millisecond)
			}
			if got := numGC() > before; got != tc.want {
				t.Fatalf("collection after merging runs: %v, want %v", got, tc.want)
			}
		})
	}
}

func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}
