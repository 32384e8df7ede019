package protocol

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// PlanToProto encodes a plan tree. A malformed node (no kind or several
// set) is an error: the protocol never carries one.
func PlanToProto(p *plan.Plan) (*computepb.Plan, error) {
	if p == nil {
		return nil, fmt.Errorf("encode plan: nil node")
	}
	out := &computepb.Plan{}
	var err error
	switch n := p.Node().(type) {
	case *plan.Get:
		out.Kind = &computepb.Plan_Get{Get: GlobalIDToProto(n.ID)}
	case *plan.Constant:
		c := &computepb.ConstantPlan{Desc: RelationDescToProto(&n.Desc)}
		for _, r := range n.Rows {
			c.Rows = append(c.Rows, &computepb.ConstantRow{Row: row.AppendDatums(nil, r.Datums...), Diff: r.Diff})
		}
		out.Kind = &computepb.Plan_Constant{Constant: c}
	case *plan.Mfp:
		m := &computepb.MfpPlan{Mfp: MFPToProto(&n.MFP)}
		m.Input, err = PlanToProto(n.Input)
		out.Kind = &computepb.Plan_Mfp{Mfp: m}
	case *plan.Join:
		j := &computepb.JoinPlan{LeftKey: exprsToProto(n.LeftKey), RightKey: exprsToProto(n.RightKey)}
		if j.Left, err = PlanToProto(n.Left); err == nil {
			j.Right, err = PlanToProto(n.Right)
		}
		out.Kind = &computepb.Plan_Join{Join: j}
	case *plan.Reduce:
		r := &computepb.ReducePlan{GroupKey: exprsToProto(n.GroupKey)}
		for i := range n.Aggregates {
			r.Aggregates = append(r.Aggregates, aggregateToProto(&n.Aggregates[i]))
		}
		r.Input, err = PlanToProto(n.Input)
		out.Kind = &computepb.Plan_Reduce{Reduce: r}
	case *plan.Distinct:
		var in *computepb.Plan
		in, err = PlanToProto(n.Input)
		out.Kind = &computepb.Plan_Distinct{Distinct: in}
	case *plan.Threshold:
		var in *computepb.Plan
		in, err = PlanToProto(n.Input)
		out.Kind = &computepb.Plan_Threshold{Threshold: in}
	case *plan.Negate:
		var in *computepb.Plan
		in, err = PlanToProto(n.Input)
		out.Kind = &computepb.Plan_Negate{Negate: in}
	case *plan.Union:
		u := &computepb.UnionPlan{Inputs: make([]*computepb.Plan, len(n.Inputs))}
		for i := range n.Inputs {
			if u.Inputs[i], err = PlanToProto(&n.Inputs[i]); err != nil {
				break
			}
		}
		out.Kind = &computepb.Plan_Union{Union: u}
	case *plan.TopK:
		t := &computepb.TopKPlan{GroupKey: intsToProto(n.GroupKey), Order: ordersToProto(n.Order), Limit: n.Limit, Offset: n.Offset}
		t.Input, err = PlanToProto(n.Input)
		out.Kind = &computepb.Plan_TopK{TopK: t}
	case *plan.ArrangeBy:
		a := &computepb.ArrangeByPlan{}
		for _, k := range n.Keys {
			a.Keys = append(a.Keys, &computepb.ExprList{Exprs: exprsToProto(k)})
		}
		a.Input, err = PlanToProto(n.Input)
		out.Kind = &computepb.Plan_ArrangeBy{ArrangeBy: a}
	case *plan.Window:
		var w *computepb.WindowPlan
		w, err = windowToProto(n)
		out.Kind = &computepb.Plan_Window{Window: w}
	case *plan.Recursive:
		r := &computepb.RecursivePlan{Id: GlobalIDToProto(n.ID), Name: n.Name, Distinct: n.Distinct, MaxIterations: n.MaxIterations}
		if r.Base, err = PlanToProto(n.Base); err == nil {
			r.Step, err = PlanToProto(n.Step)
		}
		out.Kind = &computepb.Plan_Recursive{Recursive: r}
	case *plan.Let:
		l := &computepb.LetPlan{Id: GlobalIDToProto(n.ID)}
		if l.Value, err = PlanToProto(n.Value); err == nil {
			l.Body, err = PlanToProto(n.Body)
		}
		out.Kind = &computepb.Plan_Let{Let: l}
	case *plan.FlatMap:
		f := &computepb.FlatMapPlan{Call: TableCallToProto(&n.Call), Ordinality: n.Ordinality}
		f.Input, err = PlanToProto(n.Input)
		out.Kind = &computepb.Plan_FlatMap{FlatMap: f}
	case *plan.TemporalFilter:
		t := &computepb.TemporalFilterPlan{}
		for i := range n.Bounds {
			t.Bounds = append(t.Bounds, &computepb.TemporalBound{Expr: ExprToProto(&n.Bounds[i].Expr), Op: string(n.Bounds[i].Op)})
		}
		t.Input, err = PlanToProto(n.Input)
		out.Kind = &computepb.Plan_TemporalFilter{TemporalFilter: t}
	default:
		return nil, fmt.Errorf("encode plan: %s", p)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func aggregateToProto(a *plan.Aggregate) *computepb.Aggregate {
	p := &computepb.Aggregate{Func: string(a.Func), Distinct: a.Distinct}
	if a.Expr.Op != expr.OpInvalid {
		p.Expr = ExprToProto(&a.Expr)
	}
	if a.Sep != nil {
		p.Sep = ExprToProto(a.Sep)
	}
	for i := range a.OrderBy {
		o := &a.OrderBy[i]
		p.OrderBy = append(p.OrderBy, &computepb.AggOrder{Expr: ExprToProto(&o.Expr), Desc: o.Desc, NullsLast: o.NullsLast})
	}
	return p
}

func windowToProto(n *plan.Window) (*computepb.WindowPlan, error) {
	w := &computepb.WindowPlan{PartitionBy: intsToProto(n.PartitionBy), OrderBy: ordersToProto(n.OrderBy)}
	for _, f := range n.Funcs {
		w.Funcs = append(w.Funcs, &computepb.WindowFunc{
			Func: string(f.Func), Agg: string(f.Agg), Arg: int64(f.Arg), Default: int64(f.Default), N: f.N,
			Frame: &computepb.WindowFrame{
				Rows: f.Frame.Rows, Groups: f.Frame.Groups, Exclude: string(f.Frame.Exclude),
				Start: frameBoundToProto(f.Frame.Start),
				End:   frameBoundToProto(f.Frame.End),
			},
		})
	}
	var err error
	w.Input, err = PlanToProto(n.Input)
	return w, err
}

func frameBoundToProto(b plan.FrameBound) *computepb.FrameBound {
	p := &computepb.FrameBound{Kind: string(b.Kind), Offset: b.Offset}
	if b.RangeTarget != nil {
		p.RangeTarget = ExprToProto(b.RangeTarget)
	}
	return p
}

func ordersToProto(os []plan.ColumnOrder) []*computepb.ColumnOrder {
	if len(os) == 0 {
		return nil
	}
	out := make([]*computepb.ColumnOrder, len(os))
	for i, o := range os {
		out[i] = &computepb.ColumnOrder{Column: uint32(o.Column), Desc: o.Desc, NullsLast: o.NullsLast}
	}
	return out
}

func ordersFromProto(ps []*computepb.ColumnOrder) ([]plan.ColumnOrder, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make([]plan.ColumnOrder, len(ps))
	for i, o := range ps {
		if o == nil {
			return nil, indexErr("", i, errMissing)
		}
		out[i] = plan.ColumnOrder{Column: int(o.GetColumn()), Desc: o.GetDesc(), NullsLast: o.GetNullsLast()}
	}
	return out, nil
}
