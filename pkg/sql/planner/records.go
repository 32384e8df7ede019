package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Records: ROW(a, b) as a value is an anonymous record (row.TypeRecord,
// OID 2249), and ARRAY[ROW(...)] an array of them (record[], OID 2287),
// the values a SEARCH or CYCLE clause adds (searchcycle.go). A record
// compares as PostgreSQL's record_eq and record_cmp (a NULL field equal
// to a NULL field), which is what = ANY(path) over a record[] and ORDER
// BY a record use. A row constructor compared with a row constructor
// (ROW(a, b) = ROW(c, d), IN, BETWEEN, IS DISTINCT FROM, IS NULL) is
// PostgreSQL's field-by-field row comparison, with other NULL rules,
// expanded before lowering (rowcompare.go); what reaches here compares
// rows whose fields are rows, and stays refused (0A000) rather than
// answered as records.

// rowConstructor lowers ROW(f1, ...) to a record; untyped fields are
// text, as PostgreSQL resolves an unknown field.
func (c *exprCtx) rowConstructor(r *pg.RowExpr) (typed, error) {
	xs := make([]typed, len(r.Args))
	for i, n := range r.Args {
		var err error
		if xs[i], err = c.lower(n); err != nil {
			return typed{}, err
		}
	}
	return c.check(expr.Call(expr.FuncRecord, exprs(xs)...))
}

// rowComparison refuses an operator applied to a row constructor where
// PostgreSQL compares field by field: every comparison but = ANY / ALL
// over an array of records (record_eq) and || onto a record[].
func rowComparison(a *pg.A_Expr) error {
	if a.Lexpr.GetRowExpr() == nil && a.Rexpr.GetRowExpr() == nil {
		return nil
	}
	if ok, _ := anyAllKind(a.Kind); ok && a.Rexpr.GetRowExpr() == nil {
		return nil
	}
	if a.Kind == pg.A_Expr_Kind_AEXPR_OP && opName(a.Name) == "||" {
		return nil
	}
	return sqlerr.Unsupported("row constructor comparisons")
}
