package render

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// Collection is a rendered collection on one worker: an ok stream of rows
// and an error stream of error rows (both []dataflow.Update, Key nil).
type Collection struct {
	Ok, Err dataflow.Stream
}

// emitter collects a step's output updates for the ok and error outputs.
type emitter struct {
	ok, err []dataflow.Update
	// rows holds the copies of emitted rows: a few shared chunks per
	// step instead of one object per row (a join's million output rows
	// were a million allocations).
	rows rowArena
	// lastOk is the length of the last flushed output: the next output
	// starts at that capacity instead of growing by append's doublings.
	lastOk int
	// stop, when set, is polled every stopCheckInterval emitted updates;
	// once it reports true the step is abandoned (see stepAbandoned).
	stop    func() bool
	emitted int
	// limit and progress, set by a bounded operator (StatefulFueled), ask
	// a step that can stop between keys to emit about limit updates and
	// record where it stopped (limit 0: the whole step); the step sets
	// more when it stopped before the end. A step that ignores them runs
	// whole, as before.
	limit    int
	progress *operators.Progress
	more     bool
	// pos is where a bounded step that is not a walk over keys stopped
	// (the incremental fixpoint: the next time of its fresh updates); nil
	// outside a bounded operator.
	pos *int
}

// stopCheckInterval is how many updates a step emits between polls of
// emitter.stop: an atomic load per thousand rows costs nothing, and a
// dropped dataflow stops within microseconds of work.
const stopCheckInterval = 1024

// stepAbandoned is what emit panics with to unwind out of a step whose
// dataflow is being dropped: the join and reduction loops of package
// operators cannot be told to stop, and a cross join's single step can run
// for minutes and buffer gigabytes of output that nobody will read.
// stepLogic.runStep recovers it and nothing else.
type stepAbandoned struct{}

func (e *emitter) emit(r []byte, t frontier.Time, d int64) {
	e.poll()
	if e.ok == nil {
		e.ok = make([]dataflow.Update, 0, max(e.lastOk, 16))
	}
	e.ok = append(e.ok, dataflow.Update{Val: e.rows.copy(r), Time: t, Diff: d})
}

func (e *emitter) emitErr(err error, t frontier.Time, d int64) {
	e.poll()
	e.err = append(e.err, dataflow.Update{Val: ErrorRow(err), Time: t, Diff: d})
}

func (e *emitter) poll() {
	e.emitted++
	if e.emitted%stopCheckInterval == 0 && e.stop != nil && e.stop() {
		panic(stepAbandoned{})
	}
}

func (e *emitter) flush(op *dataflow.Operator) {
	if len(e.ok) > 0 {
		e.lastOk = len(e.ok)
	}
	op.Output(0).SendUpdates(e.ok)
	op.Output(1).SendUpdates(e.err)
	e.ok, e.err = nil, nil
}

// StepFunc computes the output change over [f0, f1) from each input
// arrangement's batches split at f0 (see package operators).
type StepFunc func(old, fresh [][]*batch.Batch, e *emitter)

// stepLogic drives a stateful operator over arrangements: when the meet of
// its inputs' uppers advances from f0 to f1 it reads each trace through its
// own handle (holding f0, so the cut survives merging), runs the step, and
// advances its handles to f1.
type stepLogic struct {
	name    string
	handles []*trace.Handle
	cuts    []inputCut
	f0      frontier.Frontier
	step    StepFunc
	fail    func(error)
	out     emitter
	broken  bool
	// fuel returns the most updates one schedule emits (0: unbounded);
	// nil: unbounded (Stateful).
	fuel func() int
	// run is the step in progress when a bounded step stopped before its
	// end: it goes on at the next schedule with the same batches.
	run *stepRun
	// onSchedule, if set, sees what every schedule emitted (tests).
	onSchedule func(emitted int)
}

// stepRun is a step over [f0, f1) that yielded the worker part way: its
// input batches (immutable; the handles hold f0, so nothing is compacted
// past them) and where it stopped.
type stepRun struct {
	old, fresh [][]*batch.Batch
	f1         frontier.Frontier
	progress   operators.Progress
	pos        int // emitter.pos
}

// Stateful renders an operator over arrangements with two outputs, ok and
// err, each step run whole in one schedule.
func Stateful(b *dataflow.Builder, name string, inputs []*Arranged, step StepFunc, fail func(error)) Collection {
	return StatefulFueled(b, name, inputs, step, fail, func() int { return 0 })
}

// StatefulFueled is Stateful with a step's output emitted in slices of
// about fuel() updates per schedule (nil: DefaultArrangeStepUpdates; 0:
// the whole step, as Stateful), for steps that can stop between keys
// (JoinStep, GroupStep): the operator yields, not abandons: it reschedules
// itself and holds its output frontier at the step's start until the step
// is done, so consumers never see [f0, f1) complete before all of it was
// emitted, and other dataflows on the worker run in between.
func StatefulFueled(b *dataflow.Builder, name string, inputs []*Arranged, step StepFunc, fail func(error), fuel func() int) Collection {
	c, _ := stateful(b, name, inputs, step, fail, fuel)
	return c
}

func stateful(b *dataflow.Builder, name string, inputs []*Arranged, step StepFunc, fail func(error), fuel func() int) (Collection, *stepLogic) {
	lg := &stepLogic{name: name, f0: frontier.Minimum(), step: step, fail: fail, fuel: fuel}
	conns := make([]dataflow.Connection, len(inputs))
	for i, a := range inputs {
		conns[i] = dataflow.Connection{From: a.Stream}
		lg.handles = append(lg.handles, a.Trace.NewHandle(name))
	}
	lg.cuts = make([]inputCut, len(inputs))
	op := b.AddOperator(name, conns, 2, lg)
	return Collection{Ok: op.Stream(0), Err: op.Stream(1)}, lg
}

