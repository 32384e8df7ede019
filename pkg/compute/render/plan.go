package render

import (
	"fmt"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// rendered is a plan's output on one worker: its ok stream and the streams
// whose union is its error collection (kept as a list so errors are
// concatenated once, where they are consumed).
type rendered struct {
	ok   dataflow.Stream
	errs []dataflow.Stream
}

// planRenderer renders plan trees of one dataflow on one worker.
type planRenderer struct {
	b       *dataflow.Builder
	asOf    frontier.Frontier
	objects map[plan.GlobalID]rendered
	fail    func(error)
	n       int
	// imports are the dataflow's index imports by the collection they
	// index (flattened on first use as a collection).
	imports map[plan.GlobalID]*importedIndex
	// snapshot: the dataflow is read only at snapshotAt (snapshotTime),
	// so reductions over imports read them through cursors.
	snapshot   bool
	snapshotAt frontier.Time
	tune       snapshotTuning
	// memo holds snapshot reductions already rendered, by plan encoding:
	// a global aggregate's plan holds its reduction twice.
	memo map[string]rendered
	// arrangeFuel is the arrangement build fuel per step (Env.ArrangeFuel).
	arrangeFuel func() int
	// onSchedule, if set, sees what every schedule of the stateful
	// operators it renders emitted (Env.onStatefulSchedule, tests).
	onSchedule func(name string, emitted int)
}

func (r *planRenderer) name(kind string) string {
	r.n++
	return fmt.Sprintf("%s#%d", kind, r.n)
}

func (r *planRenderer) render(p *plan.Plan) (rendered, error) {
	switch {
	case p.Get != nil:
		if c, ok := r.collection(p.Get.ID); ok {
			return c, nil
		}
		return rendered{}, fmt.Errorf("get %s: not imported or built before", p.Get.ID)
	case p.Constant != nil:
		var ups []dataflow.Update
		if t, ok := r.asOf.Time(); ok {
			for _, cr := range p.Constant.Rows {
				ups = append(ups, dataflow.Update{Val: row.Pack(cr.Datums...), Time: t, Diff: cr.Diff})
			}
		}
		return rendered{ok: Constant(r.b, r.name("constant"), ups)}, nil
	case p.Mfp != nil:
		in, err := r.render(p.Mfp.Input)
		if err != nil {
			return rendered{}, err
		}
		m := p.Mfp.MFP
		ok, errs := MapFilterProject(r.b, r.name("mfp"), in.ok, &m)
		return rendered{ok: ok, errs: append(clip(in.errs), errs)}, nil
	case p.Join != nil:
		return r.join(p.Join)
	case p.Reduce != nil, p.Distinct != nil, p.Threshold != nil, p.TopK != nil, p.Window != nil:
		// A global aggregate's plan holds its reduction twice: a snapshot
		// read renders it once (memoKey; only reductions are memoised, so
		// only they pay for encoding the plan).
		var key string
		var memo bool
		if p.Reduce != nil {
			key, memo = r.memoKey(p)
		}
		if c, ok := r.memo[key]; memo && ok {
			return c, nil
		}
		g, err := groupOf(p)
		if err != nil {
			return rendered{}, err
		}
		c, err := r.group(g.input, g.kind, g.spec, g.logic, g.fold...)
		if err == nil && memo {
			r.memo[key] = c
		}
		return c, err
	case p.Recursive != nil:
		return r.recursive(p.Recursive)
	case p.Let != nil:
		return r.let(p.Let)
	case p.FlatMap != nil:
		in, err := r.render(p.FlatMap.Input)
		if err != nil {
			return rendered{}, err
		}
		ok, errs := FlatMap(r.b, r.name("flat_map"), in.ok, p.FlatMap)
		return rendered{ok: ok, errs: append(clip(in.errs), errs)}, nil
	case p.TemporalFilter != nil:
		in, err := r.render(p.TemporalFilter.Input)
		if err != nil {
			return rendered{}, err
		}
		ok, errs := TemporalFilter(r.b, r.name("temporal_filter"), in.ok, p.TemporalFilter)
		return rendered{ok: ok, errs: append(clip(in.errs), errs)}, nil
	case p.Union != nil:
		var out rendered
		var oks []dataflow.Stream
		for i := range p.Union.Inputs {
			in, err := r.render(&p.Union.Inputs[i])
			if err != nil {
				return rendered{}, err
			}
			oks = append(oks, in.ok)
			out.errs = append(out.errs, in.errs...)
		}
		out.ok = Concat(r.b, r.name("union"), oks)
		return out, nil
	case p.Negate != nil:
		in, err := r.render(p.Negate.Input)
		if err != nil {
			return rendered{}, err
		}
		// Errors are not negated: an error stays an error.
		return rendered{ok: Negate(r.b, r.name("negate"), in.ok), errs: in.errs}, nil
	case p.ArrangeBy != nil:
		// Arrangements are built where they are used (joins, reductions,
		// exports); the collection itself is unchanged.
		return r.render(p.ArrangeBy.Input)
	}
	return rendered{}, fmt.Errorf("render: plan node %q not supported", p.Kind())
}

// arrange keys a collection and arranges it, adding key errors to errs.
func (r *planRenderer) arrange(in dataflow.Stream, kind string, spec KeySpec, errs *[]dataflow.Stream) *Arranged {
	name := r.name(kind)
	keyed, keyErrs := KeyBy(r.b, name, in, spec)
	*errs = append(*errs, keyErrs)
	return ArrangeFueled(r.b, name, keyed, r.fail, r.arrangeFuel)
}

// stateful renders a stateful operator that emits each step's output in
// slices of the arrangement fuel per schedule (StatefulFueled).
func (r *planRenderer) stateful(name string, inputs []*Arranged, step StepFunc) Collection {
	c, lg := stateful(r.b, name, inputs, step, r.fail, r.arrangeFuel)
	if r.onSchedule != nil {
		lg.onSchedule = func(n int) { r.onSchedule(name, n) }
	}
	return c
}

func (r *planRenderer) join(j *plan.Join) (rendered, error) {
	var errs []dataflow.Stream
	la, err := r.joinInput(j.Left, j.LeftKey, "join-left", &errs)
	if err != nil {
		return rendered{}, err
	}
	ra, err := r.joinInput(j.Right, j.RightKey, "join-right", &errs)
	if err != nil {
		return rendered{}, err
	}
	out := r.stateful(r.name("join"), []*Arranged{la, ra}, JoinStep)
	return rendered{ok: out.Ok, errs: append(errs, out.Err)}, nil
}

// joinInput arranges one input of a join by its join key: an import
// already arranged by that key is used as it is in a dataflow read only at
// its as_of (arrangedImport), anything else is rendered and arranged.
func (r *planRenderer) joinInput(p *plan.Plan, key []expr.Expr, kind string, errs *[]dataflow.Stream) (*Arranged, error) {
	if imp := r.arrangedImport(p, key); imp != nil {
		imp.cursors++
		*errs = append(*errs, imp.errs)
		return imp.ok, nil
	}
	in, err := r.render(p)
	if err != nil {
		return nil, err
	}
	*errs = append(*errs, in.errs...)
	return r.arrange(in.ok, kind, KeySpec{Key: key}, errs), nil
}

var aggFuncs = map[plan.AggregateFunc]operators.AggFunc{
	plan.AggCount:      operators.AggCount,
	plan.AggCountStar:  operators.AggCountStar,
	plan.AggSum:        operators.AggSum,
	plan.AggMin:        operators.AggMin,
	plan.AggMax:        operators.AggMax,
	plan.AggAvg:        operators.AggAvg,
	plan.AggStringAgg:  operators.AggStringAgg,
	plan.AggVarPop:     operators.AggVarPop,
	plan.AggVarSamp:    operators.AggVarSamp,
	plan.AggStddevPop:  operators.AggStddevPop,
	plan.AggStddevSamp: operators.AggStddevSamp,
	plan.AggSumSquares: operators.AggSumSquares,

	plan.AggJSONAgg:       operators.AggJSONAgg,
	plan.AggJSONObjectAgg: operators.AggJSONObjectAgg,
	plan.AggConcat:        operators.AggConcat,
}

// groupNode is a reduction-shaped node: its input keyed by spec, reduced
// per key by logic.
type groupNode struct {
	input *plan.Plan
	kind  string
	spec  KeySpec
	logic operators.GroupLogic
	// fold, for a SQL reduction, are its aggregates (a snapshot read may
	// fold them, fold.go).
	fold []operators.Aggregate
}

// groupOf describes a Reduce, Distinct, Threshold, TopK or Window node as
// a reduction (the dataflow and the fixpoint evaluator share it).
func groupOf(p *plan.Plan) (groupNode, error) {
	switch {
	case p.Reduce != nil:
		return reduceGroup(p.Reduce)
	case p.Distinct != nil:
		return groupNode{p.Distinct.Input, "distinct", KeySpec{RowKey: true, EmptyVal: true, DisplayKey: true}, operators.DistinctLogic(), nil}, nil
	case p.Threshold != nil:
		return groupNode{p.Threshold.Input, "threshold", KeySpec{RowKey: true, EmptyVal: true, DisplayKey: true}, operators.ThresholdLogic(), nil}, nil
	case p.TopK != nil:
		t := p.TopK
		spec := operators.TopKSpec{Limit: -1, Offset: t.Offset}
		if t.Limit != nil {
			spec.Limit = *t.Limit
		}
		spec.Order = slices.Clone(t.Order)
		return groupNode{t.Input, "topk", KeySpec{Key: columnExprs(t.GroupKey)}, operators.TopKLogic(spec), nil}, nil
	case p.Window != nil:
		spec, err := WindowSpec(p.Window)
		if err != nil {
			return groupNode{}, err
		}
		// Keyed by the partition columns, the whole row as value,
		// recomputed per partition.
		return groupNode{p.Window.Input, "window", KeySpec{Key: columnExprs(p.Window.PartitionBy)}, operators.WindowLogic(spec), nil}, nil
	}
	return groupNode{}, fmt.Errorf("render: plan node %q is not a reduction", p.Kind())
}

func columnExprs(cols []int) []expr.Expr {
	key := make([]expr.Expr, len(cols))
	for i, c := range cols {
		key[i] = expr.Column(c)
	}
	return key
}

func reduceGroup(red *plan.Reduce) (groupNode, error) {
	var aggs []operators.Aggregate
	var vals []expr.Expr
	for i, a := range red.Aggregates {
		f, ok := aggFuncs[a.Func]
		if !ok {
			return groupNode{}, fmt.Errorf("reduce: unknown aggregate %q", a.Func)
		}
		aggs = append(aggs, operators.Aggregate{Func: f, Column: i, Distinct: a.Distinct})
		if a.Func == plan.AggCountStar {
			// count(*) reads no argument; a NULL keeps columns aligned.
			vals = append(vals, expr.Literal(row.Null()))
		} else {
			vals = append(vals, a.Expr)
		}
	}
	// string_agg's separator and order expressions, and concat_agg's
	// order expressions, follow the arguments.
	for i, a := range red.Aggregates {
		if a.Func != plan.AggStringAgg && a.Func != plan.AggConcat {
			continue
		}
		if a.Func == plan.AggStringAgg {
			if a.Sep == nil {
				return groupNode{}, fmt.Errorf("reduce: string_agg without a separator")
			}
			aggs[i].Sep = len(vals)
			vals = append(vals, *a.Sep)
		}
		for _, o := range a.OrderBy {
			aggs[i].Order = append(aggs[i].Order, row.ColumnOrder{Column: len(vals), Desc: o.Desc, NullsLast: o.NullsLast})
			vals = append(vals, o.Expr)
		}
	}
	if vals == nil {
		vals = []expr.Expr{}
	}
	spec := KeySpec{Key: red.GroupKey, Val: vals, DisplayKey: true}
	return groupNode{red.Input, "reduce", spec, operators.AggregateLogicShowingKey(aggs, len(vals)), aggs}, nil
}

// group renders a reduction-shaped operator: key the input, arrange it, run
// the group logic.
// fold, for a SQL reduction, are its aggregates (a snapshot read may fold
// them, fold.go).
func (r *planRenderer) group(input *plan.Plan, kind string, spec KeySpec, logic operators.GroupLogic, fold ...operators.Aggregate) (rendered, error) {
	if out, ok, err := r.snapshotGroup(input, kind, spec, logic, fold); ok || err != nil {
		return out, err
	}
	in, err := r.render(input)
	if err != nil {
		return rendered{}, err
	}
	errs := clip(in.errs)
	arr := r.arrange(in.ok, kind, spec, &errs)
	out := r.stateful(r.name(kind), []*Arranged{arr}, GroupStep(logic, groupEval(spec, fold)))
	return rendered{ok: out.Ok, errs: append(errs, out.Err)}, nil
}

// groupEval is the resumable evaluation of a SQL reduction's aggregates
// (nil for other reductions, which are evaluated whole).
func groupEval(spec KeySpec, aggs []operators.Aggregate) operators.GroupEval {
	if len(aggs) == 0 {
		return nil
	}
	width := -1
	if spec.DisplayKey {
		width = len(spec.Val)
	}
	return operators.AggregateEvalShowingKey(aggs, width)
}

// clip returns s with no spare capacity, so appends never alias a shared
// backing array.
func clip(s []dataflow.Stream) []dataflow.Stream { return s[:len(s):len(s)] }

// let renders a Let's value once and binds its collection (rows and
// errors) to the let's id while the body is rendered, so every Get of the
// id in the body reads the same streams: the value's operators run once
// however many times the body reads it.
func (r *planRenderer) let(l *plan.Let) (rendered, error) {
	if l.Value == nil || l.Body == nil {
		return rendered{}, fmt.Errorf("let: missing input")
	}
	value, err := r.render(l.Value)
	if err != nil {
		return rendered{}, err
	}
	outer, shadowed := r.objects[l.ID]
	r.objects[l.ID] = value
	defer func() {
		if shadowed {
			r.objects[l.ID] = outer
		} else {
			delete(r.objects, l.ID)
		}
	}()
	return r.render(l.Body)
}
