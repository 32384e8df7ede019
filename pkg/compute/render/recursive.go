package render

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// recursive renders a Recursive node as a fixpoint operator. Its inputs
// are the node's Base (input 0) and the maximal subtrees of its Step that
// do not read the binding (inputs 1..n), each rendered as an ordinary
// dataflow. Their rows are tagged with the input's number and arranged
// under one empty key, so that the whole fixpoint is one group on one
// worker. An incremental node (plan.Recursive.Incremental) keeps its
// fixed point and applies each time's changes to it (IncrementalFixpointStep);
// otherwise the group logic (FixpointLogic) re-derives the fixed point from
// the inputs' current contents whenever one of them changes, and the group
// stepper emits the difference from the previous output, retractions
// included.
func (r *planRenderer) recursive(rec *plan.Recursive) (rendered, error) {
	fp, err := CompileRecursive(rec)
	if err != nil {
		return rendered{}, err
	}
	name := r.name("recursive")
	var errs []dataflow.Stream
	tagged := make([]dataflow.Stream, len(fp.Inputs))
	for i, in := range fp.Inputs {
		c, err := r.render(in)
		if err != nil {
			return rendered{}, err
		}
		errs = append(errs, c.errs...)
		tagged[i] = tagInput(r.b, fmt.Sprintf("%s-input%d", name, i), c.ok, i)
	}
	arr := ArrangeFueled(r.b, name, Concat(r.b, name+"-inputs", tagged), r.fail, r.arrangeFuel)
	// The fixpoint is one group (one key): an incremental step yields
	// between times (IncrementalFixpointStep), a re-derivation between its
	// rounds (FixpointEval) (docs/design/runtime.md, Bounded steps).
	if rec.Incremental() {
		out := r.stateful(name, []*Arranged{arr}, IncrementalFixpointStep(fp))
		return rendered{ok: out.Ok, errs: append(errs, out.Err)}, nil
	}
	step := RederiveStep(fp)
	out := r.stateful(name, []*Arranged{arr}, step)
	return rendered{ok: out.Ok, errs: append(errs, out.Err)}, nil
}

// RederiveStep returns the step of a fixpoint operator that re-derives the
// fixed point from its inputs' contents when one of them changes. Under
// StatefulFueled the re-derivation yields between its rounds
// (FixpointEval), resuming at the next schedule; with the fuel off it runs
// whole (FixpointLogic).
func RederiveStep(fp *Fixpoint) StepFunc {
	logic, eval := FixpointLogic(fp), FixpointEval(fp)
	return func(old, fresh [][]*batch.Batch, e *emitter) {
		// A re-derivation can take many rounds: poll the dataflow's drop
		// between rounds, as the emitter does between output rows.
		fp.Stop = func() bool { return e.stop != nil && e.stop() }
		defer func() { fp.Stop = nil }()
		if e.limit > 0 {
			e.more = !operators.ReduceGroupsResumable(old[0], fresh[0], eval, e.emit, e.emitErr, e.limit, e.resume())
			return
		}
		operators.ReduceGroups(old[0], fresh[0], logic, e.emit, e.emitErr)
	}
}

// FixpointTag is the prefix of input i's rows in the fixpoint operator's
// input: the row (i), so that a tagged row is a row (i, columns...).
func FixpointTag(i int) []byte { return row.Pack(row.Int64(int64(i))) }

// tagInput keys every row under the empty key (the one key of the
// fixpoint's arrangement) with the value FixpointTag(input) ++ row.
func tagInput(b *dataflow.Builder, name string, in dataflow.Stream, input int) dataflow.Stream {
	tag, key := FixpointTag(input), row.Pack()
	return b.AddOperator("Tag "+name, []dataflow.Connection{{From: in}}, 1, dataflow.LogicFunc(func(op *dataflow.Operator) {
		for _, d := range op.Input(0).Take() {
			in := d.([]dataflow.Update)
			out := make([]dataflow.Update, len(in))
			for i, u := range in {
				val := append(append(make([]byte, 0, len(tag)+len(u.Val)), tag...), u.Val...)
				out[i] = dataflow.Update{Key: key, Val: val, Time: u.Time, Diff: u.Diff}
			}
			op.Output(0).Send(out)
		}
	})).Stream(0)
}

// FixpointLogic returns the group logic of a compiled Recursive node: its
// input is every tagged input row (see recursive); its output the fixed
// point, or the node's error. The last input and its result are kept, so
// that the group stepper's recomputation of the previous state costs a
// comparison rather than a second fixpoint.
func FixpointLogic(fp *Fixpoint) operators.GroupLogic {
	var (
		lastIn  []operators.ValDiff
		lastOut []operators.ValDiff
		lastErr error
		valid   bool
	)
	return func(_ []byte, input []operators.ValDiff) ([]operators.ValDiff, error) {
		if valid && sameValDiffs(lastIn, input) {
			return lastOut, lastErr
		}
		inputs, err := fp.split(input)
		var out []operators.ValDiff
		if err == nil {
			out, err = fp.Run(inputs)
		}
		lastIn = append(lastIn[:0], input...)
		lastOut, lastErr, valid = out, err, true
		return out, err
	}
}

// FixpointEval is FixpointLogic evaluated in steps: a Step runs rounds of
// the re-derivation until their work (rows into and out of each round)
// reaches its budget (the first Step also counts the input, split and
// consolidated in Start), so a deep recursion yields the worker between
// rounds; a single round is not split. Like FixpointLogic
// it keeps the last input and result, so re-evaluating the previous state
// costs a comparison.
func FixpointEval(fp *Fixpoint) operators.GroupEval { return &fixpointEval{fp: fp} }

