package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// AND-ed conditions with subqueries (of WHERE, or of a JOIN's ON) are
// applied in two steps. The conjuncts without subqueries filter r first,
// so that every subquery reads only the rows they keep. Then, when
// several conjuncts have subqueries, each is lowered to a column
// expression over r without filtering between them, and one filter
// applies them all, in the order written. Each subquery thus reads r as
// it was before any subquery column (rel.origin, distinctkeys.go) and adds
// a bounded number of nodes: the plan grows by a sum. Filtering after each
// conjunct instead would make the next one read the whole plan below it
// again (the plan IR has no shared bindings), multiplying the plan by a
// constant per conjunct.
//
// The filter's predicates run in order and stop at the first false (the
// MFP's contract), so a per-row error of a later conjunct (21000 from a
// scalar subquery with several rows) is not raised for a row an earlier
// conjunct drops, as when each conjunct filtered the rows of the next.
// The subqueries themselves now see the outer values of every row the
// plain conjuncts keep, not only of those the earlier subquery conjuncts
// keep: an error inside a subquery's body (a division by an outer
// column, a nested scalar subquery with several rows) can be raised for
// an outer row another conjunct rejects. PostgreSQL does not define the
// order in which it evaluates a WHERE clause's conditions either.
//
// A single conjunct with a subquery keeps the cheaper semi-join form
// (semiJoin) where it applies.

// applyConjuncts filters r by the AND-ed conds as above and returns the
// filtered rel; clause ("WHERE", "JOIN conditions") and construct
// ("WHERE", "JOIN/ON") name them in errors.
func (p *Planner) applyConjuncts(r *rel, conds []*pg.Node, clause, construct string, depth int) (*rel, error) {
	var withSub []*pg.Node
	for _, cj := range conds {
		if hasSubLink(cj) {
			withSub = append(withSub, cj)
			continue
		}
		x, err := p.lowerCondition(r, cj, clause, construct, depth)
		if err != nil {
			return nil, err
		}
		r.filter(x)
	}
	if len(withSub) == 1 {
		nr, done, err := p.semiJoin(r, withSub[0], depth)
		if err != nil || done {
			return nr, err
		}
	}
	preds := make([]expr.Expr, 0, len(withSub))
	for _, cj := range withSub {
		x, err := p.lowerCondition(r, cj, clause, construct, depth)
		if err != nil {
			return nil, err
		}
		preds = append(preds, x)
	}
	r.filter(preds...)
	return r, nil
}

// lowerCondition lowers one condition over r, adding the columns its
// subqueries need.
func (p *Planner) lowerCondition(r *rel, cond *pg.Node, clause, construct string, depth int) (expr.Expr, error) {
	c := &exprCtx{p: p, scope: r.scope, rel: r, clause: clause, depth: depth}
	x, err := c.lowerAs(cond, row.TypeBool)
	if err != nil {
		return expr.Expr{}, err
	}
	if err := wantBool(x, construct); err != nil {
		return expr.Expr{}, err
	}
	return x.e, nil
}
