package render

import (
	"fmt"
	"math"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// DefaultArrangeStepUpdates is the default fuel of an arrangement's
// schedule ("arrange_step_updates"), in units of about one update merged
// (below). 16,384 units: the longest schedules of a hydration were those
// that wrote the most fresh memory (see sortUnitsPerUpdate), and at 65,536
// units one schedule wrote several MiB of it.
const DefaultArrangeStepUpdates = 1 << 14

// Fuel units of a build's sorted runs, against one unit per update a merge
// reads (plus one per value and key it writes). Measured with
// BenchmarkChurnKeyValue's per-stage thread CPU times (64-byte values, on
// a loaded 2-core VM where a page fault costs ~25 us): of a run of 16,384
// updates, pushing into a warm builder took 0.4 ms, the sort 0.2-0.7 ms
// and writing the batch 10-17 ms, nearly all of it page faults on the
// batch's fresh memory (~343 faults); pushing into a cold builder (its
// first run: its buffers grow) took 36-48 ms (1,318 faults). What a
// schedule costs is the fresh memory it writes, so a run is staged and
// written on fuel, a few thousand updates a schedule, like a merge's
// output (which also writes one update's bytes per update read): staging
// an update (copying it into the builder, whose buffers may be growing)
// costs stageUnitsPerUpdate, writing it writeUnitsPerUpdate.
const (
	stageUnitsPerUpdate = 2
	writeUnitsPerUpdate = 2
	sortUnitsPerUpdate  = stageUnitsPerUpdate + writeUnitsPerUpdate
)

// minRunUpdates is the least size of a build's sorted runs under a bound:
// a run is staged and written over several schedules, so its size no
// longer follows the fuel, and a smaller fuel adds no merge levels (each a
// write of every update). Fuel above minRunUpdates*sortUnitsPerUpdate
// gives runs of fuel/sortUnitsPerUpdate updates, as one schedule can then
// stage and write a whole run.
const minRunUpdates = 1 << 14

// reserveSample is how many pending updates estimate a run's bytes.
const reserveSample = 64

// runUpdates is the size of a build's sorted runs with the fuel of one
// schedule (0: unbounded, one run of everything).
func runUpdates(fuel int) int {
	if fuel <= 0 {
		return math.MaxInt
	}
	return max(minRunUpdates, fuel/sortUnitsPerUpdate)
}

// batchBuild seals the updates of one interval [lower, upper) of an
// arrangement into one batch, a bounded amount of work per call, so that a
// hydration's snapshot (millions of updates at one time) does not hold its
// worker for the whole sort. It stages the updates into sorted runs of
// runUpdates(F) (batch.Builder: StartBuild, then BuildStep), then merges
// all the runs at once (batch.NewRunsMerger), each call spending about F
// units and stopping between keys or values: an update staged costs
// stageUnitsPerUpdate, an update written into its run writeUnitsPerUpdate,
// an update read by the merge one (plus one per value and key). A run's sort
// happens in the call that finished staging it (a small share of the run's
// CPU; it is not charged). The result is the batch one Build of every update
// would give; the extra work is one copy of each update (merging runs two
// at a time made it log2(N/R) copies for N updates in runs of R, which was
// most of what the bound cost a hydration). Fuel 0 builds everything in one
// call, as without the bound.
type batchBuild struct {
	desc batch.Description
	todo pendingUpdates // updates not yet staged into a run
	// staged counts the updates staged into the builder for the run in
	// progress; the builder is building (StartBuild) once it is complete.
	staged int
	runs   []*batch.Batch // sorted runs, oldest first
	merge  *batch.RunsMerger
	// reclaim is told about the runs a merge consumed: a hydration's runs
	// add up to the index several times over, and their arenas stay mapped
	// until a collection finds them unreachable.
	reclaim batch.Reclaimer
	// calls and maxWork count the calls and the most work one call did,
	// maxStaged and maxWritten the most updates one call staged into a
	// run and wrote into one, maxRun the largest run, maxGrown the most
	// builder buffers one call grew, grewAndWrote whether a call both
	// grew one and staged or wrote, and merges the merges started, for
	// tests.
	calls, maxWork, maxStaged, maxWritten, maxRun, maxGrown, merges int
	grewAndWrote                                                    bool
}

// reserve makes room in b for a run of r updates, sized from the pending
// updates, and returns how many of its buffers it grew. Bounded, it grows
// at most one per call (the updates', then the bytes'): a cold builder's
// buffers for a run of 16,384 updates of 64-byte values are ~2 MiB that
// the Go runtime may clear at once, about as much fresh memory as writing
// a whole run. Unbounded, it grows both.
func (bb *batchBuild) reserve(b *batch.Builder, r int, bounded bool) int {
	grown := 0
	if b.ReserveUpdates(r) {
		grown++
		if bounded {
			return grown
		}
	}
	if b.ReserveBytes(r * bb.todo.bytesPerUpdate(reserveSample)) {
		grown++
	}
	return grown
}

func newBatchBuild(desc batch.Description, todo pendingUpdates) *batchBuild {
	return &batchBuild{desc: desc, todo: todo}
}

// work spends up to fuel (0: unbounded) on the build with b (a reusable
// builder that only this build uses until it completes, left reset) and
// returns the batch once it is complete, and the work it did (in fuel
// units; it may overrun fuel by one key's or value's updates).
func (bb *batchBuild) work(b *batch.Builder, fuel int) (*batch.Batch, int, error) {
	bb.calls++
	runCap := runUpdates(fuel)
	bounded := fuel > 0
	if fuel <= 0 {
		fuel = math.MaxInt // everything left in this call
	}
	left := fuel
	staged, written, grown := 0, 0, 0
	defer func() {
		bb.maxWork = max(bb.maxWork, fuel-left)
		bb.maxStaged, bb.maxWritten = max(bb.maxStaged, staged), max(bb.maxWritten, written)
		bb.maxGrown = max(bb.maxGrown, grown)
		if grown > 0 && staged+written > 0 {
			bb.grewAndWrote = true
		}
	}()
	for {
		switch {
		case bb.todo.n == 0 && bb.staged == 0 && bb.merge == nil && len(bb.runs) <= 1:
			if len(bb.runs) == 1 {
				return bb.runs[0], fuel - left, nil
			}
			bat, err := b.Build(bb.desc) // no update: an empty batch
			return bat, fuel - left, err
		case left <= 0:
			return nil, fuel - left, nil
		case b.Building():
			n := max(1, left/writeUnitsPerUpdate)
			limit := n
			run, err := b.BuildStep(&limit)
			if err != nil {
				return nil, fuel - left, err
			}
			written += n - limit
			left -= (n - limit) * writeUnitsPerUpdate
			if run != nil {
				bb.runs = append(bb.runs, run)
				bb.maxRun = max(bb.maxRun, bb.staged)
				bb.staged = 0
			}
		case bb.todo.n > 0 && bb.staged < runCap:
			if bb.staged == 0 {
				if g := bb.reserve(b, min(bb.todo.n, runCap), bounded); g > 0 && bounded {
					// A buffer grew: that allocation (cleared at once,
					// on fresh memory) is this call's work.
					grown += g
					left = 0
					continue
				}
			}
			// At least one update, so that any fuel makes progress.
			n := min(bb.todo.n, runCap-bb.staged, max(1, left/stageUnitsPerUpdate))
			bb.todo.take(n, func(u dataflow.Update) { b.Push(u.Key, u.Val, u.Time, u.Diff) })
			bb.staged += n
			staged += n
			left -= n * stageUnitsPerUpdate
		case bb.staged > 0:
			// The run is complete (or the last): sort it.
			if err := b.StartBuild(bb.desc); err != nil {
				return nil, fuel - left, err
			}
		case bb.merge != nil:
			if bb.merge.Work(&left) {
				bb.runs = append(bb.runs, bb.merge.Result())
				bb.reclaim.Dropped(bb.merge.Inputs()...)
				bb.merge = nil
			}
		default:
			// Every run is staged: merge them all at once.
			m, err := batch.NewRunsMerger(bb.runs)
			if err != nil {
				return nil, fuel - left, fmt.Errorf("merge runs: %w", err)
			}
			bb.runs = nil
			bb.merge = m
			bb.merges++
		}
	}
}
