package plan

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Recursive is WITH RECURSIVE's fixed point, iterated as PostgreSQL does:
// the result starts as Base and the working table as Base (its distinct
// rows when Distinct); each round evaluates Step with the working table
// bound to ID (Get(ID) inside Step reads it), adds the round's rows to the
// result (with Distinct, only rows not in the result yet, once) and makes
// them the next working table; the result is final when a round adds
// nothing. Distinct is UNION, otherwise UNION ALL.
//
// ID is a local id (Local(n)) that only Step may read; its description is
// Base's with every column nullable, and Step must produce Base's column
// types. When the working table is still not empty after MaxIterations
// evaluations of Step, the node's output is no rows and one error,
// LimitError (SQLSTATE 54000). An error evaluating Step itself (the parts
// of Step that read ID) likewise replaces the whole output by one error:
// the smallest error row of the first round that had one. Errors of Base
// and of Step's subtrees that do not read ID pass through as every node
// passes its inputs' errors. A negative multiplicity in Base or in a
// round's result is error XX000 ("recursive: negative multiplicity in
// input").
type Recursive struct {
	ID            GlobalID `json:"id"`
	Name          string   `json:"name"`
	Base          *Plan    `json:"base"`
	Step          *Plan    `json:"step"`
	Distinct      bool     `json:"distinct,omitempty"`
	MaxIterations int64    `json:"max_iterations"`
}

// NewRecursive returns a Recursive node.
func NewRecursive(id GlobalID, name string, base, step Plan, distinct bool, maxIterations int64) Plan {
	return Plan{Recursive: &Recursive{ID: id, Name: name, Base: &base, Step: &step, Distinct: distinct, MaxIterations: maxIterations}}
}

// LimitError returns the SQLSTATE and message of the error a Recursive
// node reports when it exceeds MaxIterations.
func (r *Recursive) LimitError() (code, message string) {
	return "54000", fmt.Sprintf("recursive query %q did not reach a fixed point within %d iterations", r.Name, r.MaxIterations)
}

// BindingDesc returns the description of the working table Step reads
// through Get(ID): Base's columns, all nullable.
func BindingDesc(base row.RelationDesc) row.RelationDesc {
	out := row.RelationDesc{Names: append([]string(nil), base.Names...), Types: append([]row.ColumnType(nil), base.Types...)}
	for i := range out.Types {
		out.Types[i].Nullable = true
	}
	return out
}

func (r *Recursive) desc(env Env) (row.RelationDesc, error) {
	if r.ID.Kind != KindLocal {
		return row.RelationDesc{}, fmt.Errorf("recursive: binding %s is not a local id", r.ID)
	}
	if r.MaxIterations <= 0 {
		return row.RelationDesc{}, fmt.Errorf("recursive: iteration limit %d not positive", r.MaxIterations)
	}
	base, err := inputDesc("recursive.base", r.Base, env)
	if err != nil {
		return row.RelationDesc{}, err
	}
	if _, shadow := env(r.ID); shadow {
		return row.RelationDesc{}, fmt.Errorf("recursive: binding %s already bound", r.ID)
	}
	binding := BindingDesc(base)
	inner := func(id GlobalID) (row.RelationDesc, bool) {
		if id == r.ID {
			return binding, true
		}
		return env(id)
	}
	step, err := inputDesc("recursive.step", r.Step, inner)
	if err != nil {
		return row.RelationDesc{}, err
	}
	if step.Arity() != base.Arity() {
		return row.RelationDesc{}, fmt.Errorf("recursive: step has %d columns, base has %d", step.Arity(), base.Arity())
	}
	out := row.RelationDesc{Names: append([]string(nil), base.Names...), Types: append([]row.ColumnType(nil), base.Types...)}
	for c := range step.Types {
		if step.Types[c].Type != base.Types[c].Type {
			return row.RelationDesc{}, fmt.Errorf("recursive: step column %d has type %s, base has type %s", c, step.Types[c].Type, base.Types[c].Type)
		}
		out.Types[c].Nullable = out.Types[c].Nullable || step.Types[c].Nullable
	}
	return out, nil
}

// Reads reports whether p reads id with a Get (at any depth).
func (p Plan) Reads(id GlobalID) bool {
	if p.Get != nil {
		return p.Get.ID == id
	}
	for _, in := range p.Inputs() {
		if in != nil && in.Reads(id) {
			return true
		}
	}
	return false
}

// Incremental reports whether the node is maintained incrementally rather
// than re-derived from scratch on every change: a UNION (Distinct)
// recursion whose Step is linear and monotone in the binding, so that
// every row Step derives comes from exactly one binding row. Step is
// linear when it is Get(ID) itself, or a Mfp or ArrangeBy over a linear
// plan, a Union of linear plans, or a Join of a linear plan with a plan
// that does not read ID. A Reduce, Distinct, Threshold, Negate, TopK,
// Window, FlatMap or TemporalFilter over the binding, a union arm or join
// that does not read it alongside one that does, or a join reading it on
// both sides is not: such recursions (and every UNION ALL recursion,
// whose result counts derivations) are re-derived from scratch.
func (r *Recursive) Incremental() bool {
	return r.Distinct && r.Step != nil && linearIn(*r.Step, r.ID)
}

func linearIn(p Plan, id GlobalID) bool {
	switch {
	case p.Get != nil:
		return p.Get.ID == id
	case p.Mfp != nil:
		return p.Mfp.Input != nil && linearIn(*p.Mfp.Input, id)
	case p.ArrangeBy != nil:
		return p.ArrangeBy.Input != nil && linearIn(*p.ArrangeBy.Input, id)
	case p.Union != nil:
		for _, in := range p.Union.Inputs {
			if !linearIn(in, id) {
				return false
			}
		}
		return len(p.Union.Inputs) > 0
	case p.Join != nil:
		l, r := p.Join.Left, p.Join.Right
		if l == nil || r == nil {
			return false
		}
		lr, rr := l.Reads(id), r.Reads(id)
		return (lr && !rr && linearIn(*l, id)) || (rr && !lr && linearIn(*r, id))
	}
	return false
}
