package planner

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TypeFromName maps a SQL type name to a row type. varchar(n), char(n)
// and numeric(p,s) are text and numeric with a TypeMod (TypeModFromName);
// types the engine cannot represent are refused with 0A000 rather than
// approximated.
func TypeFromName(tn *pg.TypeName) (row.Type, error) {
	t, prec, err := typeAndPrecision(tn)
	if err != nil {
		return row.TypeInvalid, err
	}
	if prec >= 0 {
		// A column of type timestamp(p) would have to round every value
		// written to it; only casts apply a precision so far.
		return row.TypeInvalid, sqlerr.Unsupported(fmt.Sprintf("column type %s(%d) with a precision (use %s)", typeNameOf(tn), prec, typeNameOf(tn)))
	}
	return t, nil
}

func typeNameOf(tn *pg.TypeName) string {
	var parts []string
	for _, n := range tn.Names {
		parts = append(parts, n.GetString_().GetSval())
	}
	return typeName(parts)
}

// typeAndPrecision maps a SQL type name to a row type and, for the
// date/time types, the precision in parentheses (-1 when none).
func typeAndPrecision(tn *pg.TypeName) (row.Type, int, error) {
	t, err := baseType(tn)
	if err != nil || !t.IsTemporal() {
		return t, -1, err
	}
	return temporalPrecision(tn, t)
}

func baseType(tn *pg.TypeName) (row.Type, error) {
	if tn == nil {
		return row.TypeInvalid, sqlerr.New(sqlerr.SyntaxError, "missing type name")
	}
	if len(tn.ArrayBounds) > 0 {
		return arrayElemType(tn)
	}
	var parts []string
	for _, n := range tn.Names {
		parts = append(parts, n.GetString_().GetSval())
	}
	name := typeName(parts)
	if len(parts) == 2 && parts[0] != "pg_catalog" {
		return row.TypeInvalid, sqlerr.Errorf(sqlerr.UndefinedObject, "type %q does not exist", strings.Join(parts, "."))
	}
	switch name {
	case "int2", "int4", "int8", "int", "integer", "bigint", "smallint":
		return row.TypeInt64, nil
	case "float4", "float8", "float", "real", "double precision":
		return row.TypeFloat64, nil
	case "text", "varchar", "character varying", "string", "bpchar", "char", "character":
		if _, err := TypeModFromName(tn); err != nil {
			return row.TypeInvalid, err
		}
		return row.TypeText, nil
	case "bool", "boolean":
		return row.TypeBool, nil
	case "bytea":
		return row.TypeBytes, nil
	case "timestamp":
		return row.TypeTimestamp, nil
	case "timestamptz":
		return row.TypeTimestampTZ, nil
	case "date":
		return row.TypeDate, nil
	case "time":
		return row.TypeTime, nil
	case "interval":
		return row.TypeInterval, nil
	case "timetz":
		return row.TypeInvalid, sqlerr.Unsupported("type time with time zone (use timestamptz or time)")
	case "numeric", "decimal":
		if _, err := TypeModFromName(tn); err != nil {
			return row.TypeInvalid, err
		}
		return row.TypeNumeric, nil
	case "uuid":
		return row.TypeUUID, nil
	case "jsonb":
		return row.TypeJSONB, nil
	case "json":
		return row.TypeJSON, nil
	}
	return row.TypeInvalid, sqlerr.Unsupported("type " + name)
}

func typeName(parts []string) string { return strings.ToLower(parts[len(parts)-1]) }

// IntWidth is the declared width of a SQL integer: the engine stores
// every integer in 64 bits, and the planner range-checks values of the
// narrower SQL types where Postgres would (casts, arithmetic, writes to
// columns), so that a result Postgres refuses with 22003 is refused too.
// The zero value is bigint, which is also what a value whose width the
// planner does not know is taken to be: losing a width can only omit a
// check Postgres makes, never add one it does not.
type IntWidth uint8

// The narrow integer widths; the zero IntWidth is bigint.
const (
	IntWidth2 IntWidth = 2 // smallint
	IntWidth4 IntWidth = 4 // integer
)

// IntWidthFromName is the integer width a SQL type name declares (zero
// for bigint and for non-integer types).
func IntWidthFromName(tn *pg.TypeName) IntWidth {
	if tn == nil || len(tn.Names) == 0 {
		return 0
	}
	var parts []string
	for _, n := range tn.Names {
		parts = append(parts, n.GetString_().GetSval())
	}
	switch typeName(parts) {
	case "int2", "smallint":
		return IntWidth2
	case "int4", "int", "integer":
		return IntWidth4
	}
	return 0
}

// TableIntWidths returns the declared integer widths of the columns of
// the table a CREATE TABLE statement creates, or nil when the text is
// not one (the table's integers are then checked as bigint only).
func TableIntWidths(createTable string) []IntWidth {
	if !mentionsNarrowInt(createTable) {
		// Only bigint columns (the common case, and the parse costs tens
		// of microseconds per statement that resolves the table).
		return nil
	}
	c := parseCreateTable(createTable)
	if c == nil {
		return nil
	}
	out := make([]IntWidth, 0, len(c.TableElts))
	for _, elt := range c.TableElts {
		cd := elt.GetColumnDef()
		if cd == nil {
			continue // a table constraint
		}
		out = append(out, IntWidthFromName(cd.TypeName))
	}
	return out
}

// mentionsNarrowInt reports whether sql may name a smallint or integer
// type: it contains int2, int4, smallint, integer or the word int. A false
// positive only costs a parse.
func mentionsNarrowInt(sql string) bool {
	s := strings.ToLower(sql)
	for _, name := range []string{"int2", "int4", "smallint", "integer"} {
		if strings.Contains(s, name) {
			return true
		}
	}
	ident := func(i int) bool {
		if i < 0 || i >= len(s) {
			return false
		}
		c := s[i]
		return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80
	}
	for i := 0; ; {
		j := strings.Index(s[i:], "int")
		if j < 0 {
			return false
		}
		j += i
		if !ident(j-1) && !ident(j+3) {
			return true
		}
		i = j + 3
	}
}

// wider is the width of the result of arithmetic over operands of widths
// a and b: Postgres promotes int2 with int4 to int4, anything with int8
// to int8.
func wider(a, b IntWidth) IntWidth {
	if a == 0 || b == 0 {
		return 0
	}
	return max(a, b)
}

// intFunc is the engine function that narrows a value to width w.
func intFunc(w IntWidth) expr.Func {
	if w == IntWidth2 {
		return expr.FuncInt2
	}
	return expr.FuncInt4
}

// intWidthName is Postgres' name of the integer type of width w.
func intWidthName(w IntWidth) string {
	switch w {
	case IntWidth2:
		return "smallint"
	case IntWidth4:
		return "integer"
	}
	return "bigint"
}

// parseCreateTable parses the stored text of a CREATE TABLE statement, or
// returns nil when it is not exactly one such statement.
func parseCreateTable(createTable string) *pg.CreateStmt {
	tree, err := pg.Parse(createTable)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	return tree.Stmts[0].GetStmt().GetCreateStmt()
}
