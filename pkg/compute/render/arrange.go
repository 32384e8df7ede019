package render

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// exertFuel is the merge work an arrangement does per schedule when it has
// no new data, so that merges finish on an otherwise idle worker, with the
// step bound off (arrange_step_updates 0); with it on, the schedule's one
// budget bounds the exertion too.
const exertFuel = 1 << 16

// Arranged is one worker's shard of an arrangement: its trace and a
// frontier-only stream whose frontier is the trace's upper as this dataflow
// sees it. Consumers read batches from the trace through their own handles.
type Arranged struct {
	Trace  *trace.Trace
	Stream dataflow.Stream
	// listeners are activated (on the worker goroutine) when upper advances.
	listeners *[]func()
}

// OnAdvance registers f to run on the worker goroutine whenever the trace's
// upper advances; it returns a function that unregisters it.
func (a *Arranged) OnAdvance(f func()) (remove func()) {
	*a.listeners = append(*a.listeners, f)
	idx := len(*a.listeners) - 1
	return func() {
		if idx < len(*a.listeners) {
			(*a.listeners)[idx] = nil
		}
	}
}

func keyHash(u dataflow.Update) uint64 { return row.Hash(u.Key) }

// arrangeLogic buffers keyed updates and, each time its input frontier
// advances from f0 to f1, seals the updates in [f0, f1) into one batch of the
// trace, making the trace's upper f1. The seal runs on fuel (batchBuild):
// a big one takes several steps, during which the operator holds its output
// frontier at the trace's upper and reschedules itself.
type arrangeLogic struct {
	name      string
	tr        *trace.Trace
	pending   pendingUpdates
	lower     frontier.Frontier
	builder   batch.Builder
	listeners []func()
	fail      func(error)
	// consolidateAt is the pending length that triggers consolidation.
	consolidateAt int
	// fuel returns the build's work per step (0: unbounded); nil is
	// DefaultArrangeStepUpdates.
	fuel func() int
	// build is the seal in progress, nil between seals.
	build *batchBuild
	// failed is set once the trace could not take a batch: the output
	// frontier stays held for good.
	failed bool
	// onBuilt, if set, sees every finished build (tests).
	onBuilt func(*batchBuild)
	// onWork, if set, sees the work of every schedule: the build's and
	// the spine's merges' (tests).
	onWork func(build, merge int64)
	// buildWork is the build work of the current schedule.
	buildWork int64
}

// minConsolidate is the least pending length worth consolidating.
const minConsolidate = 1 << 12

// repeatSample is how many of the newest pending updates repeats looks at.
const repeatSample = 1 << 10

// repeats reports whether the newest pending updates hold equal
// (key, val, time) triples often enough (one in eight) for consolidation
// to pay for its sort. Hash collisions only make it say yes more often.
func repeats(ups []dataflow.Update) bool {
	n := min(len(ups), repeatSample)
	seen := make(map[uint64]struct{}, n)
	for _, u := range ups[len(ups)-n:] {
		h := row.Hash(u.Key)*31 + row.Hash(u.Val)
		seen[h*31+uint64(u.Time)] = struct{}{}
	}
	return len(seen) <= n-n/8
}

// consolidateUpdates sorts ups by (key, val, time) and sums the diffs of
// equal triples, dropping zero sums; it reuses ups' backing array.
func consolidateUpdates(ups []dataflow.Update) []dataflow.Update {
	slices.SortFunc(ups, func(a, b dataflow.Update) int {
		if c := bytes.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		if c := bytes.Compare(a.Val, b.Val); c != 0 {
			return c
		}
		return cmp.Compare(a.Time, b.Time)
	})
	out := ups[:0]
	for i := 0; i < len(ups); {
		u := ups[i]
		j := i + 1
		for ; j < len(ups) && ups[j].Time == u.Time && bytes.Equal(ups[j].Key, u.Key) && bytes.Equal(ups[j].Val, u.Val); j++ {
			u.Diff += ups[j].Diff
		}
		if u.Diff != 0 {
			out = append(out, u)
		}
		i = j
	}
	clear(ups[len(out):])
	return out
}

// Arrange exchanges a keyed update stream (Key set) by key hash and arranges
// it on each worker, sealing batches with DefaultArrangeStepUpdates of fuel
// per step.
func Arrange(b *dataflow.Builder, name string, keyed dataflow.Stream, fail func(error)) *Arranged {
	return ArrangeFueled(b, name, keyed, fail, nil)
}

// ArrangeFueled is Arrange with the build fuel per step read from fuel at
// every step (nil: DefaultArrangeStepUpdates; 0 turns the bound off).
func ArrangeFueled(b *dataflow.Builder, name string, keyed dataflow.Stream, fail func(error), fuel func() int) *Arranged {
	a, lg := arrange(b, name, keyed, fail)
	lg.fuel = fuel
	return a
}

func arrange(b *dataflow.Builder, name string, keyed dataflow.Stream, fail func(error)) (*Arranged, *arrangeLogic) {
	lg := &arrangeLogic{name: name, tr: trace.New(frontier.Minimum()), lower: frontier.Minimum(), fail: fail, consolidateAt: minConsolidate}
	op := b.AddOperator("Arrange "+name, []dataflow.Connection{{From: keyed, Exchange: keyHash}}, 1, lg)
	return &Arranged{Trace: lg.tr, Stream: op.Stream(0), listeners: &lg.listeners}, lg
}

