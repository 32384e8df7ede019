package planner

import (
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// Filters and outer joins (PostgreSQL's reduce_outer_joins and qual
// pushdown, for the conditions above an outer join):
//
//   - an outer join whose result is filtered by a condition that cannot
//     be true when one side's columns are all NULL (a comparison or
//     arithmetic over them, IS NOT NULL, an AND with such a conjunct, an
//     OR of such arms) loses the padded rows of the other side: LEFT
//     becomes INNER when the condition rejects NULLs of the right side,
//     FULL becomes LEFT or RIGHT (or INNER), the condition staying above;
//   - a condition over the columns of a side that is never NULL-padded
//     (the preserved side of a LEFT or RIGHT join, either side of an
//     inner one) filters that side below the join instead: a preserved
//     row the condition removes would only have been removed afterwards
//     with all its pairs, and whether the other rows matched does not
//     depend on it.
//
// A condition over a NULL-padded side that keeps NULLs (`b.x IS NULL`)
// stays above the join, where it sees the padded rows. Outer joins are
// lowered to a Union of the matched pairs and the padded unmatched rows
// (from.go); join records how, keyed by that Union, so that the join
// planner can rebuild it: with fewer padded parts, and with the
// preserved side's plan replaced by a filter over it everywhere it is
// read (the matched pairs and the anti-join that finds unmatched rows).

// outerJoin is how an outer join was lowered.
type outerJoin struct {
	left, right          plan.Plan // the sides as planned, before NULL-key filtering
	la, ra               int
	preserveL, preserveR bool
	matched              plan.Plan
	// padL and padR are the padded unmatched rows of the left and right
	// side (valid when preserveL, preserveR).
	padL, padR plan.Plan
}

// noteOuterJoin records how the outer join u was lowered.
func (p *Planner) noteOuterJoin(u plan.Plan, oj *outerJoin) {
	if u.Union == nil || oj.left == oj.right {
		return
	}
	if p.outerJoins == nil {
		p.outerJoins = map[*plan.Union]*outerJoin{}
	}
	p.outerJoins[u.Union] = oj
}

// inRange returns a test for columns in [lo, hi).
func inRange(lo, hi int) func(int) bool {
	return func(c int) bool { return c >= lo && c < hi }
}

// nullWhen reports whether e is NULL whenever the columns in null are
// NULL: a column among them, or a strict call (comparison, arithmetic
// and its integer range checks, NOT, cast) of such an expression.
func nullWhen(e expr.Expr, null func(int) bool) bool {
	switch e.Op {
	case expr.OpColumn:
		return null(e.Index)
	case expr.OpCast:
		return len(e.Args) == 1 && nullWhen(e.Args[0], null)
	case expr.OpCall:
		switch e.Func {
		case expr.FuncEq, expr.FuncNeq, expr.FuncLt, expr.FuncLte, expr.FuncGt, expr.FuncGte,
			expr.FuncAdd, expr.FuncSub, expr.FuncMul, expr.FuncNot, expr.FuncInt2, expr.FuncInt4:
			for _, a := range e.Args {
				if nullWhen(a, null) {
					return true
				}
			}
		}
	}
	return false
}

// rejectsNulls reports whether condition e is NULL or false whenever the
// columns in null are NULL.
func rejectsNulls(e expr.Expr, null func(int) bool) bool {
	switch {
	case nullWhen(e, null):
		return true
	case e.Op == expr.OpCall && e.Func == expr.FuncNot && len(e.Args) == 1:
		// NOT (x IS NULL)
		a := e.Args[0]
		return a.Op == expr.OpCall && a.Func == expr.FuncIsNull && len(a.Args) == 1 && nullWhen(a.Args[0], null)
	case e.Op == expr.OpAnd:
		for _, a := range e.Args {
			if rejectsNulls(a, null) {
				return true
			}
		}
	case e.Op == expr.OpOr:
		for _, a := range e.Args {
			if !rejectsNulls(a, null) {
				return false
			}
		}
		return len(e.Args) > 0
	}
	return false
}

// allColumns reports whether every column e reads passes in.
func allColumns(e expr.Expr, in func(int) bool) bool {
	for _, c := range e.Columns() {
		if !in(c) {
			return false
		}
	}
	return true
}

// pushIntoOuter rebuilds leaf, when it is a recorded outer join whose
// columns start at off: conditions (over the cluster's columns) that
// reject one side's NULLs drop the other side's padded rows, and local
// conditions over a side never padded filter that side below the join.
// It returns the new leaf and which conditions it applied (those stay
// applied by nothing else); ok is false when leaf is left as it was.
func (jp *joinPlanner) pushIntoOuter(leaf plan.Plan, off int, conds []expr.Expr) (out plan.Plan, pushed []bool, ok bool) {
	if leaf.Union == nil || jp.outer[leaf.Union] == nil {
		return leaf, nil, false
	}
	oj := jp.outer[leaf.Union]
	left, right := inRange(off, off+oj.la), inRange(off+oj.la, off+oj.la+oj.ra)
	keepL, keepR := oj.preserveL, oj.preserveR
	for _, e := range conds {
		if keepL && rejectsNulls(e, right) {
			keepL = false
		}
		if keepR && rejectsNulls(e, left) {
			keepR = false
		}
	}
	pushed = make([]bool, len(conds))
	var lf, rf []expr.Expr
	for i, e := range conds {
		switch {
		case !keepR && allColumns(e, left):
			lf = append(lf, shift(e, -off))
			pushed[i] = true
		case !keepL && allColumns(e, right):
			rf = append(rf, shift(e, -off-oj.la))
			pushed[i] = true
		}
	}
	if keepL == oj.preserveL && keepR == oj.preserveR && len(lf) == 0 && len(rf) == 0 {
		return leaf, nil, false
	}
	parts := []plan.Plan{oj.matched}
	if keepL {
		parts = append(parts, oj.padL)
	}
	if keepR {
		parts = append(parts, oj.padR)
	}
	out = oj.matched
	if len(parts) > 1 {
		out = plan.NewUnion(parts...)
	}
	if len(lf) > 0 {
		out = replacePlan(out, oj.left, filtered(oj.left, oj.la, lf))
	}
	if len(rf) > 0 {
		out = replacePlan(out, oj.right, filtered(oj.right, oj.ra, rf))
	}
	return out, pushed, true
}

// filtered is p (of arity n) filtered by conds.
func filtered(p plan.Plan, n int, conds []expr.Expr) plan.Plan {
	m := expr.Identity(n)
	m.Predicates = conds
	return plan.NewMfp(p, m)
}

// replacePlan returns pl with every subtree identical to old (the same
// nodes) replaced by repl.
func replacePlan(pl, old, repl plan.Plan) plan.Plan {
	if pl == old {
		return repl
	}
	return mapInputs(pl, func(in plan.Plan) plan.Plan { return replacePlan(in, old, repl) })
}

// outerFilter plans an Mfp directly over a recorded outer join: its
// conditions over the join's columns go through pushIntoOuter, the rest
// of the Mfp stays above. It reports false when nothing changed.
func (jp *joinPlanner) outerFilter(pl plan.Plan) (plan.Plan, bool) {
	in := *pl.Mfp.Input
	if in.Union == nil || jp.outer[in.Union] == nil {
		return pl, false
	}
	oj := jp.outer[in.Union]
	n := oj.la + oj.ra
	m := pl.Mfp.MFP
	var conds []expr.Expr
	var idx []int
	for i, pr := range m.Predicates {
		if pr.Support() <= n {
			conds = append(conds, pr)
			idx = append(idx, i)
		}
	}
	out, pushed, ok := jp.pushIntoOuter(in, 0, conds)
	if !ok {
		return pl, false
	}
	drop := map[int]bool{}
	for j, p := range pushed {
		if p {
			drop[idx[j]] = true
		}
	}
	var keep []expr.Expr
	for i, pr := range m.Predicates {
		if !drop[i] {
			keep = append(keep, pr)
		}
	}
	m.Predicates = keep
	if m.IsIdentity(n) {
		return jp.rewrite(out), true
	}
	return plan.NewMfp(jp.rewrite(out), m), true
}

// pushIntoOuterJoins applies pushIntoOuter to every leaf of c that is an
// outer join, with the cluster's predicates; those a leaf took leave c.
func (c *joinCluster) pushIntoOuterJoins(jp *joinPlanner) {
	for i, leaf := range c.leaves {
		out, pushed, ok := jp.pushIntoOuter(leaf, c.off[i], c.preds)
		if !ok {
			continue
		}
		c.leaves[i] = out
		var keep []expr.Expr
		for j, pr := range c.preds {
			if !pushed[j] {
				keep = append(keep, pr)
			}
		}
		c.preds = keep
	}
}
