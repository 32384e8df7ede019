package render

import (
	"fmt"

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
}

func (r *planRenderer) name(kind string) string {
	r.n++
	return fmt.Sprintf("%s#%d", kind, r.n)
}

func (r *planRenderer) render(p *plan.Plan) (rendered, error) {
	switch {
	case p.Get != nil:
		c, ok := r.objects[p.Get.ID]
		if !ok {
			return rendered{}, fmt.Errorf("get %s: not imported or built before", p.Get.ID)
		}
		return c, nil
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
	case p.Reduce != nil:
		return r.reduce(p.Reduce)
	case p.Distinct != nil:
		return r.group(p.Distinct.Input, "distinct", KeySpec{RowKey: true, EmptyVal: true}, operators.DistinctLogic())
	case p.Threshold != nil:
		return r.group(p.Threshold.Input, "threshold", KeySpec{RowKey: true, EmptyVal: true}, operators.ThresholdLogic())
	case p.TopK != nil:
		t := p.TopK
		spec := operators.TopKSpec{Limit: -1, Offset: t.Offset}
		if t.Limit != nil {
			spec.Limit = *t.Limit
		}
		for _, o := range t.Order {
			spec.Order = append(spec.Order, operators.OrderColumn{Column: o.Column, Desc: o.Desc, NullsFirst: !o.NullsLast})
		}
		key := make([]expr.Expr, len(t.GroupKey))
		for i, c := range t.GroupKey {
			key[i] = expr.Column(c)
		}
		return r.group(t.Input, "topk", KeySpec{Key: key}, operators.TopKLogic(spec))
	case p.Window != nil:
		return r.window(p.Window)
	case p.FlatMap != nil:
		in, err := r.render(p.FlatMap.Input)
		if err != nil {
			return rendered{}, err
		}
		ok, errs := FlatMap(r.b, r.name("flat_map"), in.ok, p.FlatMap)
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
	return Arrange(r.b, name, keyed, r.fail)
}

func (r *planRenderer) join(j *plan.Join) (rendered, error) {
	l, err := r.render(j.Left)
	if err != nil {
		return rendered{}, err
	}
	rt, err := r.render(j.Right)
	if err != nil {
		return rendered{}, err
	}
	errs := append(clip(l.errs), rt.errs...)
	la := r.arrange(l.ok, "join-left", KeySpec{Key: j.LeftKey}, &errs)
	ra := r.arrange(rt.ok, "join-right", KeySpec{Key: j.RightKey}, &errs)
	out := Stateful(r.b, r.name("join"), []*Arranged{la, ra}, JoinStep, r.fail)
	return rendered{ok: out.Ok, errs: append(errs, out.Err)}, nil
}

var aggFuncs = map[plan.AggregateFunc]operators.AggFunc{
	plan.AggCount:     operators.AggCount,
	plan.AggCountStar: operators.AggCountStar,
	plan.AggSum:       operators.AggSum,
	plan.AggMin:       operators.AggMin,
	plan.AggMax:       operators.AggMax,
	plan.AggAvg:       operators.AggAvg,

	plan.AggJSONAgg:       operators.AggJSONAgg,
	plan.AggJSONObjectAgg: operators.AggJSONObjectAgg,
}

func (r *planRenderer) reduce(red *plan.Reduce) (rendered, error) {
	var aggs []operators.Aggregate
	var vals []expr.Expr
	for i, a := range red.Aggregates {
		f, ok := aggFuncs[a.Func]
		if !ok {
			return rendered{}, fmt.Errorf("reduce: unknown aggregate %q", a.Func)
		}
		aggs = append(aggs, operators.Aggregate{Func: f, Column: i, Distinct: a.Distinct})
		if a.Func == plan.AggCountStar {
			// count(*) reads no argument; a NULL keeps columns aligned.
			vals = append(vals, expr.Literal(row.Null()))
		} else {
			vals = append(vals, a.Expr)
		}
	}
	if vals == nil {
		vals = []expr.Expr{}
	}
	return r.group(red.Input, "reduce", KeySpec{Key: red.GroupKey, Val: vals}, operators.AggregateLogic(aggs))
}

// group renders a reduction-shaped operator: key the input, arrange it, run
// the group logic.
func (r *planRenderer) group(input *plan.Plan, kind string, spec KeySpec, logic operators.GroupLogic) (rendered, error) {
	in, err := r.render(input)
	if err != nil {
		return rendered{}, err
	}
	errs := clip(in.errs)
	arr := r.arrange(in.ok, kind, spec, &errs)
	out := Stateful(r.b, r.name(kind), []*Arranged{arr}, GroupStep(logic), r.fail)
	return rendered{ok: out.Ok, errs: append(errs, out.Err)}, nil
}

// clip returns s with no spare capacity, so appends never alias a shared
// backing array.
func clip(s []dataflow.Stream) []dataflow.Stream { return s[:len(s):len(s)] }
