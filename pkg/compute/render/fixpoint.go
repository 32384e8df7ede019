package render

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Fixpoint is a Recursive node compiled for evaluation inside one
// operator: Inputs are the collections it reads (Inputs[0] the Base, the
// others the maximal subtrees of Step that do not read the binding, which
// the dataflow maintains as usual), and step is the rest of Step, a tree
// over the binding and those inputs evaluated once per round.
type Fixpoint struct {
	Rec    *plan.Recursive
	Inputs []*plan.Plan
	// Stop, when set, is polled before every round; once it reports true
	// the re-derivation is abandoned (the dataflow is being dropped) by
	// unwinding to the stateful operator's step (stepAbandoned).
	Stop func() bool
	step *fixNode
	tags [][]byte
}

// fixNode is one node of the step: a leaf reading the binding or an input,
// or an operator over its kids.
type fixNode struct {
	p       *plan.Plan
	binding bool
	input   int // > 0: a leaf reading Inputs[input]
	kids    []*fixNode
	mfp     *preparedMFP
	group   *groupNode
}

// CompileRecursive splits a Recursive node's Step into the part evaluated
// per round and the inputs the dataflow maintains.
func CompileRecursive(rec *plan.Recursive) (*Fixpoint, error) {
	if rec.Base == nil || rec.Step == nil {
		return nil, fmt.Errorf("recursive: missing input")
	}
	fp := &Fixpoint{Rec: rec, Inputs: []*plan.Plan{rec.Base}}
	// The step is evaluated as a tree per round: a Let in it is expanded
	// (its value copied into each use), so every subtree split off as an
	// input is closed over the ids the dataflow binds.
	expanded := plan.ExpandLets(*rec.Step)
	step, err := fp.compile(&expanded)
	if err != nil {
		return nil, err
	}
	fp.step = step
	for i := range fp.Inputs {
		fp.tags = append(fp.tags, FixpointTag(i))
	}
	return fp, nil
}

func (fp *Fixpoint) compile(p *plan.Plan) (*fixNode, error) {
	if p == nil {
		return nil, fmt.Errorf("recursive: missing input")
	}
	n := &fixNode{p: p}
	switch {
	case !p.Reads(fp.Rec.ID):
		fp.Inputs = append(fp.Inputs, p)
		n.input = len(fp.Inputs) - 1
		return n, nil
	case p.Get != nil:
		n.binding = true
		return n, nil
	case p.Recursive != nil:
		return nil, fmt.Errorf("recursive: a nested recursive node reads the binding %s", fp.Rec.ID)
	case p.Mfp != nil:
		n.mfp = &preparedMFP{mfp: &p.Mfp.MFP}
	case p.Reduce != nil, p.Distinct != nil, p.Threshold != nil, p.TopK != nil, p.Window != nil:
		g, err := groupOf(p)
		if err != nil {
			return nil, err
		}
		n.group = &g
	case p.Join != nil, p.Union != nil, p.Negate != nil, p.ArrangeBy != nil:
	default:
		return nil, fmt.Errorf("recursive: plan node %q not supported in a recursive step", p.Kind())
	}
	for _, in := range p.Inputs() {
		k, err := fp.compile(in)
		if err != nil {
			return nil, err
		}
		n.kids = append(n.kids, k)
	}
	return n, nil
}

// negativeInput is the error of a negative multiplicity in the base or in
// a round's result.
var negativeInput = operators.Error{Code: operators.CodeInternal, Message: "recursive: negative multiplicity in input"}

// Run computes the fixed point over the inputs' contents (each in any
// order, not necessarily consolidated). The result is sorted and
// consolidated; an error replaces it (see plan.Recursive).
func (fp *Fixpoint) Run(inputs [][]operators.ValDiff) ([]operators.ValDiff, error) {
	r := fp.start(inputs)
	for !r.done {
		r.round()
	}
	return r.out, r.err
}

// fixRun is one re-derivation of a fixed point, advanced a round at a time
// (round), so that a long recursion can yield the worker between rounds
// (FixpointEval).
type fixRun struct {
	fp     *Fixpoint
	ev     *fixEval
	work   []operators.ValDiff // the last round's new rows
	total  map[string]int64    // the result so far
	rounds int64
	done   bool
	out    []operators.ValDiff
	err    error
}

