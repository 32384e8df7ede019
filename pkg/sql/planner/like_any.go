package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// patternOp returns the index in expr.ArrayLikeOps of a pattern operator
// (~~ LIKE, ~~* ILIKE, !~~ NOT LIKE, !~~* NOT ILIKE), a regular
// expression match (~, ~*, !~, !~*) or jsonb containment (@>, <@), or
// -1.
func patternOp(op string) int {
	for i, o := range expr.ArrayLikeOps {
		if o == op {
			return i
		}
	}
	return -1
}

// patternCmp builds x op y for pattern operator i (patternOp's index).
func patternCmp(i int) func(x, y expr.Expr) expr.Expr {
	switch {
	case i >= expr.ArrayContainsOp:
		return func(x, y expr.Expr) expr.Expr {
			if expr.ArrayLikeOps[i] == "<@" {
				x, y = y, x
			}
			return expr.Call(expr.FuncJSONContains, x, y)
		}
	case i >= expr.ArrayRegexOp:
		op := expr.ArrayLikeOps[i]
		return func(x, y expr.Expr) expr.Expr {
			if strings.Contains(op, "*") {
				y = expr.Call(expr.FuncConcatOp, expr.Literal(row.Text("(?i)")), y)
			}
			e := expr.Call(expr.FuncRegexMatch, x, y)
			if strings.HasPrefix(op, "!") {
				e = expr.Not(e)
			}
			return e
		}
	}
	f := expr.FuncLike
	if i%2 == 1 {
		f = expr.FuncILike
	}
	return func(x, y expr.Expr) expr.Expr {
		e := expr.Call(f, x, y)
		if i >= 2 {
			e = expr.Not(e)
		}
		return e
	}
}

// anyAllOperator resolves the operator of x op ANY/ALL: how to build one
// comparison, and its array_cmp_any op code. PostgreSQL allows any
// boolean operator there; Tandem has the comparisons, the pattern and
// regular expression matches over text and jsonb containment.
func anyAllOperator(op string) (func(x, y expr.Expr) expr.Expr, int, error) {
	if i := patternOp(op); i >= 0 {
		return patternCmp(i), expr.ArrayLikeOp + i, nil
	}
	f, ok := binaryFunc(op)
	if !ok {
		return nil, 0, sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s", op)
	}
	for i, g := range expr.ArrayCmpOps {
		if g == f {
			return func(x, y expr.Expr) expr.Expr { return expr.Call(f, x, y) }, i, nil
		}
	}
	return nil, 0, sqlerr.Unsupported("operator " + op + " with ANY or ALL")
}

// checkPatternArray rejects x LIKE ANY (a) over a non-text array as
// PostgreSQL does: there is no ~~ (nor ~) for other element types, and
// @> and <@ are jsonb's.
func checkPatternArray(code int, x, a typed) error {
	if code < expr.ArrayLikeOp {
		return nil
	}
	want, wantArray := row.TypeText, row.TypeTextArray
	if code-expr.ArrayLikeOp >= expr.ArrayContainsOp {
		want, wantArray = row.TypeJSONB, row.TypeJSONBArray
	}
	if x.t.Type == want && a.t.Type == wantArray {
		return nil
	}
	return sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s",
		x.t.Type.PGName(), expr.ArrayLikeOps[code-expr.ArrayLikeOp], a.t.Type.ElemType().PGName())
}

// patternSubLink lowers x LIKE ANY (S) (and ALL, ILIKE, NOT LIKE): with
// no order or key to exploit, it is x LIKE ANY (ARRAY(S)), which has the
// same NULL semantics (an empty S is an empty array: ANY false, ALL
// true) and is maintained like any ARRAY(subquery).
func (c *exprCtx) patternSubLink(r *rel, outer *scope, sl *pg.SubLink) (typed, error) {
	all := sl.SubLinkType == pg.SubLinkType_ALL_SUBLINK
	_, code, err := anyAllOperator(opName(sl.OperName))
	if err != nil {
		return typed{}, err
	}
	x, err := c.lowerTyped(sl.Testexpr)
	if err != nil {
		return typed{}, err
	}
	arr := &pg.SubLink{SubLinkType: pg.SubLinkType_ARRAY_SUBLINK, Subselect: sl.Subselect, Location: sl.Location}
	a, err := c.arraySubLink(r, outer, arr)
	if err != nil {
		return typed{}, err
	}
	return c.anyAllArray(code, all, x, a)
}
