package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// jsonOp lowers ->, ->>, #> and #>> on a json document x (its text as
// written: the results keep the sub-document's text); json has none of
// jsonb's other operators (42883, as in PostgreSQL).
func (c *exprCtx) jsonOp(op string, x typed, r *pg.Node) (typed, bool, error) {
	switch op {
	case "->", "->>", "#>", "#>>":
		return c.jsonAccess(op, x, r, jsonTextAccess)
	}
	return typed{}, true, sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: json %s unknown", op)
}

// jsonFunc lowers the json functions Tandem has (json_typeof,
// json_extract_path(_text), json_array_length over a document; to_json,
// json_build_array and json_build_object of values); ok is false for
// other names.
func (c *exprCtx) jsonFunc(name string, args []*pg.Node) (typed, bool, error) {
	f, ok := map[string]expr.Func{
		"json_typeof":            expr.FuncJSONTextTypeof,
		"json_extract_path":      expr.FuncJSONTextPath,
		"json_extract_path_text": expr.FuncJSONTextPathText,
		"json_array_length":      expr.FuncJSONTextArrayLength,
		"to_json":                expr.FuncToJSON,
		"json_build_array":       expr.FuncJSONTextBuildArray,
		"json_build_object":      expr.FuncJSONTextBuildObject,
	}[name]
	if !ok {
		return typed{}, false, nil
	}
	values := f == expr.FuncToJSON || f == expr.FuncJSONTextBuildArray || f == expr.FuncJSONTextBuildObject
	es := make([]expr.Expr, len(args))
	for i, a := range args {
		want := row.TypeText
		if i == 0 && !values {
			want = row.TypeJSON
		}
		x, err := c.lowerAs(a, want)
		if err != nil {
			return typed{}, true, err
		}
		es[i] = x.e
		switch {
		case f == expr.FuncJSONTextBuildObject && i%2 == 0:
			es[i] = jsonKeyArg(x)
		case values:
			es[i] = jsonValueArg(x)
		}
	}
	y, err := c.check(expr.Call(f, es...))
	if f == expr.FuncJSONTextArrayLength {
		y.w = IntWidth4
	}
	return y, true, err
}

// refuseJSONKey refuses a json value where rows are grouped, made
// distinct or sorted by it: PostgreSQL's json has no equality or ordering
// operator.
func refuseJSONKey(t row.Type, what string) error {
	if t != row.TypeJSON {
		return nil
	}
	return sqlerr.Errorf(sqlerr.UndefinedFunction, "could not identify %s operator for type json", what)
}

// jsonObject lowers json_object(text[]) and json_object(text[], text[])
// (jsonb_object likewise): untyped arguments are text[] literals, other
// types 42883.
func (c *exprCtx) jsonObject(name string, args []*pg.Node) (typed, error) {
	if len(args) < 1 || len(args) > 2 {
		return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(args))
	}
	f := expr.FuncJSONObject
	if name == "jsonb_object" {
		f = expr.FuncJSONBObject
	}
	es := make([]expr.Expr, len(args))
	for i, a := range args {
		x, err := c.lowerAs(a, row.TypeTextArray)
		if err != nil {
			return typed{}, err
		}
		if x.t.Type != row.TypeTextArray && x.t.Type != row.TypeNull {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, x.t.Type.PGName())
		}
		es[i] = x.e
		if x.t.Type == row.TypeNull {
			es[i] = expr.TypedNull(row.TypeTextArray)
		}
	}
	return c.check(expr.Call(f, es...))
}
