package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// anyAll lowers x op ANY (array) and x op ALL (array) over an ARRAY[...]
// constructor or an array literal ('{1,2}') to the OR (ANY) or AND (ALL)
// of the comparisons with each element, which is PostgreSQL's NULL
// semantics: ANY is true if some comparison is, else NULL if some is
// NULL, else false (false over an empty array, even for a NULL x); ALL
// dually. Array values (columns, subqueries, parameters) lower to
// array_cmp_any with the same semantics (anyAllArray). op is a
// comparison or a pattern match (LIKE, ILIKE and their negations).
func (c *exprCtx) anyAll(op string, all bool, l, r *pg.Node) (typed, error) {
	cmp, code, err := anyAllOperator(op)
	if err != nil {
		return typed{}, err
	}
	var xs []typed
	if arr := r.GetAArrayExpr(); arr != nil {
		var err error
		if xs, err = c.lowerList(append([]*pg.Node{l}, arr.Elements...)); err != nil {
			return typed{}, err
		}
	} else {
		x, err := c.lowerTyped(l)
		if err != nil {
			return typed{}, err
		}
		a, err := c.lowerTyped(r)
		if err != nil {
			return typed{}, err
		}
		if a.lit == nil {
			return c.anyAllArray(code, all, x, a)
		}
		elems, err := parseTextArray(*a.lit)
		if err != nil {
			return typed{}, err
		}
		if x, err = c.settle(x, row.TypeText); err != nil {
			return typed{}, err
		}
		xs = []typed{x}
		for _, e := range elems {
			if e == nil {
				xs = append(xs, typed{e: expr.TypedNull(x.t.Type), t: row.ColumnType{Type: x.t.Type, Nullable: true}})
				continue
			}
			lit := *e
			y, err := c.settle(typed{lit: &lit}, x.t.Type)
			if err != nil {
				return typed{}, err
			}
			xs = append(xs, y)
		}
	}
	if len(xs) == 1 {
		return c.check(expr.Literal(row.Bool(all)))
	}
	cmps := make([]expr.Expr, len(xs)-1)
	for i, y := range xs[1:] {
		cmps[i] = cmp(xs[0].e, y.e)
	}
	if all {
		return c.check(expr.And(cmps...))
	}
	return c.check(expr.Or(cmps...))
}

// anyAllKind reports whether k is ANY or ALL, and which.
func anyAllKind(k pg.A_Expr_Kind) (isAnyAll, all bool) {
	name := strings.TrimPrefix(k.String(), "AEXPR_")
	return name == "OP_ANY" || name == "OP_ALL", name == "OP_ALL"
}
