package planner

import (
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Records in json: row_to_json(t), to_json(t) and to_jsonb(t) of a FROM
// item's alias t (a whole-row reference, t or t.*: its fields are the
// item's visible columns, named by them) or of ROW(...) (fields f1, f2,
// ...; a ROW may nest). These functions build the json directly from
// the record's field expressions rather than from a record value
// (records.go), whose fields carry no names and do not nest.

// jsonField is one field of a record: its name and value node, or the
// fields of a nested record.
type jsonField struct {
	name   string
	node   *pg.Node
	record []jsonField
}

// jsonRecordCall lowers row_to_json(record [, pretty]), to_json(record)
// and to_jsonb(record); ok is false when name is another function or the
// argument is no record (a column, an expression).
func (c *exprCtx) jsonRecordCall(name string, args []*pg.Node) (typed, bool, error) {
	switch name {
	case "row_to_json", "to_json", "to_jsonb":
	default:
		return typed{}, false, nil
	}
	if len(args) == 0 {
		return typed{}, false, nil
	}
	fields, ok, err := c.recordFields(args[0])
	if err != nil || !ok {
		if err == nil && name == "row_to_json" {
			x, lerr := c.lowerTyped(args[0])
			if lerr != nil {
				return typed{}, true, lerr
			}
			err = sqlerr.Errorf(sqlerr.UndefinedFunction, "function row_to_json(%s) does not exist", x.t.Type.PGName())
		}
		return typed{}, err != nil, err
	}
	switch {
	case name == "to_jsonb" && len(args) == 1:
		x, err := c.jsonbRecord(fields)
		return x, true, err
	case name == "to_json" && len(args) == 1, name == "row_to_json" && len(args) == 1:
		x, err := c.jsonRecord(fields, expr.Literal(row.Bool(false)))
		return x, true, err
	case name == "row_to_json" && len(args) == 2:
		pretty, err := c.lowerAs(args[1], row.TypeBool)
		if err != nil {
			return typed{}, true, err
		}
		if pretty.t.Type != row.TypeBool && pretty.t.Type != row.TypeNull {
			return typed{}, true, sqlerr.Errorf(sqlerr.UndefinedFunction, "function row_to_json(record, %s) does not exist", pretty.t.Type.PGName())
		}
		x, err := c.jsonRecord(fields, pretty.e)
		if err != nil {
			return typed{}, true, err
		}
		// row_to_json is strict: NULL when pretty is.
		return typed{e: expr.If(expr.IsNull(pretty.e), expr.TypedNull(row.TypeJSON), x.e), t: row.ColumnType{Type: row.TypeJSON, Nullable: true}}, true, nil
	}
	return typed{}, true, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(args))
}

// recordFields returns the fields of n when it is a record: ROW(...) or a
// whole-row reference to a FROM item (a name that is no column but a FROM
// item's alias, or alias.*). ok is false for other nodes.
func (c *exprCtx) recordFields(n *pg.Node) ([]jsonField, bool, error) {
	if r := n.GetRowExpr(); r != nil {
		fields := make([]jsonField, len(r.Args))
		for i, a := range r.Args {
			fields[i] = jsonField{name: "f" + strconv.Itoa(i+1), node: a}
			sub, ok, err := c.recordFields(a)
			if err != nil {
				return nil, false, err
			}
			if ok {
				fields[i].record = sub
			}
		}
		return fields, true, nil
	}
	alias, ok, err := c.wholeRowAlias(n)
	if err != nil || !ok {
		return nil, false, err
	}
	outer := !c.scope.hasTableLevel(alias, false)
	var fields []jsonField
	for _, col := range c.scope.cols {
		if col.table != alias || col.hidden || col.outer != outer {
			continue
		}
		ref := &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: []*pg.Node{
			{Node: &pg.Node_String_{String_: &pg.String{Sval: alias}}},
			{Node: &pg.Node_String_{String_: &pg.String{Sval: col.name}}}}}}}
		fields = append(fields, jsonField{name: col.name, node: ref})
	}
	return fields, true, nil
}

// wholeRowAlias is the FROM item alias n refers to as a whole row: t.*,
// or a bare name t that no column has (as in PostgreSQL, a column of that
// name wins); t.* of an unknown t is 42P01.
func (c *exprCtx) wholeRowAlias(n *pg.Node) (string, bool, error) {
	cr := n.GetColumnRef()
	if cr == nil || c.scope == nil {
		return "", false, nil
	}
	table, col, star, err := columnRefName(cr)
	switch {
	case err != nil:
		return "", false, nil
	case star && table != "":
		if !c.scope.hasTable(table) {
			return "", false, sqlerr.Errorf(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", table)
		}
		return table, true, nil
	case star || table != "":
		return "", false, nil
	}
	if _, err := c.scope.resolve("", col); err == nil || sqlerr.Code(err) != sqlerr.UndefinedColumn || c.p.outerHasColumn(col) {
		return "", false, nil
	}
	return col, c.scope.hasTable(col), nil
}

// jsonRecord is the json text of a record (json_row), pretty a boolean
// expression.
func (c *exprCtx) jsonRecord(fields []jsonField, pretty expr.Expr) (typed, error) {
	nested := func(fs []jsonField) (typed, error) { return c.jsonRecord(fs, expr.Literal(row.Bool(false))) }
	leaf := func(x typed) (expr.Expr, error) { return jsonValueArg(x), nil }
	args, err := c.recordArgs(fields, nested, leaf)
	if err != nil {
		return typed{}, err
	}
	return c.check(expr.Call(expr.FuncJSONRow, append([]expr.Expr{pretty}, args...)...))
}

// jsonbRecord is to_jsonb of a record: the jsonb object of its fields.
func (c *exprCtx) jsonbRecord(fields []jsonField) (typed, error) {
	args, err := c.recordArgs(fields, c.jsonbRecord, c.jsonbValue)
	if err != nil {
		return typed{}, err
	}
	return c.check(expr.Call(expr.FuncJSONBuildObject, args...))
}

// recordArgs lowers a record's fields to name, value argument pairs: a
// nested record by nested, any other field by leaf over its text-typed
// value.
func (c *exprCtx) recordArgs(fields []jsonField, nested func([]jsonField) (typed, error), leaf func(typed) (expr.Expr, error)) ([]expr.Expr, error) {
	var args []expr.Expr
	for _, f := range fields {
		var v expr.Expr
		if f.record != nil {
			x, err := nested(f.record)
			if err != nil {
				return nil, err
			}
			v = x.e
		} else {
			x, err := c.lowerAs(f.node, row.TypeText)
			if err != nil {
				return nil, err
			}
			if v, err = leaf(x); err != nil {
				return nil, err
			}
		}
		args = append(args, expr.Literal(row.Text(f.name)), v)
	}
	return args, nil
}

// outerHasColumn reports whether an enclosing query has a column named
// col: as in PostgreSQL, such a column wins over a whole-row reference
// to a FROM item of the same name.
func (p *Planner) outerHasColumn(col string) bool {
	for _, o := range p.outers {
		if _, err := o.resolve("", col); err == nil {
			return true
		}
	}
	return false
}