// start begins a re-derivation over the inputs' contents: round 0, the
// base.
func (fp *Fixpoint) start(inputs [][]operators.ValDiff) *fixRun {
	r := &fixRun{fp: fp}
	if len(inputs) != len(fp.Inputs) {
		r.finish(nil, fmt.Errorf("recursive: %d inputs, want %d", len(inputs), len(fp.Inputs)))
		return r
	}
	r.ev = &fixEval{inputs: inputs, index: map[*fixNode]map[string][]keyedRow{}}
	r.work = operators.Consolidate(slices.Clone(inputs[0]))
	for i, v := range r.work {
		if v.Diff < 0 {
			r.finish(nil, negativeInput)
			return r
		}
		if fp.Rec.Distinct {
			r.work[i].Diff = 1
		}
	}
	r.total = map[string]int64{}
	for _, v := range r.work {
		r.total[string(v.Val)] += v.Diff
	}
	if len(r.work) == 0 {
		r.finish(r.result(), nil)
	}
	return r
}

func (r *fixRun) finish(out []operators.ValDiff, err error) { r.out, r.err, r.done = out, err, true }

// roundUnits is the fixed cost of one round in units of work (a row in or
// out of a round is one): a round of a few rows took about 1.3 µs of CPU
// in BenchmarkGroupStepArms' recursion, some sixteen times a row's.
const roundUnits = 16

// round evaluates the step once over the last round's new rows and
// returns its work (roundUnits plus the rows in and out of the round).
func (r *fixRun) round() int {
	fp := r.fp
	if fp.Stop != nil && fp.Stop() {
		panic(stepAbandoned{})
	}
	if r.rounds == fp.Rec.MaxIterations {
		code, msg := fp.Rec.LimitError()
		r.finish(nil, operators.Error{Code: code, Message: msg})
		return roundUnits
	}
	r.rounds++
	r.ev.errs = map[string]int64{}
	res := operators.Consolidate(r.ev.eval(fp.step, r.work))
	work := roundUnits + len(r.work) + len(res)
	if err := r.ev.firstError(); err != nil {
		r.finish(nil, err)
		return work
	}
	next := res[:0]
	for _, v := range res {
		switch {
		case v.Diff < 0:
			r.finish(nil, negativeInput)
			return work
		case !fp.Rec.Distinct:
			next = append(next, v)
		case r.total[string(v.Val)] == 0:
			next = append(next, operators.ValDiff{Val: v.Val, Diff: 1})
		}
	}
	for _, v := range next {
		r.total[string(v.Val)] += v.Diff
	}
	r.work = next
	if len(r.work) == 0 {
		r.finish(r.result(), nil)
	}
	return work
}

// result is the accumulated fixed point, sorted.
func (r *fixRun) result() []operators.ValDiff {
	out := make([]operators.ValDiff, 0, len(r.total))
	for k, n := range r.total {
		out = append(out, operators.ValDiff{Val: []byte(k), Diff: n})
	}
	slices.SortFunc(out, func(a, b operators.ValDiff) int { return bytes.Compare(a.Val, b.Val) })
	return out
}

// fixEval evaluates the step over one fixpoint's inputs: the errors of
// the current round (error row -> multiplicity) and, per join leaf that
// reads an input, that input keyed once for every round.
type fixEval struct {
	inputs  [][]operators.ValDiff
	errs    map[string]int64
	index   map[*fixNode]map[string][]keyedRow
	scratch expr.Scratch
}

type keyedRow struct {
	key, val []byte
	diff     int64
}

func (ev *fixEval) fail(err error, diff int64) { ev.errs[string(ErrorRow(err))] += diff }

// firstError returns the smallest error row of the round with a positive
// multiplicity, as an error.
func (ev *fixEval) firstError() error {
	var first string
	found := false
	for k, n := range ev.errs {
		if n > 0 && (!found || k < first) {
			first, found = k, true
		}
	}
	if !found {
		return nil
	}
	return DecodeErrorRow([]byte(first))
}

func (ev *fixEval) eval(n *fixNode, work []operators.ValDiff) []operators.ValDiff {
	switch {
	case n.binding:
		return work
	case n.input > 0:
		return ev.inputs[n.input]
	case n.mfp != nil:
		return ev.mfp(n, ev.eval(n.kids[0], work))
	case n.group != nil:
		return ev.group(n.group, ev.eval(n.kids[0], work))
	case n.p.Join != nil:
		return ev.join(n, work)
	case n.p.Negate != nil:
		in := ev.eval(n.kids[0], work)
		out := make([]operators.ValDiff, len(in))
		for i, v := range in {
			out[i] = operators.ValDiff{Val: v.Val, Diff: -v.Diff}
		}
		return out
	case n.p.Union != nil:
		var out []operators.ValDiff
		for _, k := range n.kids {
			out = append(out, ev.eval(k, work)...)
		}
		return out
	}
	return ev.eval(n.kids[0], work) // ArrangeBy
}

