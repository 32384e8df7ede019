package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// setOp plans UNION, EXCEPT and INTERSECT with multiplicities:
//
//	UNION ALL      l + r
//	UNION          distinct(l + r)
//	EXCEPT ALL     threshold(l - r)
//	EXCEPT         threshold(distinct(l) - distinct(r))
//	INTERSECT ALL  l - threshold(l - r)          (= min(l, r))
//	INTERSECT      the same over distinct(l), distinct(r)
//
// In a correlated subquery (frame not nil) each side carries the outer
// keys first, so the operation applies per outer key.
func (p *Planner) setOp(sel *pg.SelectStmt, depth int, frame *corrFrame) (*rel, error) {
	p.frame = frame
	l, err := p.planSubquery(sel.Larg, depth+1)
	if err != nil {
		return nil, err
	}
	p.frame = frame
	r, err := p.planSubquery(sel.Rarg, depth+1)
	if err != nil {
		return nil, err
	}
	what := map[pg.SetOperation]string{pg.SetOperation_SETOP_UNION: "UNION",
		pg.SetOperation_SETOP_EXCEPT: "EXCEPT", pg.SetOperation_SETOP_INTERSECT: "INTERSECT"}[sel.Op]
	if l.arity() != r.arity() {
		return nil, sqlerr.Errorf(sqlerr.SyntaxError, "each %s query must have the same number of columns", what)
	}
	s := &scope{}
	for i := range l.scope.cols {
		lt, rt := l.scope.cols[i].typ, r.scope.cols[i].typ
		t := lt.Type
		switch {
		case lt.Type == rt.Type:
		case lt.Type == row.TypeNull:
			t = rt.Type
		case rt.Type == row.TypeNull:
		case lt.Type.IsNumeric() && rt.Type.IsNumeric():
			t, _ = numericCommon(lt.Type, rt.Type)
		default:
			return nil, sqlerr.Errorf(sqlerr.DatatypeMismatch, "%s types %s and %s cannot be matched", what, lt.Type.PGName(), rt.Type.PGName())
		}
		if t == row.TypeNull {
			t = row.TypeText
		}
		if sel.Op != pg.SetOperation_SETOP_UNION || !sel.All {
			if err := refuseJSONKey(t, "an equality"); err != nil {
				return nil, err
			}
		}
		var w IntWidth
		switch {
		case t != row.TypeInt64:
		case lt.Type != row.TypeInt64:
			w = r.scope.cols[i].w
		case rt.Type != row.TypeInt64:
			w = l.scope.cols[i].w
		default:
			w = wider(l.scope.cols[i].w, r.scope.cols[i].w)
		}
		var mod TypeMod
		if l.scope.cols[i].mod == r.scope.cols[i].mod {
			mod = l.scope.cols[i].mod
		}
		s.cols = append(s.cols, column{name: l.scope.cols[i].name, w: w, mod: mod, typ: row.ColumnType{Type: t, Nullable: lt.Nullable || rt.Nullable || lt.Type == row.TypeNull || rt.Type == row.TypeNull}})
	}
	lp, rp := castTo(l, s), castTo(r, s)
	var out plan.Plan
	switch sel.Op {
	case pg.SetOperation_SETOP_UNION:
		out = plan.NewUnion(lp, rp)
		if !sel.All {
			out = plan.NewDistinct(out)
		}
	case pg.SetOperation_SETOP_EXCEPT:
		if !sel.All {
			lp, rp = plan.NewDistinct(lp), plan.NewDistinct(rp)
		}
		out = plan.NewThreshold(plan.NewUnion(lp, plan.NewNegate(rp)))
	case pg.SetOperation_SETOP_INTERSECT:
		if !sel.All {
			lp, rp = plan.NewDistinct(lp), plan.NewDistinct(rp)
		}
		out = plan.NewUnion(lp, plan.NewNegate(plan.NewThreshold(plan.NewUnion(lp, plan.NewNegate(rp)))))
	default:
		return nil, sqlerr.Unsupported("set operation " + sel.Op.String())
	}
	return newRel(out, s), nil
}

// castTo converts r's columns to the types of s where they differ.
func castTo(r *rel, s *scope) plan.Plan {
	same := true
	es := make([]expr.Expr, r.arity())
	for i, c := range r.scope.cols {
		es[i] = expr.Column(i)
		if c.typ.Type != s.cols[i].typ.Type {
			es[i] = expr.Cast(es[i], s.cols[i].typ.Type)
			same = false
		}
	}
	if !same {
		r.project(es, s)
	}
	return r.plan()
}
