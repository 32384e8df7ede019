package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
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
// expanded before lowering (rowcompare.go); a field that is itself a row
// constructor is compared as a record there, as PostgreSQL does, and
// other comparisons of row constructors that reach here stay refused
// (0A000) rather than answered as records.

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

// checkRecordFields is PostgreSQL's check when record_eq or record_cmp
// compares two row constructors that are fields of compared rows: the
// field types must be the same (int4 and int8 differ, as do varchar and
// text), else 42804; a field of unknown type on both sides is 42883.
// PostgreSQL checks as it compares rows, Tandem as it plans. A row
// compared with a value that is not one is 42883 (record = integer).
func (c *exprCtx) checkRecordFields(a *pg.A_Expr) error {
	l, r := a.Lexpr.GetRowExpr(), a.Rexpr.GetRowExpr()
	if l == nil || r == nil {
		return c.recordOperandMismatch(a)
	}
	if len(l.Args) != len(r.Args) {
		return sqlerr.New(sqlerr.DatatypeMismatch, "cannot compare record types with different numbers of columns")
	}
	for i := range l.Args {
		x, err := c.lowerTyped(l.Args[i])
		if err != nil {
			return err
		}
		y, err := c.lowerTyped(r.Args[i])
		if err != nil {
			return err
		}
		xn, yn := recordFieldType(x), recordFieldType(y)
		if xn == "unknown" && yn == "unknown" {
			return sqlerr.New(sqlerr.UndefinedFunction, "could not identify an equality operator for type unknown")
		}
		if xn != yn {
			return sqlerr.Errorf(sqlerr.DatatypeMismatch, "cannot compare dissimilar column types %s and %s at record column %d", xn, yn, i+1)
		}
	}
	return nil
}

// recordFieldType is the PostgreSQL type name of a record's field.
func recordFieldType(x typed) string {
	switch {
	case x.untyped():
		return "unknown"
	case x.t.Type == row.TypeInt64:
		return intWidthName(x.w)
	case x.mod.Kind == ModVarchar:
		return "character varying"
	case x.mod.Kind == ModBpchar:
		return "character"
	}
	return x.t.Type.PGName()
}

// recordOperandMismatch is PostgreSQL's 42883 for a row constructor
// compared with a value of another type.
func (c *exprCtx) recordOperandMismatch(a *pg.A_Expr) error {
	names := [2]string{"record", "record"}
	for i, n := range []*pg.Node{a.Lexpr, a.Rexpr} {
		if n.GetRowExpr() != nil {
			continue
		}
		x, err := c.lowerTyped(n)
		if err != nil {
			return err
		}
		names[i] = recordFieldType(x)
	}
	op := opName(a.Name)
	if a.Kind == pg.A_Expr_Kind_AEXPR_DISTINCT || a.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT {
		op = "="
	}
	return sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", names[0], op, names[1])
}