func (ev *fixEval) mfp(n *fixNode, in []operators.ValDiff) []operators.ValDiff {
	var out []operators.ValDiff
	for _, v := range in {
		ds, err := row.Row(v.Val).Unpack()
		if err != nil {
			ev.fail(err, v.Diff)
			continue
		}
		res, keep, err := n.mfp.evaluate(ds, &ev.scratch)
		switch {
		case err != nil:
			ev.fail(err, v.Diff)
		case keep:
			out = append(out, operators.ValDiff{Val: row.Pack(res...), Diff: v.Diff})
		}
	}
	return out
}

// keyed evaluates spec over every row; rows whose key or value fails to
// evaluate become errors.
func (ev *fixEval) keyed(spec KeySpec, in []operators.ValDiff) []keyedRow {
	out := make([]keyedRow, 0, len(in))
	for _, v := range in {
		ds, err := row.Row(v.Val).Unpack()
		if err != nil {
			ev.fail(err, v.Diff)
			continue
		}
		k := keyedRow{val: v.Val, diff: v.Diff}
		written := v.Val
		if !spec.RowKey {
			if written, err = evalPacked(spec.Key, ds); err != nil {
				ev.fail(err, v.Diff)
				continue
			}
		}
		k.key = row.NumericKeyRow(written)
		if spec.Val != nil {
			if k.val, err = evalPacked(spec.Val, ds); err != nil {
				ev.fail(err, v.Diff)
				continue
			}
		}
		if spec.EmptyVal {
			k.val = nil
		}
		k.val = spec.appendWrittenKey(k.val, k.key, written)
		out = append(out, k)
	}
	return out
}

// evalKey is evalPacked for a key: numerics at their minimal scale.
func evalKey(es []expr.Expr, ds []row.Datum) ([]byte, error) {
	k, err := evalPacked(es, ds)
	return row.NumericKeyRow(k), err
}

func evalPacked(es []expr.Expr, ds []row.Datum) ([]byte, error) {
	vals := make([]row.Datum, len(es))
	for i := range es {
		v, err := es[i].Eval(ds)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return row.Pack(vals...), nil
}

// group runs a reduction's logic on every key, as the group stepper does
// on one state: an empty (fully cancelled) group has no output; a group's
// error counts once.
func (ev *fixEval) group(g *groupNode, in []operators.ValDiff) []operators.ValDiff {
	rows := ev.keyed(g.spec, in)
	slices.SortFunc(rows, func(a, b keyedRow) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		return bytes.Compare(a.val, b.val)
	})
	var out, vals []operators.ValDiff
	for i := 0; i < len(rows); {
		j := i
		vals = vals[:0]
		for ; j < len(rows) && bytes.Equal(rows[j].key, rows[i].key); j++ {
			vals = append(vals, operators.ValDiff{Val: rows[j].val, Diff: rows[j].diff})
		}
		if vals = operators.Consolidate(vals); len(vals) > 0 {
			res, err := g.logic(rows[i].key, vals)
			if err != nil {
				ev.fail(err, 1)
			}
			out = append(out, res...)
		}
		i = j
	}
	return out
}

// join is the inner equi-join of the two kids, keys compared as encoded
// rows. A side that reads an input rather than the binding is keyed once
// per fixpoint and probed in every round.
func (ev *fixEval) join(n *fixNode, work []operators.ValDiff) []operators.ValDiff {
	j := n.p.Join
	keys := [2][]expr.Expr{j.LeftKey, j.RightKey}
	built := 1 // the side kept in a hash table
	if n.kids[0].input > 0 && n.kids[1].input == 0 {
		built = 0
	}
	table, ok := ev.index[n]
	if !ok {
		table = map[string][]keyedRow{}
		for _, k := range ev.keyed(KeySpec{Key: keys[built]}, ev.eval(n.kids[built], work)) {
			table[string(k.key)] = append(table[string(k.key)], k)
		}
		if n.kids[built].input > 0 {
			ev.index[n] = table
		}
	}
	var out []operators.ValDiff
	for _, p := range ev.keyed(KeySpec{Key: keys[1-built]}, ev.eval(n.kids[1-built], work)) {
		for _, m := range table[string(p.key)] {
			l, r := p, m
			if built == 0 {
				l, r = m, p
			}
			val := append(append(make([]byte, 0, len(l.val)+len(r.val)), l.val...), r.val...)
			out = append(out, operators.ValDiff{Val: val, Diff: l.diff * r.diff})
		}
	}
	return out
}
