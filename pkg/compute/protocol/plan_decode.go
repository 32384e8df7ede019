package protocol

import (
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// PlanFromProto decodes a plan tree. It checks the encoding (every node
// has a kind, every required child and id is present, literals and rows
// decode); plan.Desc and DataflowDescription.Validate check the rest.
func PlanFromProto(p *computepb.Plan) (plan.Plan, error) {
	if p == nil {
		return plan.Plan{}, &DecodeError{Err: errMissing}
	}
	switch k := p.GetKind().(type) {
	case *computepb.Plan_Get:
		id, err := GlobalIDFromProto(k.Get)
		if err != nil {
			return plan.Plan{}, fieldErr("get", err)
		}
		return plan.NewGet(id), nil
	case *computepb.Plan_Constant:
		c, err := constantFromProto(k.Constant)
		return plan.Plan{Constant: c}, wrapField("constant", err)
	case *computepb.Plan_Mfp:
		m, err := mfpPlanFromProto(k.Mfp)
		return plan.Plan{Mfp: m}, wrapField("mfp", err)
	case *computepb.Plan_Join:
		j, err := joinFromProto(k.Join)
		return plan.Plan{Join: j}, wrapField("join", err)
	case *computepb.Plan_Reduce:
		r, err := reduceFromProto(k.Reduce)
		return plan.Plan{Reduce: r}, wrapField("reduce", err)
	case *computepb.Plan_Distinct:
		in, err := childFromProto(k.Distinct)
		return plan.Plan{Distinct: &plan.Distinct{Input: in}}, wrapField("distinct", err)
	case *computepb.Plan_Threshold:
		in, err := childFromProto(k.Threshold)
		return plan.Plan{Threshold: &plan.Threshold{Input: in}}, wrapField("threshold", err)
	case *computepb.Plan_Negate:
		in, err := childFromProto(k.Negate)
		return plan.Plan{Negate: &plan.Negate{Input: in}}, wrapField("negate", err)
	case *computepb.Plan_Union:
		u, err := unionFromProto(k.Union)
		return plan.Plan{Union: u}, wrapField("union", err)
	case *computepb.Plan_TopK:
		t, err := topKFromProto(k.TopK)
		return plan.Plan{TopK: t}, wrapField("top_k", err)
	case *computepb.Plan_ArrangeBy:
		a, err := arrangeByFromProto(k.ArrangeBy)
		return plan.Plan{ArrangeBy: a}, wrapField("arrange_by", err)
	case *computepb.Plan_Window:
		w, err := windowFromProto(k.Window)
		return plan.Plan{Window: w}, wrapField("window", err)
	case *computepb.Plan_Recursive:
		r, err := recursiveFromProto(k.Recursive)
		return plan.Plan{Recursive: r}, wrapField("recursive", err)
	case *computepb.Plan_Let:
		l, err := letFromProto(k.Let)
		return plan.Plan{Let: l}, wrapField("let", err)
	case *computepb.Plan_FlatMap:
		f, err := flatMapFromProto(k.FlatMap)
		return plan.Plan{FlatMap: f}, wrapField("flat_map", err)
	case *computepb.Plan_TemporalFilter:
		t, err := temporalFromProto(k.TemporalFilter)
		return plan.Plan{TemporalFilter: t}, wrapField("temporal_filter", err)
	}
	return plan.Plan{}, &DecodeError{Err: errors.New("plan node has no kind")}
}

// wrapField is fieldErr that passes nil through; a decoder that fails
// returns a zero node with it, which the caller discards.
func wrapField(field string, err error) error {
	if err == nil {
		return nil
	}
	return fieldErr(field, err)
}

// childFromProto decodes a required input.
func childFromProto(p *computepb.Plan) (*plan.Plan, error) {
	in, err := PlanFromProto(p)
	if err != nil {
		return nil, err
	}
	return &in, nil
}

func inputFromProto(p *computepb.Plan) (*plan.Plan, error) {
	in, err := childFromProto(p)
	return in, wrapField("input", err)
}

func constantFromProto(p *computepb.ConstantPlan) (*plan.Constant, error) {
	desc, err := RelationDescFromProto(p.GetDesc())
	if err != nil {
		return nil, fieldErr("desc", err)
	}
	c := &plan.Constant{Desc: desc}
	for i, r := range p.GetRows() {
		ds, err := row.Row(r.GetRow()).Unpack()
		if err != nil {
			return nil, indexErr("rows", i, err)
		}
		c.Rows = append(c.Rows, plan.ConstantRow{Datums: ds, Diff: r.GetDiff()})
	}
	return c, nil
}

func mfpPlanFromProto(p *computepb.MfpPlan) (*plan.Mfp, error) {
	in, err := inputFromProto(p.GetInput())
	if err != nil {
		return nil, err
	}
	m, err := MFPFromProto(p.GetMfp())
	if err != nil {
		return nil, fieldErr("mfp", err)
	}
	return &plan.Mfp{Input: in, MFP: m}, nil
}

func joinFromProto(p *computepb.JoinPlan) (*plan.Join, error) {
	left, err := childFromProto(p.GetLeft())
	if err != nil {
		return nil, fieldErr("left", err)
	}
	right, err := childFromProto(p.GetRight())
	if err != nil {
		return nil, fieldErr("right", err)
	}
	j := &plan.Join{Left: left, Right: right}
	if j.LeftKey, err = exprsFromProto(p.GetLeftKey()); err != nil {
		return nil, fieldErr("left_key", err)
	}
	if j.RightKey, err = exprsFromProto(p.GetRightKey()); err != nil {
		return nil, fieldErr("right_key", err)
	}
	return j, nil
}

func reduceFromProto(p *computepb.ReducePlan) (*plan.Reduce, error) {
	in, err := inputFromProto(p.GetInput())
	if err != nil {
		return nil, err
	}
	r := &plan.Reduce{Input: in}
	if r.GroupKey, err = exprsFromProto(p.GetGroupKey()); err != nil {
		return nil, fieldErr("group_key", err)
	}
	for i, a := range p.GetAggregates() {
		agg, err := aggregateFromProto(a)
		if err != nil {
			return nil, indexErr("aggregates", i, err)
		}
		r.Aggregates = append(r.Aggregates, agg)
	}
	return r, nil
}

func aggregateFromProto(p *computepb.Aggregate) (plan.Aggregate, error) {
	if p == nil {
		return plan.Aggregate{}, &DecodeError{Err: errMissing}
	}
	a := plan.Aggregate{Func: plan.AggregateFunc(p.GetFunc()), Distinct: p.GetDistinct()}
	var err error
	if p.GetExpr() != nil {
		if a.Expr, err = ExprFromProto(p.GetExpr()); err != nil {
			return plan.Aggregate{}, fieldErr("expr", err)
		}
	}
	if p.GetSep() != nil {
		sep, err := ExprFromProto(p.GetSep())
		if err != nil {
			return plan.Aggregate{}, fieldErr("sep", err)
		}
		a.Sep = &sep
	}
	for i, o := range p.GetOrderBy() {
		e, err := ExprFromProto(o.GetExpr())
		if err != nil {
			return plan.Aggregate{}, indexErr("order_by", i, fieldErr("expr", err))
		}
		a.OrderBy = append(a.OrderBy, plan.AggOrder{Expr: e, Desc: o.GetDesc(), NullsLast: o.GetNullsLast()})
	}
	return a, nil
}

func unionFromProto(p *computepb.UnionPlan) (*plan.Union, error) {
	u := &plan.Union{}
	for i, in := range p.GetInputs() {
		q, err := PlanFromProto(in)
		if err != nil {
			return nil, indexErr("inputs", i, err)
		}
		u.Inputs = append(u.Inputs, q)
	}
	return u, nil
}

func topKFromProto(p *computepb.TopKPlan) (*plan.TopK, error) {
	in, err := inputFromProto(p.GetInput())
	if err != nil {
		return nil, err
	}
	t := &plan.TopK{Input: in, GroupKey: intsFromProto(p.GetGroupKey()), Offset: p.GetOffset()}
	if t.Order, err = ordersFromProto(p.GetOrder()); err != nil {
		return nil, fieldErr("order", err)
	}
	if p.Limit != nil {
		l := p.GetLimit()
		t.Limit = &l
	}
	return t, nil
}

func arrangeByFromProto(p *computepb.ArrangeByPlan) (*plan.ArrangeBy, error) {
	in, err := inputFromProto(p.GetInput())
	if err != nil {
		return nil, err
	}
	a := &plan.ArrangeBy{Input: in}
	for i, k := range p.GetKeys() {
		key, err := exprsFromProto(k.GetExprs())
		if err != nil {
			return nil, indexErr("keys", i, err)
		}
		a.Keys = append(a.Keys, key)
	}
	return a, nil
}

func windowFromProto(p *computepb.WindowPlan) (*plan.Window, error) {
	in, err := inputFromProto(p.GetInput())
	if err != nil {
		return nil, err
	}
	w := &plan.Window{Input: in, PartitionBy: intsFromProto(p.GetPartitionBy())}
	if w.OrderBy, err = ordersFromProto(p.GetOrderBy()); err != nil {
		return nil, fieldErr("order_by", err)
	}
	for i, f := range p.GetFuncs() {
		fr := f.GetFrame()
		start, err := frameBoundFromProto(fr.GetStart())
		if err != nil {
			return nil, fieldErr(fmt.Sprintf("funcs[%d].frame.start", i), err)
		}
		end, err := frameBoundFromProto(fr.GetEnd())
		if err != nil {
			return nil, fieldErr(fmt.Sprintf("funcs[%d].frame.end", i), err)
		}
		w.Funcs = append(w.Funcs, plan.WindowFunc{
			Func: plan.WindowFuncKind(f.GetFunc()), Agg: plan.AggregateFunc(f.GetAgg()),
			Arg: int(f.GetArg()), Default: int(f.GetDefault()), N: f.GetN(),
			Frame: plan.WindowFrame{
				Rows: fr.GetRows(), Groups: fr.GetGroups(), Exclude: plan.FrameExclude(fr.GetExclude()),
				Start: start, End: end,
			},
		})
	}
	return w, nil
}

func frameBoundFromProto(p *computepb.FrameBound) (plan.FrameBound, error) {
	b := plan.FrameBound{Kind: plan.BoundKind(p.GetKind()), Offset: p.GetOffset()}
	if p.GetRangeTarget() != nil {
		e, err := ExprFromProto(p.GetRangeTarget())
		if err != nil {
			return b, fieldErr("range_target", err)
		}
		b.RangeTarget = &e
	}
	return b, nil
}

func recursiveFromProto(p *computepb.RecursivePlan) (*plan.Recursive, error) {
	id, err := GlobalIDFromProto(p.GetId())
	if err != nil {
		return nil, fieldErr("id", err)
	}
	base, err := childFromProto(p.GetBase())
	if err != nil {
		return nil, fieldErr("base", err)
	}
	step, err := childFromProto(p.GetStep())
	if err != nil {
		return nil, fieldErr("step", err)
	}
	return &plan.Recursive{ID: id, Name: p.GetName(), Base: base, Step: step, Distinct: p.GetDistinct(), MaxIterations: p.GetMaxIterations()}, nil
}

func letFromProto(p *computepb.LetPlan) (*plan.Let, error) {
	id, err := GlobalIDFromProto(p.GetId())
	if err != nil {
		return nil, fieldErr("id", err)
	}
	value, err := childFromProto(p.GetValue())
	if err != nil {
		return nil, fieldErr("value", err)
	}
	body, err := childFromProto(p.GetBody())
	if err != nil {
		return nil, fieldErr("body", err)
	}
	return &plan.Let{ID: id, Value: value, Body: body}, nil
}

func flatMapFromProto(p *computepb.FlatMapPlan) (*plan.FlatMap, error) {
	in, err := inputFromProto(p.GetInput())
	if err != nil {
		return nil, err
	}
	call, err := TableCallFromProto(p.GetCall())
	if err != nil {
		return nil, fieldErr("call", err)
	}
	return &plan.FlatMap{Input: in, Call: call, Ordinality: p.GetOrdinality()}, nil
}

func temporalFromProto(p *computepb.TemporalFilterPlan) (*plan.TemporalFilter, error) {
	in, err := inputFromProto(p.GetInput())
	if err != nil {
		return nil, err
	}
	t := &plan.TemporalFilter{Input: in}
	for i, b := range p.GetBounds() {
		e, err := ExprFromProto(b.GetExpr())
		if err != nil {
			return nil, indexErr("bounds", i, fieldErr("expr", err))
		}
		t.Bounds = append(t.Bounds, plan.TemporalBound{Expr: e, Op: plan.TemporalOp(b.GetOp())})
	}
	return t, nil
}
