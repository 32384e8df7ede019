package render

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/spine"
)

// TestArrangeScheduleOneBudget: an arrangement sealing several large
// snapshots, one after the other, inserts each into a spine with merges of
// the earlier ones in progress. With fuel F no schedule does more than F
// units of work in all (the build's sorting and run merging, the insert's
// merge work, the debt of earlier inserts and the idle exertion share one
// budget), plus the updates of one value per merge where it stops; the
// rest is paid on later schedules. With the bound off (fuel 0) the insert
// pays its whole merge work in one schedule.
func TestArrangeScheduleOneBudget(t *testing.T) {
	const n, fuel = 40_000, 4096
	// Halving pairs keep several spine merges in progress at once.
	sizes := []int{n, n, n / 4, n / 4, n / 16, n / 16}
	for _, tc := range []struct{ fuel int }{{fuel}, {0}} {
		t.Run(fmt.Sprintf("fuel=%d", tc.fuel), func(t *testing.T) {
			w := arrangeSnapshots(t, sizes, tc.fuel)
			// A merge stops between values (buildUpdates: at most a few
			// times per value), once per spine merge and once for the build.
			bound := int64(fuel + 16*len(sizes))
			switch {
			case tc.fuel > 0 && w.maxTotal > bound:
				t.Errorf("one schedule did %d units of work (build %d, merge %d at most), want at most %d", w.maxTotal, w.maxBuild, w.maxMerge, bound)
			case tc.fuel > 0 && w.maxMerge < fuel/2:
				t.Errorf("no schedule did more than %d units of merge work: the test never merged on the budget", w.maxMerge)
			case tc.fuel == 0 && w.maxMerge < int64(spine.FuelPerUpdate*n/2):
				t.Errorf("unbounded: the most merge work in one schedule was %d, want the insert's whole payment (>= %d)", w.maxMerge, spine.FuelPerUpdate*n/2)
			}
		})
	}
}

// TestArrangeScheduleWritesARunOnFuel: what a schedule of a hydrating
// arrangement costs is the fresh memory it writes (runtime.md, "The
// longest schedule"), and a build's sorted run is larger than one
// schedule's fuel allows to write: its runs hold minRunUpdates updates
// whatever the fuel, so that a smaller fuel adds no merge levels. With
// fuel F, sealing a snapshot of 60,000 updates, no schedule stages more
// than F/stageUnitsPerUpdate updates into a run or writes more than
// F/writeUnitsPerUpdate (plus one key's) into one, and no schedule does
// more than F units of work plus one key's or value's, and a schedule that
// grows one of the (cold) builder's buffers for the run does nothing else;
// with the bound off one schedule writes every update.
func TestArrangeScheduleWritesARunOnFuel(t *testing.T) {
	const n, fuel = 60_000, 4096
	keyMax := maxKeyUpdates(buildUpdates(n, 0))
	for _, tc := range []struct{ fuel int }{{fuel}, {0}} {
		t.Run(fmt.Sprintf("fuel=%d", tc.fuel), func(t *testing.T) {
			w := arrangeSnapshots(t, []int{n}, tc.fuel)
			if tc.fuel == 0 {
				if w.maxRun != n || w.maxWritten != n {
					t.Errorf("unbounded: largest run %d, most written in one schedule %d, want %d", w.maxRun, w.maxWritten, n)
				}
				return
			}
			if w.maxRun != minRunUpdates {
				t.Errorf("the largest run held %d updates, want %d", w.maxRun, minRunUpdates)
			}
			if limit := fuel/writeUnitsPerUpdate + keyMax; w.maxWritten > limit {
				t.Errorf("one schedule wrote %d updates into a run, fuel %d allows %d", w.maxWritten, fuel, limit)
			}
			if limit := fuel / stageUnitsPerUpdate; w.maxStaged > limit {
				t.Errorf("one schedule staged %d updates, fuel %d allows %d", w.maxStaged, fuel, limit)
			}
			// The cold builder's buffers for a run are about as much fresh
			// memory as writing the run: one per schedule, nothing else.
			if w.maxGrown != 1 || w.grewAndWrote {
				t.Errorf("a schedule grew %d of the builder's buffers (and also staged or wrote: %v), want one buffer alone", w.maxGrown, w.grewAndWrote)
			}
			if limit := int64(fuel + writeUnitsPerUpdate*keyMax + 16); w.maxTotal > limit {
				t.Errorf("one schedule did %d units of work (build %d, merge %d at most), want at most %d", w.maxTotal, w.maxBuild, w.maxMerge, limit)
			}
		})
	}
}

// scheduleWork is the most work one arrangement schedule did: build,
// merge, and both together; and over its builds, the most updates one
// schedule staged into a run and wrote into one, and the largest run.
type scheduleWork struct {
	maxBuild, maxMerge, maxTotal  int64
	maxStaged, maxWritten, maxRun int
	maxGrown                      int
	grewAndWrote                  bool
}

// arrangeSnapshots arranges one snapshot per size, the i-th at time i, on
// one worker with the given build fuel, and returns the most work one
// schedule did, once the arrangement is closed and its merges are done.
func arrangeSnapshots(t *testing.T, sizes []int, fuel int) scheduleWork {
	ws, err := dataflow.New(dataflow.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu sync.Mutex
		w  scheduleWork
	)
	done := make(chan struct{}, 1)
	ws.Install("arrange", func(b *dataflow.Builder) error {
		sent := 0
		src := b.AddOperator("src", nil, 1, dataflow.LogicFunc(func(op *dataflow.Operator) {
			// One snapshot per schedule: [0, 1), then [1, 2), ..., then
			// closed.
			switch {
			case sent < len(sizes):
				ups := buildUpdates(sizes[sent], uint64(sent))
				for i := range ups {
					ups[i].Time = frontier.Time(sent)
				}
				op.Output(0).Send(ups)
				sent++
				op.SetHold(frontier.At(frontier.Time(sent)))
				op.Activate()
			default:
				op.SetHold(frontier.Closed())
			}
		}))
		src.SetHold(frontier.At(0))
		_, lg := arrange(b, "test", src.Stream(0), func(err error) { t.Error(err) })
		lg.fuel = func() int { return fuel }
		fired := false
		lg.onWork = func(build, merge int64) {
			mu.Lock()
			w.maxBuild, w.maxMerge, w.maxTotal = max(w.maxBuild, build), max(w.maxMerge, merge), max(w.maxTotal, build+merge)
			mu.Unlock()
			// Done once every snapshot is arranged and no merge is left
			// (merges go on after the frontier closes, and count).
			if zero := 0; !fired && lg.lower.IsClosed() && !lg.tr.Exert(&zero) {
				fired = true
				done <- struct{}{}
			}
		}
		lg.onBuilt = func(bb *batchBuild) {
			mu.Lock()
			w.maxStaged, w.maxWritten, w.maxRun = max(w.maxStaged, bb.maxStaged), max(w.maxWritten, bb.maxWritten), max(w.maxRun, bb.maxRun)
			w.maxGrown, w.grewAndWrote = max(w.maxGrown, bb.maxGrown), w.grewAndWrote || bb.grewAndWrote
			mu.Unlock()
		}
		return nil
	}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	ws.Start(ctx)
	defer func() { cancel(); ws.Stop() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("arrangement never closed and finished merging")
	}
	mu.Lock()
	defer mu.Unlock()
	return w
}
