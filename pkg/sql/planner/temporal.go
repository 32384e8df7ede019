package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Temporal filters (docs/design/time.md): in a maintained definition,
// now() is the dataflow's logical time, and a WHERE conjunct comparing a
// row expression with it becomes a bound of a plan.TemporalFilter, which
// the engine maintains as time passes. Every other use of now() in a
// maintained definition is refused (exprCtx.now).

// temporalRule is the rule the refusal of now() names.
const temporalRule = "is not allowed in a view, index, materialized view or SUBSCRIBE except in a temporal filter: " +
	"a WHERE conjunct <expr> {< | <= | = | >= | >} now() (either side) or now() BETWEEN <lo> AND <hi>, " +
	"where <expr> does not use now() (see docs/design/time.md)"

// temporalSide is one recognised bound: the row side, compared as
// `side op now()`.
type temporalSide struct {
	side *pg.Node
	op   plan.TemporalOp
}

// splitTemporal takes the temporal conjuncts out of a WHERE clause's.
func splitTemporal(conjuncts []*pg.Node) (rest []*pg.Node, bounds []temporalSide) {
	for _, cj := range conjuncts {
		if b, ok := temporalConjunct(cj); ok {
			bounds = append(bounds, b...)
			continue
		}
		rest = append(rest, cj)
	}
	return rest, bounds
}

// temporalConjunct recognises `e op now()`, `now() op e` and `now()
// BETWEEN lo AND hi` with e, lo and hi free of now().
func temporalConjunct(n *pg.Node) ([]temporalSide, bool) {
	a := n.GetAExpr()
	if a == nil {
		return nil, false
	}
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		op, ok := temporalOps[opName(a.Name)]
		if !ok || len(a.Name) != 1 {
			return nil, false
		}
		switch {
		case isNow(a.Rexpr) && !mentionsNow(a.Lexpr):
			return []temporalSide{{a.Lexpr, op}}, true
		case isNow(a.Lexpr) && !mentionsNow(a.Rexpr):
			return []temporalSide{{a.Rexpr, flipTemporal[op]}}, true
		}
	case pg.A_Expr_Kind_AEXPR_BETWEEN:
		list := a.Rexpr.GetList()
		if !isNow(a.Lexpr) || list == nil || len(list.Items) != 2 || mentionsNow(a.Rexpr) {
			return nil, false
		}
		return []temporalSide{{list.Items[0], plan.TemporalLte}, {list.Items[1], plan.TemporalGte}}, true
	}
	return nil, false
}

var temporalOps = map[string]plan.TemporalOp{
	"<": plan.TemporalLt, "<=": plan.TemporalLte, ">": plan.TemporalGt, ">=": plan.TemporalGte, "=": plan.TemporalEq,
}

// flipTemporal turns `now() op e` into `e op' now()`.
var flipTemporal = map[plan.TemporalOp]plan.TemporalOp{
	plan.TemporalLt: plan.TemporalGt, plan.TemporalLte: plan.TemporalGte,
	plan.TemporalGt: plan.TemporalLt, plan.TemporalGte: plan.TemporalLte, plan.TemporalEq: plan.TemporalEq,
}

// isNow reports whether n is the current time as a timestamptz: now(),
// transaction_timestamp(), statement_timestamp() or current_timestamp
// (without a precision, which would round it).
func isNow(n *pg.Node) bool {
	if f := n.GetSqlvalueFunction(); f != nil {
		return f.Op == pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP
	}
	fc := n.GetFuncCall()
	if fc == nil || len(fc.Args) > 0 || fc.AggStar || fc.Over != nil || fc.AggFilter != nil {
		return false
	}
	name, err := funcName(fc)
	if err != nil {
		return false
	}
	switch name {
	case "now", "transaction_timestamp", "statement_timestamp":
		return true
	}
	return false
}

// mentionsNow reports whether n uses now() outside subqueries. It only
// decides which conjuncts have a temporal form: any other use of the
// clock is refused when the row side is lowered.
func mentionsNow(n *pg.Node) bool {
	found := false
	walkExpr(n, func(m *pg.Node) bool {
		found = found || isNow(m)
		return !found
	})
	return found
}

// temporalFilter applies the temporal bounds of a WHERE clause to r: each
// row side is lowered over r's columns as a timestamptz (timestamp and
// date are read in the session's zone, as PostgreSQL compares them with
// a timestamptz).
func (p *Planner) temporalFilter(r *rel, sides []temporalSide, depth int) (*rel, error) {
	c := &exprCtx{p: p, scope: r.scope, clause: "WHERE", depth: depth}
	bounds := make([]plan.TemporalBound, len(sides))
	for i, s := range sides {
		x, err := c.lowerAs(s.side, row.TypeTimestampTZ)
		if err != nil {
			return nil, err
		}
		switch x.t.Type {
		case row.TypeTimestampTZ:
		case row.TypeTimestamp, row.TypeDate:
			if x, err = c.castTo(x, row.TypeTimestampTZ); err != nil {
				return nil, err
			}
		case row.TypeNull:
			x = typed{e: expr.Literal(row.Null()), t: row.ColumnType{Type: row.TypeTimestampTZ}}
		default:
			return nil, sqlerr.Errorf(sqlerr.UndefinedFunction,
				"operator does not exist: %s %s timestamp with time zone", pgTypeName(x), s.op)
		}
		bounds[i] = plan.TemporalBound{Expr: x.e, Op: s.op}
	}
	return newRel(plan.NewTemporalFilter(r.plan(), bounds...), r.scope), nil
}

// checkTemporal refuses a temporal filter where the engine does not
// maintain one: inside WITH RECURSIVE, whose rounds are not logical times.
func checkTemporal(pl plan.Plan) error {
	if pl.Recursive != nil && hasTemporal(pl) {
		return sqlerr.Unsupported("now() in a temporal filter inside WITH RECURSIVE")
	}
	for _, in := range pl.Inputs() {
		if err := checkTemporal(*in); err != nil {
			return err
		}
	}
	return nil
}

func hasTemporal(pl plan.Plan) bool {
	if pl.TemporalFilter != nil {
		return true
	}
	for _, in := range pl.Inputs() {
		if hasTemporal(*in) {
			return true
		}
	}
	return false
}