// Schedule takes the input, seals what the input frontier has passed and
// keeps the spine merged, all on one budget: the step fuel
// (arrange_step_updates) bounds the build's sorting and merging, the
// merge work the new batch's insert pays, the debt earlier inserts still
// owe and the idle exertion together, so that one schedule's work is at
// most one step's fuel (plus the updates of one value where a merge
// stops). What does not fit is done on the next schedules. Fuel 0 turns
// the bound off: the build and its insert's merge work complete in one
// schedule, and idle merging gets exertFuel.
func (lg *arrangeLogic) Schedule(op *dataflow.Operator) {
	if lg.onWork != nil {
		before := lg.tr.MergeWork()
		lg.buildWork = 0
		defer func() { lg.onWork(lg.buildWork, lg.tr.MergeWork()-before) }()
	}
	in := op.Input(0)
	for _, d := range in.Take() {
		lg.pending.add(d.([]dataflow.Update))
	}
	if lg.failed {
		lg.pending = pendingUpdates{}
		return
	}
	if lg.pending.n >= lg.consolidateAt {
		// Updates wait here until the frontier passes their time; a
		// one-shot read's input all sits at its as_of until its last
		// slice arrives. Summing equal (key, val, time) triples keeps that
		// wait proportional to the distinct updates (one for count(*)),
		// and doubling the threshold keeps the cost amortised linear.
		// Distinct updates (an index hydrating, a large tick) would not
		// shrink, so a sample decides first and they cost no sort.
		if repeats(lg.pending.newest(repeatSample)) {
			lg.pending = pendingOf(consolidateUpdates(lg.pending.flatten()))
		}
		lg.consolidateAt = max(2*lg.pending.n, minConsolidate)
	}
	f1 := in.Frontier()
	if lg.build == nil && lg.lower.Less(f1) {
		lg.startBuild(f1)
	}
	var budget *int // nil: unbounded
	if fuel := lg.stepFuel(); fuel > 0 {
		budget = &fuel
	}
	built := lg.build == nil || lg.stepBuild(op, budget)
	// The stream's frontier is the trace's upper: consumers never see a
	// frontier whose batch is still being built.
	op.SetHold(lg.lower)
	if lg.failed || op.Dropping() {
		return
	}
	// The build goes on (or the next one starts) next step.
	more := !built || lg.lower.Less(f1)
	if built && lg.merge(budget) {
		more = true
	}
	if more {
		op.Activate()
	}
}

// merge spends what is left of the schedule's budget (nil: unbounded) on
// the merge work bounded inserts still owe, then on idle merging, and
// reports whether merge work remains.
func (lg *arrangeLogic) merge(budget *int) bool {
	owed := lg.tr.PayDebt(budget)
	if budget == nil {
		fuel := exertFuel
		return lg.tr.Exert(&fuel) || owed
	}
	return lg.tr.Exert(budget) || owed
}

// stepFuel returns the fuel of one schedule (0: unbounded).
func (lg *arrangeLogic) stepFuel() int {
	if lg.fuel != nil {
		return lg.fuel()
	}
	return DefaultArrangeStepUpdates
}

// startBuild takes the pending updates before f1 into a new build of
// [lower, f1).
func (lg *arrangeLogic) startBuild(f1 frontier.Frontier) {
	ups := lg.pending.splitBefore(f1)
	lg.consolidateAt = max(2*lg.pending.n, minConsolidate)
	lg.build = newBatchBuild(batch.Description{Lower: lg.lower, Upper: f1, Since: frontier.Minimum()}, ups)
}

// stepBuild spends the schedule's budget (nil: unbounded) on the build,
// subtracting what it did; when the build completes, the batch goes into
// the trace (its merge work paid from what is left of the budget, the rest
// owed), lower advances and the listeners run, and it returns true.
func (lg *arrangeLogic) stepBuild(op *dataflow.Operator, budget *int) bool {
	if op.Dropping() {
		return false // nothing built now would be read
	}
	fuel := 0
	if budget != nil {
		if *budget <= 0 {
			return false
		}
		fuel = *budget
	}
	bat, spent, err := lg.build.work(&lg.builder, fuel)
	lg.buildWork += int64(spent)
	if budget != nil {
		*budget -= spent
	}
	if err == nil && bat == nil {
		return false
	}
	if err == nil {
		// The merges the new batch starts or joins get what is left of
		// the budget now; the rest is paid on the next schedules.
		err = lg.tr.InsertBounded(bat, budget)
	}
	if err != nil {
		// Only a bug or an oversized batch gets here; the arrangement
		// can no longer be trusted, so its dataflow must not report
		// progress past it.
		lg.fail(fmt.Errorf("arrange %s: %w", lg.name, err))
		lg.failed, lg.build, lg.pending = true, nil, pendingUpdates{}
		lg.builder.Reset()
		return false
	}
	if lg.onBuilt != nil {
		lg.onBuilt(lg.build)
	}
	lg.lower = bat.Upper()
	lg.build = nil
	for _, f := range lg.listeners {
		if f != nil {
			f()
		}
	}
	return true
}
