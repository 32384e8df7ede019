package enginetest

import (
	"fmt"
	"maps"
	"testing"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/reference"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestOperatorsMatchReference runs random plans directly on the operators
// over real traces, without the runtime: a small step-driven evaluator
// (below) arranges each stateful operator's input into per-worker trace
// shards (row.Hash(key) % workers), advances every operator through the
// same random batch boundaries, lets the traces merge and compact behind
// the operators' holds, and accumulates the plan's output and error
// updates. At every time the accumulated output must equal the reference
// exactly, rows and errors with their multiplicities. It pins the
// operators' semantics independently of the runtime's scheduling.
func TestOperatorsMatchReference(t *testing.T) {
	var stats coverage
	rapid.Check(t, func(rt *rapid.T) {
		srcA, srcB := plan.User(1), plan.User(2)
		g := &planGen{t: rt, sources: map[plan.GlobalID]row.RelationDesc{srcA: descA, srcB: descB}, ids: []plan.GlobalID{srcA, srcB}}
		p := g.plan(rapid.IntRange(1, 3).Draw(rt, "depth"), "plan")
		workers := rapid.SampledFrom([]int{1, 2, 4}).Draw(rt, "workers")
		updates := map[plan.GlobalID][]reference.Update{srcA: genUpdates(rt, descA), srcB: genUpdates(rt, descB)}
		ev := &stepEval{workers: workers, sources: updates, fuel: rapid.SampledFrom([]int{0, 2, 16, 1 << 20}).Draw(rt, "fuel")}
		root, err := ev.build(&p)
		if err != nil {
			rt.Fatalf("build: %v", err)
		}
		defer ev.release()
		var okOut, errOut []reference.Update
		for lower := frontier.Time(0); lower < horizon; {
			upper := frontier.Time(rapid.IntRange(int(lower)+1, horizon).Draw(rt, "batch_upper"))
			ok, errs, err := root.step(lower, upper)
			if err != nil {
				rt.Fatalf("step [%d, %d): %v", lower, upper, err)
			}
			okOut, errOut = append(okOut, ok...), append(errOut, errs...)
			lower = upper
		}
		for at := frontier.Time(0); at < horizon; at++ {
			env := map[plan.GlobalID]reference.Result{}
			for id, ups := range updates {
				env[id] = reference.Result{Rows: reference.AsOf(ups, at), Errors: reference.Collection{}}
			}
			want, err := reference.EvalPlan(&p, env)
			if err != nil {
				rt.Fatalf("reference: %v", err)
			}
			stats.reads++
			if len(want.Rows) > 0 {
				stats.withRows++
			}
			if len(want.Errors) > 0 {
				stats.withErrors++
			}
			if got := reference.AsOf(okOut, at); !got.Equal(want.Rows) {
				rt.Fatalf("rows at %d:\nengine\n%s\nreference\n%s\nengine - reference\n%s", at, got, want.Rows, reference.Diff(got, want.Rows))
			}
			if got := reference.AsOf(errOut, at); !got.Equal(want.Errors) {
				rt.Fatalf("errors at %d:\nengine\n%s\nreference\n%s", at, got, want.Errors)
			}
		}
	})
	t.Logf("times compared: %d (%d with rows, %d with errors)", stats.reads, stats.withRows, stats.withErrors)
	if stats.reads > 100 && (stats.withRows == 0 || stats.withErrors == 0) {
		t.Errorf("the generated cases never compared rows or never compared errors: the property is vacuous")
	}
}

// stepEval builds a plan into step functions. Every node is stepped once
// per interval [lower, upper), in the same order as the intervals, and
// returns the change of its output (and of its errors) over the interval.
type stepEval struct {
	workers int
	sources map[plan.GlobalID][]reference.Update
	fuel    int
	arrs    []*arrangement
	// lets are the Let bindings in scope: each value's node, stepped
	// once per interval however many Gets read it.
	lets map[plan.GlobalID]stepNode
}

// let builds a Let: its value once, read by the body's Gets through a
// node that steps the value once per interval and hands every reader the
// same changes.
func (ev *stepEval) let(l *plan.Let) (stepNode, error) {
	value, err := ev.build(l.Value)
	if err != nil {
		return nil, err
	}
	var lastLower, lastUpper frontier.Time
	var ok, errs []reference.Update
	stepped := false
	shared := stepFunc(func(lower, upper frontier.Time) ([]reference.Update, []reference.Update, error) {
		if !stepped || lower != lastLower || upper != lastUpper {
			o, e, err := value.step(lower, upper)
			if err != nil {
				return nil, nil, err
			}
			ok, errs, lastLower, lastUpper, stepped = o, e, lower, upper, true
		}
		return ok, errs, nil
	})
	outer := ev.lets
	ev.lets = maps.Clone(outer)
	if ev.lets == nil {
		ev.lets = map[plan.GlobalID]stepNode{}
	}
	ev.lets[l.ID] = shared
	defer func() { ev.lets = outer }()
	body, err := ev.build(l.Body)
	if err != nil {
		return nil, err
	}
	// The value steps every interval even when the body reads it zero
	// times or not yet, as the dataflow runs it.
	return stepFunc(func(lower, upper frontier.Time) ([]reference.Update, []reference.Update, error) {
		if _, _, err := shared.step(lower, upper); err != nil {
			return nil, nil, err
		}
		return body.step(lower, upper)
	}), nil
}

type stepNode interface {
	step(lower, upper frontier.Time) (ok, errs []reference.Update, err error)
}

type stepFunc func(lower, upper frontier.Time) ([]reference.Update, []reference.Update, error)

func (f stepFunc) step(lower, upper frontier.Time) ([]reference.Update, []reference.Update, error) {
	return f(lower, upper)
}

func (ev *stepEval) release() {
	for _, a := range ev.arrs {
		a.release()
	}
}

func (ev *stepEval) build(p *plan.Plan) (stepNode, error) {
	if p.Recursive != nil {
		return ev.recursive(p.Recursive)
	}
	if p.Let != nil {
		return ev.let(p.Let)
	}
	if p.Get != nil && ev.lets[p.Get.ID] != nil {
		return ev.lets[p.Get.ID], nil
	}
	var ins []stepNode
	for _, in := range p.Inputs() {
		n, err := ev.build(in)
		if err != nil {
			return nil, err
		}
		ins = append(ins, n)
	}
	// stepInputs steps every input and concatenates their errors.
	stepInputs := func(lower, upper frontier.Time) ([][]reference.Update, []reference.Update, error) {
		var oks [][]reference.Update
		var errs []reference.Update
		for _, in := range ins {
			ok, e, err := in.step(lower, upper)
			if err != nil {
				return nil, nil, err
			}
			oks = append(oks, ok)
			errs = append(errs, e...)
		}
		return oks, errs, nil
	}
	switch n := p.Node().(type) {
	case *plan.Get:
		ups := ev.sources[n.ID]
		return stepFunc(func(lower, upper frontier.Time) ([]reference.Update, []reference.Update, error) {
			var out []reference.Update
			for _, u := range ups {
				if u.Time >= lower && u.Time < upper {
					out = append(out, u)
				}
			}
			return out, nil, nil
		}), nil
	case *plan.Constant:
		return stepFunc(func(lower, _ frontier.Time) ([]reference.Update, []reference.Update, error) {
			if lower != 0 {
				return nil, nil, nil
			}
			var out []reference.Update
			for _, r := range n.Rows {
				out = append(out, reference.Update{Row: row.Pack(r.Datums...), Time: 0, Diff: r.Diff})
			}
			return out, nil, nil
		}), nil
	case *plan.Mfp:
		return stepFunc(func(lower, upper frontier.Time) ([]reference.Update, []reference.Update, error) {
			oks, errs, err := stepInputs(lower, upper)
			if err != nil {
				return nil, nil, err
			}
			var out []reference.Update
			for _, u := range oks[0] {
				ds, _ := u.Row.Unpack()
				vals, keep, err := n.MFP.Evaluate(ds, nil)
				switch {
				case err != nil:
					errs = append(errs, reference.Update{Row: reference.ErrorRow(err), Time: u.Time, Diff: u.Diff})
				case keep:
					out = append(out, reference.Update{Row: row.Pack(vals...), Time: u.Time, Diff: u.Diff})
				}
			}
			return out, errs, nil
		}), nil
	case *plan.Negate:
		return stepFunc(func(lower, upper frontier.Time) ([]reference.Update, []reference.Update, error) {
			oks, errs, err := stepInputs(lower, upper)
			if err != nil {
				return nil, nil, err
			}
			out := make([]reference.Update, len(oks[0]))
			for i, u := range oks[0] {
				out[i] = reference.Update{Row: u.Row, Time: u.Time, Diff: -u.Diff}
			}
			return out, errs, nil
		}), nil
	case *plan.Union, *plan.ArrangeBy:
		return stepFunc(func(lower, upper frontier.Time) ([]reference.Update, []reference.Update, error) {
			oks, errs, err := stepInputs(lower, upper)
			if err != nil {
				return nil, nil, err
			}
			var out []reference.Update
			for _, ok := range oks {
				out = append(out, ok...)
			}
			return out, errs, nil
		}), nil
	case *plan.Join:
		return ev.stateful(ins, []keySpec{{key: n.LeftKey}, {key: n.RightKey}}, func(old, fresh [][]*batch.Batch, emit operators.Emit, _ operators.EmitErr) {
			operators.Join(operators.JoinInput{LeftOld: old[0], LeftFresh: fresh[0], RightOld: old[1], RightFresh: fresh[1]}, emit)
		}), nil
	case *plan.Reduce:
		var aggs []operators.Aggregate
		var vals []expr.Expr
		for i, a := range n.Aggregates {
			f, ok := map[plan.AggregateFunc]operators.AggFunc{
				plan.AggCountStar: operators.AggCountStar, plan.AggCount: operators.AggCount, plan.AggSum: operators.AggSum,
				plan.AggMin: operators.AggMin, plan.AggMax: operators.AggMax, plan.AggAvg: operators.AggAvg,
				plan.AggStringAgg: operators.AggStringAgg, plan.AggVarSamp: operators.AggVarSamp, plan.AggStddevPop: operators.AggStddevPop,
				plan.AggSumSquares: operators.AggSumSquares, plan.AggConcat: operators.AggConcat,
			}[a.Func]
			if !ok {
				return nil, fmt.Errorf("unknown aggregate %q", a.Func)
			}
			aggs = append(aggs, operators.Aggregate{Func: f, Column: i, Distinct: a.Distinct})
			if a.Func == plan.AggCountStar {
				vals = append(vals, expr.Literal(row.Null()))
			} else {
				vals = append(vals, a.Expr)
			}
		}
		for i, a := range n.Aggregates {
			if a.Func == plan.AggStringAgg || a.Func == plan.AggConcat {
				if a.Func == plan.AggStringAgg {
					aggs[i].Sep = len(vals)
					vals = append(vals, *a.Sep)
				}
				for _, o := range a.OrderBy {
					aggs[i].Order = append(aggs[i].Order, row.ColumnOrder{Column: len(vals), Desc: o.Desc, NullsLast: o.NullsLast})
					vals = append(vals, o.Expr)
				}
			}
		}
		return ev.group(ins[0], keySpec{key: n.GroupKey, val: vals, hasVal: true}, operators.AggregateLogic(aggs), operators.AggregateEval(aggs)), nil
	case *plan.Distinct:
		return ev.group(ins[0], keySpec{rowKey: true, emptyVal: true}, operators.DistinctLogic(), nil), nil
	case *plan.Threshold:
		return ev.group(ins[0], keySpec{rowKey: true, emptyVal: true}, operators.ThresholdLogic(), nil), nil
	case *plan.TopK:
		spec := operators.TopKSpec{Limit: -1, Offset: n.Offset}
		if n.Limit != nil {
			spec.Limit = *n.Limit
		}
		for _, o := range n.Order {
			spec.Order = append(spec.Order, row.ColumnOrder{Column: o.Column, Desc: o.Desc, NullsLast: o.NullsLast})
		}
		var key []expr.Expr
		for _, c := range n.GroupKey {
			key = append(key, expr.Column(c))
		}
		return ev.group(ins[0], keySpec{key: key}, operators.TopKLogic(spec), nil), nil
	case *plan.Window:
		spec, err := render.WindowSpec(n)
		if err != nil {
			return nil, err
		}
		var key []expr.Expr
		for _, c := range n.PartitionBy {
			key = append(key, expr.Column(c))
		}
		return ev.group(ins[0], keySpec{key: key}, operators.WindowLogic(spec), nil), nil
	}
	return nil, fmt.Errorf("unsupported plan node %s", p)
}

// keySpec says how a stateful operator keys its input rows.
type keySpec struct {
	key      []expr.Expr
	rowKey   bool // key = the whole row
	val      []expr.Expr
	hasVal   bool // val = Pack(val exprs) (else the whole row)
	emptyVal bool
}

func (k keySpec) apply(r row.Row) (key, val []byte, err error) {
	ds, err := r.Unpack()
	if err != nil {
		return nil, nil, err
	}
	key = r
	if !k.rowKey {
		kd, err := evalExprs(k.key, ds)
		if err != nil {
			return nil, nil, err
		}
		key = row.Pack(kd...)
	}
	val = r
	switch {
	case k.emptyVal:
		val = nil
	case k.hasVal:
		vd, err := evalExprs(k.val, ds)
		if err != nil {
			return nil, nil, err
		}
		val = row.Pack(vd...)
	}
	return key, val, nil
}

func evalExprs(es []expr.Expr, ds []row.Datum) ([]row.Datum, error) {
	out := make([]row.Datum, 0, len(es))
	for i := range es {
		v, err := es[i].Eval(ds)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// group reduces its input with logic; with fuel, as the renderer does, in
// resumable calls of at most fuel units of work that may stop inside a
// group (operators.ReduceGroupsResumable, evaluating groups with eval, nil:
// the logic whole), run to completion.
func (ev *stepEval) group(in stepNode, spec keySpec, logic operators.GroupLogic, eval operators.GroupEval) stepNode {
	if eval == nil {
		eval = operators.WholeGroup(logic)
	}
	return ev.stateful([]stepNode{in}, []keySpec{spec}, func(old, fresh [][]*batch.Batch, emit operators.Emit, emitErr operators.EmitErr) {
		if ev.fuel == 0 {
			operators.ReduceGroups(old[0], fresh[0], logic, emit, emitErr)
			return
		}
		var p operators.Progress
		for !operators.ReduceGroupsResumable(old[0], fresh[0], eval, emit, emitErr, ev.fuel, &p) {
		}
	})
}

// stateful arranges each input by its key spec into sharded traces and, per
// step and per worker shard, runs the operator over the shard's batches
// split at the step's start.
func (ev *stepEval) stateful(ins []stepNode, specs []keySpec, run func(old, fresh [][]*batch.Batch, emit operators.Emit, emitErr operators.EmitErr)) stepNode {
	arrs := make([]*arrangement, len(ins))
	for i := range ins {
		arrs[i] = newArrangement(ev.workers, fmt.Sprintf("input %d", i))
		ev.arrs = append(ev.arrs, arrs[i])
	}
	return stepFunc(func(lower, upper frontier.Time) ([]reference.Update, []reference.Update, error) {
		var out, errs []reference.Update
		for i, in := range ins {
			ok, e, err := in.step(lower, upper)
			if err != nil {
				return nil, nil, err
			}
			errs = append(errs, e...)
			var keyedUps []keyed
			for _, u := range ok {
				k, v, err := specs[i].apply(u.Row)
				if err != nil {
					errs = append(errs, reference.Update{Row: reference.ErrorRow(err), Time: u.Time, Diff: u.Diff})
					continue
				}
				keyedUps = append(keyedUps, keyed{key: k, val: v, t: u.Time, diff: u.Diff})
			}
			if err := arrs[i].insert(keyedUps, frontier.At(upper), ev.fuel); err != nil {
				return nil, nil, err
			}
		}
		emit := func(r []byte, t frontier.Time, d int64) {
			out = append(out, reference.Update{Row: append(row.Row(nil), r...), Time: t, Diff: d})
		}
		emitErr := func(err error, t frontier.Time, d int64) {
			errs = append(errs, reference.Update{Row: reference.ErrorRow(err), Time: t, Diff: d})
		}
		for w := range ev.workers {
			old := make([][]*batch.Batch, len(arrs))
			fresh := make([][]*batch.Batch, len(arrs))
			for i, a := range arrs {
				var err error
				if old[i], fresh[i], err = a.split(w, frontier.At(lower), frontier.At(upper)); err != nil {
					return nil, nil, err
				}
			}
			run(old, fresh, emit, emitErr)
		}
		for _, a := range arrs {
			if err := a.advance(frontier.At(upper)); err != nil {
				return nil, nil, err
			}
		}
		return out, errs, nil
	})
}

// recursive builds a Recursive node as the renderer does: its inputs (the
// base and the step's subtrees that do not read the binding) tagged with
// their number, arranged under one key and reduced by the fixpoint logic.
func (ev *stepEval) recursive(rec *plan.Recursive) (stepNode, error) {
	fp, err := render.CompileRecursive(rec)
	if err != nil {
		return nil, err
	}
	var ins []stepNode
	for i, in := range fp.Inputs {
		n, err := ev.build(in)
		if err != nil {
			return nil, err
		}
		tag := render.FixpointTag(i)
		ins = append(ins, stepFunc(func(lower, upper frontier.Time) ([]reference.Update, []reference.Update, error) {
			ok, errs, err := n.step(lower, upper)
			out := make([]reference.Update, len(ok))
			for j, u := range ok {
				out[j] = reference.Update{Row: append(append(row.Row(nil), tag...), u.Row...), Time: u.Time, Diff: u.Diff}
			}
			return out, errs, err
		}))
	}
	union := stepFunc(func(lower, upper frontier.Time) ([]reference.Update, []reference.Update, error) {
		var oks, errs []reference.Update
		for _, in := range ins {
			ok, e, err := in.step(lower, upper)
			if err != nil {
				return nil, nil, err
			}
			oks, errs = append(oks, ok...), append(errs, e...)
		}
		return oks, errs, nil
	})
	return ev.group(union, keySpec{key: []expr.Expr{}}, render.FixpointLogic(fp), render.FixpointEval(fp)), nil
}
