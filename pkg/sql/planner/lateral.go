package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// lateral plans a LATERAL subquery rs against the FROM items to its left
// (l) by the decorrelation of apply.go: the subquery is planned against
// D, the distinct values of the columns of l it names, its rows keyed by
// them, and l joins it on those columns (NULLs matching: they are D's own
// values). It returns l joined with the subquery (l's columns, then the
// subquery's) and a rel standing for the subquery's columns alone (their
// scope and arity, for the join's conditions). A LATERAL subquery that
// names nothing of l is an ordinary subquery, cross-joined.
func (p *Planner) lateral(l *rel, rs *pg.RangeSubselect, depth int) (*rel, *rel, error) {
	sel := rs.Subquery.GetSelectStmt()
	if sel == nil {
		return nil, nil, sqlerr.Unsupported("this kind of subquery in FROM")
	}
	cols := outerColumns(sel, l.scope)
	if len(cols) == 0 {
		r, err := p.planSubquery(sel, depth+1)
		if err != nil {
			return nil, nil, err
		}
		if r, err = aliased(r, rs.Alias, ""); err != nil {
			return nil, nil, err
		}
		return newRel(plan.NewJoin(l.plan(), r.plan(), nil, nil), l.scope.concat(r.scope)), r, nil
	}
	f := &corrFrame{s: &scope{}}
	lk := make([]expr.Expr, len(cols))
	for i, c := range cols {
		col := l.scope.cols[c]
		col.outer = true
		f.s.cols = append(f.s.cols, col)
		lk[i] = expr.Column(c)
	}
	f.d = plan.NewDistinct(plan.NewMfp(l.plan(), expr.MFP{Projection: cols}))
	sub, err := p.framedSubselect(rs, depth, f)
	if err != nil {
		return nil, nil, err
	}
	k, la := len(cols), l.arity()
	j := plan.NewJoin(l.plan(), sub.plan(), lk, columns(k))
	proj := identityInts(la)
	for c := k; c < sub.arity(); c++ {
		proj = append(proj, la+c)
	}
	vals := &scope{cols: append([]column(nil), sub.scope.cols[k:]...)}
	only := &rel{scope: vals, mfp: expr.Identity(len(vals.cols))}
	return newRel(plan.NewMfp(j, expr.MFP{Projection: proj}), l.scope.concat(vals)), only, nil
}
