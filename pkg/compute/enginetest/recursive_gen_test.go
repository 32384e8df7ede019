package enginetest

import (
	"fmt"
	"maps"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// recursive generates a Recursive node: a random base, and a step that
// reads the working table (alone, joined with a random plan over the
// sources, or inside any random plan over the sources and the working
// table), mapped and filtered back to the base's column types. Values
// from tiny domains make UNION converge; arithmetic and UNION ALL often
// do not, and a small random iteration limit makes both outcomes common.
func (g *planGen) recursive(depth int, label string) plan.Plan {
	base := g.plan(depth-1, label+"_base")
	bd := g.desc(base)
	if g.locals == nil {
		g.locals = new(int)
	}
	*g.locals++
	id := plan.Local(uint64(*g.locals))
	inner := &planGen{t: g.t, sources: maps.Clone(g.sources), ids: append([]plan.GlobalID{id}, g.ids...), locals: g.locals, inStep: true}
	inner.sources[id] = plan.BindingDesc(bd)
	var step plan.Plan
	switch rapid.IntRange(0, 2).Draw(g.t, label+"_shape") {
	case 0:
		step = plan.NewGet(id)
	case 1:
		other := g.plan(depth-1, label+"_other")
		od := g.desc(other)
		var lk, rk []expr.Expr
		if len(columnsOf(bd, row.TypeInt64)) > 0 && len(columnsOf(od, row.TypeInt64)) > 0 {
			lk = []expr.Expr{expr.Column(rapid.SampledFrom(columnsOf(bd, row.TypeInt64)).Draw(g.t, label+"_lk"))}
			rk = []expr.Expr{g.intExpr(od, 1, label+"_rk")}
		}
		if rapid.Bool().Draw(g.t, label+"_swap") {
			step = plan.NewJoin(other, plan.NewGet(id), rk, lk)
		} else {
			step = plan.NewJoin(plan.NewGet(id), other, lk, rk)
		}
	default:
		step = inner.plan(depth-1, label+"_step")
	}
	step = inner.conform(step, bd, label+"_conform")
	return plan.NewRecursive(id, "r", base, step, rapid.Bool().Draw(g.t, label+"_distinct"),
		int64(rapid.IntRange(1, 6).Draw(g.t, label+"_max")))
}

// conform maps p's rows to rows of want's column types: each column is one
// of p's columns of its type (for integers sometimes plus one), or a typed
// NULL; sometimes a predicate filters first.
func (g *planGen) conform(p plan.Plan, want row.RelationDesc, label string) plan.Plan {
	d := g.desc(p)
	m := expr.Identity(d.Arity())
	if rapid.Bool().Draw(g.t, label+"_filter") {
		m = m.Filter(g.predicate(d, 1, label+"_pred"))
	}
	var proj []int
	for c, ct := range want.Types {
		lab := fmt.Sprintf("%s_col%d", label, c)
		cands := columnsOf(d, ct.Type)
		var e expr.Expr
		switch {
		case len(cands) == 0:
			e = expr.Cast(expr.Literal(row.Null()), ct.Type)
		case ct.Type == row.TypeInt64 && rapid.IntRange(0, 2).Draw(g.t, lab+"_inc") == 0:
			e = expr.Add(expr.Column(rapid.SampledFrom(cands).Draw(g.t, lab)), expr.Literal(row.Int64(1)))
		default:
			proj = append(proj, rapid.SampledFrom(cands).Draw(g.t, lab))
			continue
		}
		m = m.Map(e)
		proj = append(proj, d.Arity()+len(m.Expressions)-1)
	}
	return plan.NewMfp(p, m.Project(proj...))
}

// let generates a Let node: a random value bound to a fresh local id and
// a body reading it twice (a union or a join of two reads), or a random
// plan over the sources and the binding that reads it any number of
// times, zero included.
func (g *planGen) let(depth int, label string) plan.Plan {
	value := g.plan(depth-1, label+"_value")
	if g.locals == nil {
		g.locals = new(int)
	}
	*g.locals++
	id := plan.Local(uint64(*g.locals))
	inner := &planGen{t: g.t, sources: maps.Clone(g.sources), ids: append([]plan.GlobalID{id}, g.ids...), locals: g.locals, inStep: g.inStep}
	inner.sources[id] = g.desc(value)
	var body plan.Plan
	switch rapid.IntRange(0, 2).Draw(g.t, label+"_shape") {
	case 0:
		body = plan.NewUnion(plan.NewGet(id), plan.NewNegate(plan.NewMfp(plan.NewGet(id), expr.Identity(inner.sources[id].Arity()).Filter(inner.predicate(inner.sources[id], 1, label+"_filter")))))
	case 1:
		d := inner.sources[id]
		var lk, rk []expr.Expr
		if len(columnsOf(d, row.TypeInt64)) > 0 {
			lk = []expr.Expr{inner.intExpr(d, 1, label+"_lk")}
			rk = []expr.Expr{inner.intExpr(d, 1, label+"_rk")}
		}
		body = plan.NewJoin(plan.NewGet(id), plan.NewGet(id), lk, rk)
	default:
		body = inner.plan(depth-1, label+"_body")
	}
	return plan.NewLet(id, value, body)
}
