package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// AND-ed conditions with subqueries (of WHERE, or of a JOIN's ON) are
// applied in two steps. The conjuncts without subqueries filter r first,
// so that every subquery reads only the rows they keep. Then each
// conjunct with a subquery is lowered to a column expression over r
// without filtering between them, and one filter applies them all (a
// lone EXISTS, NOT EXISTS or IN conjunct stays the cheaper semi-join
// instead). Each subquery thus reads r as it was before any subquery
// column (rel.origin, distinctkeys.go) and adds a bounded number of
// nodes: the plan grows by a sum. Filtering after each conjunct instead
// made the next one read the whole plan below it again (the plan IR has
// no shared bindings), multiplying the plan by a constant per conjunct.
// selectCore applies that filter after lowering the select list, whose
// subqueries then read the same relation.
//
// The filter's predicates run in order and stop at the first false (the
// MFP's contract), so which conjuncts come first decides which per-row
// errors (21000 from a scalar subquery with several rows, a division by
// a subquery's value) are raised for rows another conjunct drops. The
// order follows PostgreSQL's: it turns a top-level EXISTS, NOT EXISTS and
// an uncorrelated IN into (semi- and anti-) joins above the scan whose
// filter evaluates the other conditions, so those run on every row and
// the joins after them; here too the other subquery conjuncts come first,
// in the order written, then those. Among the other conditions
// PostgreSQL orders by its cost estimates, which Tandem does not
// reproduce: there it follows the order written.
//
// The subqueries themselves see the outer values of every row the plain
// conjuncts keep: an error inside a subquery's body (a division by an
// outer column, a nested scalar subquery with several rows) is raised for
// an outer row another conjunct drops, as with PostgreSQL's joins above.

// applyConjuncts filters r by the AND-ed conds as above. It returns the
// rel and the predicates over it of the subquery conjuncts, which the
// caller applies with r.filter: a select list lowered over r before that
// reads r's relation before its subquery columns too (selectCore);
// clause ("WHERE", "JOIN conditions") and construct ("WHERE", "JOIN/ON")
// name the conditions in errors.
func (p *Planner) applyConjuncts(r *rel, conds []*pg.Node, clause, construct string, depth int) (*rel, []expr.Expr, error) {
	var withSub []*pg.Node
	for _, cj := range conds {
		if hasSubLink(cj) {
			withSub = append(withSub, cj)
			continue
		}
		x, err := p.lowerCondition(r, cj, clause, construct, depth)
		if err != nil {
			return nil, nil, err
		}
		r.filter(x)
	}
	if len(withSub) == 1 {
		nr, done, err := p.semiJoin(r, withSub[0], depth)
		if err != nil || done {
			return nr, nil, err
		}
	}
	// The conjuncts PostgreSQL makes joins last.
	var scan, joins []*pg.Node
	for _, cj := range withSub {
		if pgJoinsIt(cj, r.scope) {
			joins = append(joins, cj)
		} else {
			scan = append(scan, cj)
		}
	}
	preds := make([]expr.Expr, 0, len(withSub))
	for _, cj := range append(scan, joins...) {
		x, err := p.lowerCondition(r, cj, clause, construct, depth)
		if err != nil {
			return nil, nil, err
		}
		preds = append(preds, x)
	}
	return r, preds, nil
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

// pgJoinsIt reports whether PostgreSQL plans the conjunct cond as a join
// rather than as a condition of the scan of outer's relations: EXISTS or
// NOT EXISTS, or x IN (S) with S naming no column of outer.
func pgJoinsIt(cond *pg.Node, outer *scope) bool {
	if b := cond.GetBoolExpr(); b != nil && b.Boolop == pg.BoolExprType_NOT_EXPR && len(b.Args) == 1 {
		sl := b.Args[0].GetSubLink()
		return sl != nil && sl.SubLinkType == pg.SubLinkType_EXISTS_SUBLINK
	}
	sl := cond.GetSubLink()
	if sl == nil {
		return false
	}
	switch kind, _ := subLinkKind(sl); kind {
	case "exists":
		return true
	case "in":
		sel := sl.Subselect.GetSelectStmt()
		return sel != nil && len(outerColumns(sel, outer)) == 0
	}
	return false
}
