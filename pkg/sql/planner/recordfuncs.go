package planner

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// returnsRecord reports whether the function in FROM returns PostgreSQL's
// "record", whose columns a column definition list names.
func returnsRecord(name string) bool {
	switch name {
	case "jsonb_to_record", "jsonb_to_recordset", "json_to_record", "json_to_recordset":
		return true
	}
	return false
}

// recordCall lowers json(b)_to_record(set)(doc) AS x(col type, ...). The
// table function gives each column's member as text (as written for json
// and jsonb columns); it returns the columns' defined types too, which
// rangeFunction applies after the FlatMap with the input function's
// semantics: '1.5' into an integer column is 22P02, a string too long
// for varchar(n) 22001, as in PostgreSQL.
func (c *exprCtx) recordCall(name string, args []*pg.Node, coldefs []*pg.Node) (expr.TableCall, []column, []*pg.TypeName, error) {
	if len(coldefs) == 0 {
		return expr.TableCall{}, nil, nil, sqlerr.New(sqlerr.SyntaxError, `a column definition list is required for functions returning "record"`)
	}
	if len(args) != 1 {
		return expr.TableCall{}, nil, nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(args))
	}
	doc := row.TypeJSONB
	if !strings.HasPrefix(name, "jsonb_") {
		doc = row.TypeJSON
	}
	x, err := c.lowerAs(args[0], doc)
	if err != nil {
		return expr.TableCall{}, nil, nil, err
	}
	if x.t.Type != doc && x.t.Type != row.TypeNull {
		return expr.TableCall{}, nil, nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, x.t.Type.PGName())
	}
	es := []expr.Expr{x.e}
	cols := make([]column, 0, len(coldefs))
	types := make([]*pg.TypeName, 0, len(coldefs))
	seen := map[string]bool{}
	for _, n := range coldefs {
		cd := n.GetColumnDef()
		if cd == nil || cd.TypeName == nil {
			return expr.TableCall{}, nil, nil, sqlerr.Unsupported("this kind of column definition")
		}
		if seen[cd.Colname] {
			return expr.TableCall{}, nil, nil, sqlerr.Errorf("42701", "column name %q specified more than once", cd.Colname)
		}
		seen[cd.Colname] = true
		t, _, err := typeAndPrecision(cd.TypeName)
		if err != nil {
			return expr.TableCall{}, nil, nil, err
		}
		if t.IsArray() || t == row.TypeRecord {
			return expr.TableCall{}, nil, nil, sqlerr.Unsupported(fmt.Sprintf("%s columns of type %s", name, t.PGName()))
		}
		raw := t == row.TypeJSON || t == row.TypeJSONB
		es = append(es, expr.Literal(row.Text(cd.Colname)), expr.Literal(row.Bool(raw)))
		cols = append(cols, column{name: cd.Colname, typ: row.ColumnType{Type: row.TypeText, Nullable: true}})
		types = append(types, cd.TypeName)
	}
	call := expr.TableCall{Func: expr.TableFunc(name), Args: es}
	if _, err := call.OutputTypes(c.scope.types()); err != nil {
		return expr.TableCall{}, nil, nil, err
	}
	return call, cols, types, nil
}

// castRecordColumns converts r's columns that a column definition list
// typed (text until now; casts by column) to their types, in place.
func (c *exprCtx) castRecordColumns(r *rel, casts map[int]*pg.TypeName) error {
	es := make([]expr.Expr, r.arity())
	s := &scope{cols: append([]column(nil), r.scope.cols...)}
	for i, col := range s.cols {
		es[i] = expr.Column(i)
		tn, ok := casts[i]
		if !ok {
			continue
		}
		y, err := c.inputCast(col, tn)
		if err != nil {
			return err
		}
		es[i] = y.e.Permute([]int{i})
		s.cols[i].typ, s.cols[i].w, s.cols[i].mod = y.t, y.w, y.mod
		s.cols[i].typ.Nullable = true
	}
	r.project(es, s)
	return nil
}

// inputCast lowers the conversion of a text column to type tn as an
// input function converts: as a cast, but a type modifier assigns (a
// too long string is 22001, not truncated).
func (c *exprCtx) inputCast(col column, tn *pg.TypeName) (typed, error) {
	one := &exprCtx{p: c.p, scope: &scope{cols: []column{{name: "?field?", typ: col.typ}}}, clause: c.clause, depth: c.depth}
	ref := &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: []*pg.Node{{Node: &pg.Node_String_{String_: &pg.String{Sval: "?field?"}}}}}}}
	tc := &pg.TypeCast{Arg: ref, TypeName: tn}
	to, prec, err := typeAndPrecision(tn)
	if err != nil {
		return typed{}, err
	}
	x, err := one.castTyped(tc, to)
	if err != nil || prec >= 0 {
		return one.withPrecision(x, err, prec)
	}
	mod, err := TypeModFromName(tn)
	if err != nil || mod.Kind == ModNone {
		return x, err
	}
	return one.check2(convert(x, mod, false))
}
