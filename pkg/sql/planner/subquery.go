package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// whereConjuncts splits a WHERE clause into its AND-ed conjuncts.
func whereConjuncts(n *pg.Node) []*pg.Node {
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg.BoolExprType_AND_EXPR {
		var out []*pg.Node
		for _, a := range b.Args {
			out = append(out, whereConjuncts(a)...)
		}
		return out
	}
	return []*pg.Node{n}
}

// semiJoin applies a WHERE conjunct that is an uncorrelated subquery
// test, returning false when n is not one:
//
//	x IN (SELECT y ...)       r ⋈ distinct(y), NULL x and y dropped
//	EXISTS (SELECT ...)       r ⋈ distinct(the subquery projected to ())
//	NOT EXISTS (SELECT ...)   r - (the above)
//
// As a top-level conjunct of WHERE, a NULL from IN drops the row just as
// false does, so the semi-join is exact. NOT IN is not: it is refused.
func (p *Planner) semiJoin(r *rel, n *pg.Node, depth int) (*rel, bool, error) {
	negate := false
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg.BoolExprType_NOT_EXPR && len(b.Args) == 1 && b.Args[0].GetSubLink() != nil {
		negate, n = true, b.Args[0]
	}
	sl := n.GetSubLink()
	if sl == nil {
		return r, false, nil
	}
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, false, sqlerr.Unsupported("this kind of subquery")
	}
	sub, err := p.planSubquery(sel, depth+1)
	if err != nil {
		if code := sqlerr.Code(err); code == sqlerr.UndefinedColumn || code == sqlerr.UndefinedTable {
			return nil, false, sqlerr.Errorf(sqlerr.FeatureNotSupported, "correlated subqueries not supported (%v)", err)
		}
		return nil, false, err
	}
	arity := r.arity()
	var matched plan.Plan
	switch {
	case sl.SubLinkType == pg.SubLinkType_EXISTS_SUBLINK:
		unit := plan.NewDistinct(plan.NewMfp(sub.plan(), expr.MFP{}))
		matched = plan.NewMfp(plan.NewJoin(r.plan(), unit, nil, nil), expr.Identity(arity))
	case sl.SubLinkType == pg.SubLinkType_ANY_SUBLINK && !negate && (len(sl.OperName) == 0 || opName(sl.OperName) == "="):
		if sub.arity() != 1 {
			return nil, false, sqlerr.New(sqlerr.SyntaxError, "subquery has too many columns")
		}
		c := &exprCtx{p: p, scope: r.scope, clause: "WHERE"}
		x, err := c.lowerAs(sl.Testexpr, sub.scope.cols[0].typ.Type)
		if err != nil {
			return nil, false, err
		}
		lk, rk := x.e, expr.Column(0)
		switch {
		case x.t.Type == sub.scope.cols[0].typ.Type:
		case x.t.Type == row.TypeInt64 && sub.scope.cols[0].typ.Type == row.TypeFloat64:
			lk = expr.Cast(lk, row.TypeFloat64)
		case x.t.Type == row.TypeFloat64 && sub.scope.cols[0].typ.Type == row.TypeInt64:
			rk = expr.Cast(rk, row.TypeFloat64)
		default:
			return nil, false, sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s = %s",
				PGTypeName(x.t.Type), PGTypeName(sub.scope.cols[0].typ.Type))
		}
		keys := plan.NewDistinct(filterNullKeys(plan.NewMfp(sub.plan(), keyProjection([]expr.Expr{rk}, 1)), 1, []expr.Expr{expr.Column(0)}))
		left := filterNullKeys(r.plan(), arity, []expr.Expr{lk})
		matched = plan.NewMfp(plan.NewJoin(left, keys, []expr.Expr{lk}, []expr.Expr{expr.Column(0)}), expr.Identity(arity))
	case sl.SubLinkType == pg.SubLinkType_ANY_SUBLINK:
		return nil, false, sqlerr.Unsupported("NOT IN and other operators with a subquery")
	default:
		return nil, false, sqlerr.Unsupported("subqueries in expressions")
	}
	if negate {
		if sl.SubLinkType != pg.SubLinkType_EXISTS_SUBLINK {
			return nil, false, sqlerr.Unsupported("NOT IN with a subquery")
		}
		matched = plan.NewUnion(r.plan(), plan.NewNegate(matched))
	}
	return newRel(matched, r.scope), true, nil
}