type fixpointEval struct {
	fp      *Fixpoint
	input   []operators.ValDiff
	run     *fixRun
	charged bool // the first Step counted the input (split and base)
	lastIn  []operators.ValDiff
	lastOut []operators.ValDiff
	lastErr error
	valid   bool
}

func (f *fixpointEval) Start(_ []byte, input []operators.ValDiff) {
	f.input, f.run, f.charged = input, nil, false
	if f.valid && sameValDiffs(f.lastIn, input) {
		return
	}
	inputs, err := f.fp.split(input)
	if err != nil {
		f.run = &fixRun{}
		f.run.finish(nil, err)
		return
	}
	f.run = f.fp.start(inputs)
}

func (f *fixpointEval) Step(budget int) (int, bool) {
	if f.run == nil {
		return len(f.input), true // the cached result
	}
	work := 0
	if !f.charged {
		work, f.charged = len(f.input), true
	}
	for !f.run.done && (budget <= 0 || work < budget) {
		work += f.run.round()
	}
	if !f.run.done {
		return work, false
	}
	f.lastIn = append(f.lastIn[:0], f.input...)
	f.lastOut, f.lastErr, f.valid = f.run.out, f.run.err, true
	f.run = nil
	return work, true
}

func (f *fixpointEval) Result() ([]operators.ValDiff, error) { return f.lastOut, f.lastErr }

func sameValDiffs(a, b []operators.ValDiff) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Diff != b[i].Diff || !bytes.Equal(a[i].Val, b[i].Val) {
			return false
		}
	}
	return true
}

// split separates the tagged input rows by input.
func (fp *Fixpoint) split(input []operators.ValDiff) ([][]operators.ValDiff, error) {
	out := make([][]operators.ValDiff, len(fp.Inputs))
	for _, v := range input {
		d, err := row.Row(v.Val).Column(0)
		if err != nil || d.Type() != row.TypeInt64 || d.Int64() < 0 || d.Int64() >= int64(len(out)) {
			return nil, operators.Error{Code: operators.CodeInternal, Message: "recursive: malformed input tag"}
		}
		i := d.Int64()
		tag := fp.tags[i]
		if !bytes.HasPrefix(v.Val, tag) {
			return nil, operators.Error{Code: operators.CodeInternal, Message: "recursive: malformed input tag"}
		}
		out[i] = append(out[i], operators.ValDiff{Val: v.Val[len(tag):], Diff: v.Diff})
	}
	return out, nil
}

// IncrementalFixpointStep returns the step of an incremental fixpoint
// operator: it reads only the fresh changes of the tagged inputs, applies
// each time's changes in time order to the maintained fixed point (see
// incFix) and emits the output's change at that time. The arrangement's
// older contents are never read: the operator's state holds them.
//
// Under StatefulFueled the step yields between the times of its fresh
// updates: each time's changes are applied whole (the fixed point moves
// from one consistent state to the next), and a call stops after the time
// at which its work (changes applied plus updates emitted) has reached the
// fuel, recording the next time's position (emitter.pos). A single time's
// changes are one unit: the fixed point cannot stop part way through one.
func IncrementalFixpointStep(fp *Fixpoint) StepFunc {
	s := newIncFix(fp)
	var upds []operators.TimedVal // the step in progress's fresh updates
	return func(_, fresh [][]*batch.Batch, e *emitter) {
		s.stop = func() bool { return e.stop != nil && e.stop() }
		defer func() { s.stop = nil }()
		start := 0
		if e.pos != nil {
			start = *e.pos
		}
		if start == 0 {
			upds = freshUpdates(fresh[0])
		}
		work := 0
		for i := start; i < len(upds); {
			if e.limit > 0 && e.pos != nil && work >= e.limit && i > start {
				*e.pos, e.more = i, true
				return
			}
			t := upds[i].Time
			j := i
			for j < len(upds) && upds[j].Time == t {
				j++
			}
			work += j - i
			changes, err := fp.changes(upds[i:j])
			if err != nil {
				e.emitErr(err, t, 1)
				i = j
				continue
			}
			deltas := s.Apply(changes)
			work += len(deltas)
			for _, d := range deltas {
				if d.err != nil {
					e.emitErr(d.err, t, d.diff)
				} else {
					e.emit(d.val, t, d.diff)
				}
			}
			i = j
		}
		upds = nil
		if e.pos != nil {
			*e.pos = 0
		}
	}
}

// freshUpdates lists a step's fresh updates sorted by (time, value).
func freshUpdates(bs []*batch.Batch) []operators.TimedVal {
	var out []operators.TimedVal
	for _, b := range bs {
		if b == nil || b.Len() == 0 {
			continue
		}
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			for ; c.ValValid(); c.StepVal() {
				val := c.Val()
				c.ForEachUpdate(func(t frontier.Time, diff int64) {
					out = append(out, operators.TimedVal{Val: val, Time: t, Diff: diff})
				})
			}
		}
	}
	slices.SortFunc(out, func(a, b operators.TimedVal) int {
		if c := cmp.Compare(a.Time, b.Time); c != 0 {
			return c
		}
		return bytes.Compare(a.Val, b.Val)
	})
	return out
}

// changes consolidates one time's tagged updates into input changes.
func (fp *Fixpoint) changes(upds []operators.TimedVal) ([]change, error) {
	vals := make([]operators.ValDiff, len(upds))
	for i, u := range upds {
		vals[i] = operators.ValDiff{Val: u.Val, Diff: u.Diff}
	}
	split, err := fp.split(operators.Consolidate(vals))
	if err != nil {
		return nil, err
	}
	var out []change
	for i, vs := range split {
		for _, v := range vs {
			out = append(out, change{input: i, val: v.Val, diff: v.Diff})
		}
	}
	return out, nil
}
