package protocol

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// The expr.Op values and their wire enum are numbered alike; the
// round-trip test pins it.
func opToProto(o expr.Op) computepb.ExprOp { return computepb.ExprOp(o) }

func opFromProto(o computepb.ExprOp) (expr.Op, error) {
	if o <= computepb.ExprOp_EXPR_OP_UNSPECIFIED || o > computepb.ExprOp_EXPR_OP_CAST {
		return expr.OpInvalid, fmt.Errorf("unknown expression op %d", o)
	}
	return expr.Op(o), nil
}

// ExprToProto encodes e.
func ExprToProto(e *expr.Expr) *computepb.Expr {
	p := &computepb.Expr{Op: opToProto(e.Op), Index: uint32(e.Index)}
	if e.Value != (row.Datum{}) {
		p.Value = row.AppendDatum(nil, e.Value)
	}
	if e.Typ != row.TypeInvalid {
		p.Type = e.Typ.String()
	}
	if e.Func != expr.FuncInvalid {
		p.Func = e.Func.String()
	}
	p.Args = exprsToProto(e.Args)
	return p
}

func exprsToProto(es []expr.Expr) []*computepb.Expr {
	if len(es) == 0 {
		return nil
	}
	out := make([]*computepb.Expr, len(es))
	for i := range es {
		out[i] = ExprToProto(&es[i])
	}
	return out
}

// ExprFromProto decodes an expression. It checks the encoding (known op,
// type and function names, a literal of exactly one datum), not types or
// arities: Expr.Type and MFP.Prepare check those, as for any expression.
func ExprFromProto(p *computepb.Expr) (expr.Expr, error) {
	if p == nil {
		return expr.Expr{}, &DecodeError{Err: errMissing}
	}
	var e expr.Expr
	var err error
	if e.Op, err = opFromProto(p.GetOp()); err != nil {
		return expr.Expr{}, fieldErr("op", err)
	}
	e.Index = int(p.GetIndex())
	if v := p.GetValue(); len(v) > 0 {
		if e.Value, err = decodeDatum(v); err != nil {
			return expr.Expr{}, fieldErr("value", err)
		}
	}
	if t := p.GetType(); t != "" {
		if e.Typ, err = row.ParseType(t); err != nil {
			return expr.Expr{}, fieldErr("type", err)
		}
	}
	if f := p.GetFunc(); f != "" {
		if e.Func, err = expr.ParseFunc(f); err != nil {
			return expr.Expr{}, fieldErr("func", err)
		}
	}
	if e.Args, err = exprsFromProto(p.GetArgs()); err != nil {
		return expr.Expr{}, fieldErr("args", err)
	}
	return e, nil
}

// exprsFromProto decodes a list; errors name the element ("[2].func").
func exprsFromProto(ps []*computepb.Expr) ([]expr.Expr, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make([]expr.Expr, len(ps))
	for i, p := range ps {
		e, err := ExprFromProto(p)
		if err != nil {
			return nil, indexErr("", i, err)
		}
		out[i] = e
	}
	return out, nil
}

// decodeDatum decodes the row encoding of exactly one datum.
func decodeDatum(b []byte) (row.Datum, error) {
	ds, err := row.Row(b).Unpack()
	if err != nil {
		return row.Datum{}, fmt.Errorf("literal: %w", err)
	}
	if len(ds) != 1 {
		return row.Datum{}, fmt.Errorf("literal: %d datums, want 1", len(ds))
	}
	return ds[0], nil
}

// MFPToProto encodes m.
func MFPToProto(m *expr.MFP) *computepb.MapFilterProject {
	return &computepb.MapFilterProject{
		Expressions: exprsToProto(m.Expressions),
		Predicates:  exprsToProto(m.Predicates),
		Projection:  intsToProto(m.Projection),
	}
}

// MFPFromProto decodes an MFP. Column references are checked by
// MFP.Prepare (or OutputTypes) against the input they apply to.
func MFPFromProto(p *computepb.MapFilterProject) (expr.MFP, error) {
	if p == nil {
		return expr.MFP{}, &DecodeError{Err: errMissing}
	}
	var m expr.MFP
	var err error
	if m.Expressions, err = exprsFromProto(p.GetExpressions()); err != nil {
		return expr.MFP{}, fieldErr("expressions", err)
	}
	if m.Predicates, err = exprsFromProto(p.GetPredicates()); err != nil {
		return expr.MFP{}, fieldErr("predicates", err)
	}
	m.Projection = intsFromProto(p.GetProjection())
	return m, nil
}

// TableCallToProto encodes c.
func TableCallToProto(c *expr.TableCall) *computepb.TableCall {
	return &computepb.TableCall{Func: string(c.Func), Args: exprsToProto(c.Args)}
}

// TableCallFromProto decodes a table function call (the plan checks the
// function's name).
func TableCallFromProto(p *computepb.TableCall) (expr.TableCall, error) {
	if p == nil {
		return expr.TableCall{}, &DecodeError{Err: errMissing}
	}
	args, err := exprsFromProto(p.GetArgs())
	if err != nil {
		return expr.TableCall{}, fieldErr("args", err)
	}
	return expr.TableCall{Func: expr.TableFunc(p.GetFunc()), Args: args}, nil
}

// RelationDescToProto encodes d.
func RelationDescToProto(d *row.RelationDesc) *computepb.RelationDesc {
	p := &computepb.RelationDesc{Names: d.Names}
	if len(d.Types) > 0 {
		p.Types = make([]*computepb.ColumnType, len(d.Types))
		for i, t := range d.Types {
			p.Types[i] = &computepb.ColumnType{Type: t.Type.String(), Nullable: t.Nullable}
		}
	}
	return p
}

// RelationDescFromProto decodes a relation description (Validate checks
// it further).
func RelationDescFromProto(p *computepb.RelationDesc) (row.RelationDesc, error) {
	if p == nil {
		return row.RelationDesc{}, &DecodeError{Err: errMissing}
	}
	d := row.RelationDesc{Names: p.GetNames()}
	if len(p.GetTypes()) > 0 {
		d.Types = make([]row.ColumnType, len(p.GetTypes()))
	}
	for i, t := range p.GetTypes() {
		if t == nil {
			return row.RelationDesc{}, indexErr("types", i, errMissing)
		}
		typ, err := row.ParseType(t.GetType())
		if err != nil {
			return row.RelationDesc{}, indexErr("types", i, err)
		}
		d.Types[i] = row.ColumnType{Type: typ, Nullable: t.GetNullable()}
	}
	return d, nil
}

func intsToProto(is []int) []uint32 {
	if is == nil {
		return nil
	}
	out := make([]uint32, len(is))
	for i, c := range is {
		out[i] = uint32(c)
	}
	return out
}

func intsFromProto(ps []uint32) []int {
	if len(ps) == 0 {
		return nil
	}
	out := make([]int, len(ps))
	for i, c := range ps {
		out[i] = int(c)
	}
	return out
}
