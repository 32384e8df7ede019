package render

import (
	"fmt"
	"math"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// DefaultArrangeStepUpdates is the default fuel of an arrangement's batch
// build per worker step ("arrange_step_updates"): a build sorts at most this
// many updates into a run, or merges about this many updates of runs, per
// step.
const DefaultArrangeStepUpdates = 1 << 16

// sortUnitsPerUpdate is what sorting one update into a run costs, in fuel
// units, against one unit per update a merge reads. Measured with
// BenchmarkChurnKeyValue's step profiles (thread CPU time; 64-byte values):
// sorting 65,536 updates into a run took 75-90 ms of one step's CPU, merging
// 65,536 units 8-16 ms, so a step that sorted a whole fuel's worth was the
// longest step of a hydration by 5-8x. Charging 4 units per sorted update
// evens the steps out; the price is two more merge levels (runs of F/4
// instead of F updates), about 2N merge units for N updates.
const sortUnitsPerUpdate = 4

// batchBuild seals the updates of one interval [lower, upper) of an
// arrangement into one batch, a bounded amount of work per call, so that a
// hydration's snapshot (millions of updates at one time) does not hold its
// worker for the whole sort. With fuel F it sorts the updates into runs of
// at most F (batch.Builder), then merges the runs two at a time, oldest
// first (batch.NewRunMerger), each call spending about F units (an update
// sorted into a run, or read by a merge) and stopping between values. The
// result is the batch one Build of every update would give; the extra work
// is about N*log2(4N/F) merge units for N updates. A sorted update costs
// sortUnitsPerUpdate units, so a call sorts at most F/sortUnitsPerUpdate
// updates. Fuel 0 builds everything in one call, as without the bound.
type batchBuild struct {
	desc  batch.Description
	todo  pendingUpdates // updates not yet in a run
	runs  []*batch.Batch // sorted runs, oldest first
	merge *batch.Merger
	// reclaim is told about the runs a merge consumed: a hydration's runs
	// add up to the index several times over, and their arenas stay mapped
	// until a collection finds them unreachable.
	reclaim batch.Reclaimer
	// calls and maxWork count the calls and the most work one call did,
	// maxSorted the most updates one call sorted, for tests.
	calls, maxWork, maxSorted int
}

func newBatchBuild(desc batch.Description, todo pendingUpdates) *batchBuild {
	return &batchBuild{desc: desc, todo: todo}
}

// work spends up to fuel (0: unbounded) on the build with b (a reusable
// builder, left reset) and returns the batch once it is complete, and the
// work it did (in fuel units; it may overrun fuel by one value's updates).
func (bb *batchBuild) work(b *batch.Builder, fuel int) (*batch.Batch, int, error) {
	bb.calls++
	if fuel <= 0 {
		fuel = math.MaxInt // everything left in this call
	}
	left := fuel
	defer func() { bb.maxWork = max(bb.maxWork, fuel-left) }()
	for {
		switch {
		case bb.todo.n == 0 && bb.merge == nil && len(bb.runs) <= 1:
			if len(bb.runs) == 1 {
				return bb.runs[0], fuel - left, nil
			}
			bat, err := b.Build(bb.desc) // no update: an empty batch
			return bat, fuel - left, err
		case left <= 0:
			return nil, fuel - left, nil
		case bb.todo.n > 0:
			// At least one update, so that any fuel makes progress.
			n := min(bb.todo.n, max(1, left/sortUnitsPerUpdate))
			run, err := bb.sortRun(b, n)
			if err != nil {
				return nil, fuel - left, err
			}
			bb.runs = append(bb.runs, run)
			bb.maxSorted = max(bb.maxSorted, n)
			left -= n * sortUnitsPerUpdate
		case bb.merge != nil:
			if bb.merge.Work(&left) {
				bb.runs = append(bb.runs, bb.merge.Result())
				bb.reclaim.Dropped(bb.merge.Inputs())
				bb.merge = nil
			}
		default:
			m, err := batch.NewRunMerger(bb.runs[0], bb.runs[1])
			if err != nil {
				return nil, fuel - left, fmt.Errorf("merge runs: %w", err)
			}
			bb.runs[0], bb.runs[1] = nil, nil
			bb.runs = bb.runs[2:]
			bb.merge = m
		}
	}
}

// sortRun builds one sorted, consolidated run of the n oldest updates to
// do, dropping them (so the input slices go as they are sorted).
func (bb *batchBuild) sortRun(b *batch.Builder, n int) (*batch.Batch, error) {
	bb.todo.take(n, func(u dataflow.Update) { b.Push(u.Key, u.Val, u.Time, u.Diff) })
	run, err := b.Build(bb.desc)
	b.Reset()
	return run, err
}
