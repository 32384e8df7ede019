package planner

import (
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// A subquery's columns are attached to the distinct key tuples of the
// outer rows it depends on, not to the outer rows themselves, and then
// joined back to those rows once. markFound and attachPerKey read the
// relation they extend three times (matched rows, and all rows minus
// those), and the plan IR has no shared bindings, so attaching to the
// outer relation directly multiplies its plan by three (nine for IN,
// which does both) for every subquery of a query level. Over the key
// tuples, read from the relation as it was before its subquery columns
// (rel.rowSource), each subquery adds the plan of that relation a fixed
// number of times and reads the outer relation once, so the plan grows by
// a sum, not a product.

// distinctKeys returns the distinct tuples of keys (expressions over r's
// output), as a rel whose columns are the keys in order, read from r's
// relation before its subquery columns; nil when r has none (its rows
// changed since, or the keys need those columns), where attaching to r
// directly reads r's plan fewer times.
func distinctKeys(r *rel, keys []expr.Expr) (*rel, error) {
	var cols []int
	for _, k := range keys {
		cols = append(cols, k.Columns()...)
	}
	if !r.hasOrigin(cols) {
		return nil, nil
	}
	src, arity := r.rowSource(cols)
	types := r.scope.types()
	s := &scope{}
	for _, k := range keys {
		t, err := k.Type(types)
		if err != nil {
			return nil, err
		}
		s.cols = append(s.cols, subqueryColumn(t))
	}
	// Over src the first arity columns are r's output columns (r.plan()
	// or the relation before its subquery columns).
	m := appendLiterals(arity, keys)
	m.Projection = m.Projection[arity:]
	return newRel(plan.NewDistinct(plan.NewMfp(src, m)), s), nil
}

// joinBack extends r with the columns d has after its keys (d being
// distinctKeys(r, keys), extended since), each row of r paired with the
// tuple of its keys (compared as encoded values: a NULL key finds its
// tuple). It returns the mapping of an expression over d's columns to one
// over r's.
func joinBack(r *rel, d *rel, keys []expr.Expr) func(expr.Expr) expr.Expr {
	n, nk := r.arity(), len(keys)
	extra := d.arity() - nk
	j := plan.NewJoin(r.plan(), d.plan(), keys, columns(nk))
	proj := make([]int, 0, n+extra)
	for i := range n {
		proj = append(proj, i)
	}
	for i := range extra {
		proj = append(proj, n+nk+i)
	}
	r.extend(plan.NewMfp(j, expr.MFP{Projection: proj}), append([]column(nil), d.scope.cols[nk:]...))
	return func(e expr.Expr) expr.Expr {
		return e.Substitute(func(c int) (expr.Expr, bool) {
			if c < nk {
				return keys[c], true
			}
			return expr.Column(n + c - nk), true
		})
	}
}

// attachPerKeyDistinct is attachPerKey(r, lk, ...) through the distinct
// tuples of lk: the same columns added to r, at the index it returns.
func attachPerKeyDistinct(r *rel, lk []expr.Expr, g plan.Plan, types []row.ColumnType, defaults []expr.Expr, safe int) (int, error) {
	if len(lk) == 0 {
		return attachPerKey(r, lk, g, types, defaults, safe), nil
	}
	d, err := distinctKeys(r, lk)
	if err != nil || d == nil {
		return attachPerKey(r, lk, g, types, defaults, safe), err
	}
	n := r.arity()
	attachPerKey(d, columns(len(lk)), g, types, defaults, safe)
	joinBack(r, d, lk)
	return n, nil
}

// markFoundDistinct is markFound(r, lk, ...) through the distinct tuples
// of lk: the same column added to r, returned as an expression over r.
func markFoundDistinct(r *rel, lk []expr.Expr, keys plan.Plan, safe int) (expr.Expr, error) {
	d, err := distinctKeys(r, lk)
	if err != nil || d == nil {
		return markFound(r, lk, keys, safe), err
	}
	found := markFound(d, columns(len(lk)), keys, safe)
	return joinBack(r, d, lk)(found), nil
}