func (lg *stepLogic) Schedule(op *dataflow.Operator) {
	if lg.broken {
		return
	}
	if lg.run == nil && !lg.startRun(op) {
		return
	}
	r := lg.run
	lg.out.limit, lg.out.progress, lg.out.pos, lg.out.more = lg.stepLimit(), &r.progress, &r.pos, false
	completed := lg.runStep(op, r.old, r.fresh)
	more := lg.out.more
	lg.out.progress, lg.out.pos, lg.out.more = nil, nil, false
	if !completed {
		// The dataflow is being dropped: hold the output where it was (no
		// consumer may think [f0, f1) complete) and leave the handles to
		// Drop, which the worker runs right after this step.
		lg.out = emitter{}
		lg.broken, lg.run = true, nil
		op.SetHold(lg.f0)
		return
	}
	if lg.onSchedule != nil {
		lg.onSchedule(len(lg.out.ok) + len(lg.out.err))
	}
	lg.out.flush(op)
	if more {
		// Yield: the rest of [f0, f1) comes at the next schedule.
		op.SetHold(lg.f0)
		op.Activate()
		return
	}
	lg.run = nil
	lg.f0 = r.f1
	// The output is complete through f1 and no further: the inputs may
	// have moved past f1 while the step ran in slices, and their frontier
	// must not reach the output before the next step emits up to it.
	op.SetHold(lg.f0)
	for _, h := range lg.handles {
		if r.f1.IsClosed() {
			h.Release()
			continue
		}
		// Advancing can only fail on a released handle, which Drop alone does.
		_ = h.SetLogical(r.f1)
		_ = h.SetPhysical(r.f1)
	}
	if lg.f0.Less(op.InputFrontier()) {
		op.Activate() // the inputs moved on while the step was in slices
	}
}

// startRun cuts the inputs for a step over [f0, f1), f1 the input
// frontier, and reports whether there is one to run.
func (lg *stepLogic) startRun(op *dataflow.Operator) bool {
	f1 := op.InputFrontier()
	if !lg.f0.Less(f1) {
		return false
	}
	old := make([][]*batch.Batch, len(lg.handles))
	fresh := make([][]*batch.Batch, len(lg.handles))
	var err error
	for i, h := range lg.handles {
		// The whole chain: a trace may be ahead of f1 (its batches are cut
		// where needed). The handle only holds compaction back; it is not
		// asked for a cut, because an imported trace may already be
		// compacted beyond its upper (AllowCompaction may run ahead of the
		// data), which makes every cut "compacted" while the batches
		// themselves are still exact for reads at or beyond the since.
		old[i], fresh[i], err = lg.cuts[i].cut(h.Trace().Snapshot().Batches, lg.f0, f1)
		if err != nil {
			lg.broken = true
			op.SetHold(lg.f0)
			lg.fail(fmt.Errorf("%s: read input %d over [%v, %v): %w", lg.name, i, lg.f0, f1, err))
			return false
		}
	}
	lg.run = &stepRun{old: old, fresh: fresh, f1: f1}
	return true
}

// stepLimit returns the most updates one schedule emits (0: unbounded).
func (lg *stepLogic) stepLimit() int {
	if lg.fuel == nil {
		return DefaultArrangeStepUpdates
	}
	return lg.fuel()
}

// runStep runs the step into lg.out and reports whether it completed; false
// when the dataflow started dropping before or during the step.
func (lg *stepLogic) runStep(op *dataflow.Operator, old, fresh [][]*batch.Batch) (completed bool) {
	if op.Dropping() {
		return false
	}
	lg.out.stop = op.Dropping
	defer func() {
		lg.out.stop = nil
		if r := recover(); r != nil {
			if _, ok := r.(stepAbandoned); !ok {
				panic(r)
			}
			completed = false
		}
	}()
	lg.step(old, fresh, &lg.out)
	return true
}

// Drop releases the operator's trace handles.
func (lg *stepLogic) Drop() {
	for _, h := range lg.handles {
		h.Release()
	}
}

// JoinStep is the step of an inner equi-join of two arrangements keyed by
// the join key (values whole rows); output rows are left ++ right. Under
// StatefulFueled it emits its output in slices.
func JoinStep(old, fresh [][]*batch.Batch, e *emitter) {
	in := operators.JoinInput{LeftOld: old[0], LeftFresh: fresh[0], RightOld: old[1], RightFresh: fresh[1]}
	e.more = !operators.JoinBounded(in, e.emit, e.limit, e.resume())
}

// GroupStep returns the step of a reduction (reduce, distinct, threshold,
// top-k, window) with the given group logic over one arrangement. Under
// StatefulFueled it emits its output in slices and splits the work of one
// group across schedules too (operators.ReduceGroupsResumable), evaluating
// a group with eval (nil: the logic, whole); with the fuel off (0) every
// step runs whole (operators.ReduceGroups).
func GroupStep(logic operators.GroupLogic, eval operators.GroupEval) StepFunc {
	if eval == nil {
		eval = operators.WholeGroup(logic)
	}
	return func(old, fresh [][]*batch.Batch, e *emitter) {
		if e.limit > 0 {
			e.more = !operators.ReduceGroupsResumable(old[0], fresh[0], eval, e.emit, e.emitErr, e.limit, e.resume())
			return
		}
		e.more = !operators.ReduceGroupsBounded(old[0], fresh[0], logic, e.emit, e.emitErr, 0, e.resume())
	}
}

// resume returns where a bounded step goes on (a fresh start when the
// operator does not run steps in slices).
func (e *emitter) resume() *operators.Progress {
	if e.progress == nil {
		return &operators.Progress{}
	}
	return e.progress
}
