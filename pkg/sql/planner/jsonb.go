package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// jsonbOp lowers the jsonb operators ->, ->>, #>, #>>, @>, <@, ?, ?| and
// ?&; ok is false for other operators.
func (c *exprCtx) jsonbOp(op string, l, r *pg.Node) (typed, bool, error) {
	switch op {
	case "->", "->>", "#>", "#>>", "@>", "<@", "?", "?|", "?&":
	default:
		return typed{}, false, nil
	}
	x, err := c.lowerAs(l, row.TypeJSONB)
	if err != nil {
		return typed{}, true, err
	}
	if x.t.Type == row.TypeJSON {
		return c.jsonOp(op, x, r)
	}
	if x.t.Type != row.TypeJSONB && x.t.Type != row.TypeNull {
		return typed{}, true, sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s %s unknown", pgTypeName(x), op)
	}
	switch op {
	case "->", "->>", "#>", "#>>":
		return c.jsonAccess(op, x, r, jsonbAccess)
	case "@>", "<@":
		y, err := c.lowerAs(r, row.TypeJSONB)
		if err != nil {
			return typed{}, true, err
		}
		z, err := c.jsonbContains(op, x, y)
		return z, true, err
	case "?":
		y, err := c.lowerAs(r, row.TypeText)
		if err != nil {
			return typed{}, true, err
		}
		z, err := c.check(expr.Call(expr.FuncJSONExists, x.e, y.e))
		return z, true, err
	}
	// ?| and ?&: any or all of the keys (NULL keys are skipped, as in
	// PostgreSQL); NULL when the jsonb is.
	keys, err := c.textArrayOperand(r, op)
	if err != nil {
		return typed{}, true, err
	}
	tests := make([]expr.Expr, len(keys))
	for i, k := range keys {
		skip := expr.Literal(row.Bool(op == "?&"))
		tests[i] = expr.Coalesce(expr.Call(expr.FuncJSONExists, x.e, k), skip)
	}
	var all expr.Expr
	switch {
	case len(tests) == 0:
		all = expr.Literal(row.Bool(op == "?&"))
	case op == "?|":
		all = expr.Or(tests...)
	default:
		all = expr.And(tests...)
	}
	z, err := c.check(expr.If(expr.IsNull(x.e), expr.TypedNull(row.TypeBool), all))
	return z, true, err
}

// jsonbContains lowers x @> y and x <@ y of lowered jsonb operands
// (untyped ones become jsonb).
func (c *exprCtx) jsonbContains(op string, x, y typed) (typed, error) {
	var err error
	if x, err = c.settle(x, row.TypeJSONB); err != nil {
		return typed{}, err
	}
	if x.t.Type != row.TypeJSONB && x.t.Type != row.TypeNull {
		return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s %s unknown", pgTypeName(x), op)
	}
	if y, err = c.settle(y, row.TypeJSONB); err != nil {
		return typed{}, err
	}
	if op == "<@" {
		x, y = y, x
	}
	return c.check(expr.Call(expr.FuncJSONContains, x.e, y.e))
}

func pgTypeName(x typed) string {
	if x.t.Type == row.TypeInt64 {
		return intWidthName(x.w)
	}
	return x.t.Type.String()
}

// textArrayOperand lowers the text[] operand of #>, #>>, ?| and ?& to its
// elements: an array literal ('{a,b}') or an ARRAY[...] constructor. Other
// array values need array types, which Tandem does not have yet.
func (c *exprCtx) textArrayOperand(n *pg.Node, op string) ([]expr.Expr, error) {
	if arr := n.GetAArrayExpr(); arr != nil {
		xs := make([]expr.Expr, len(arr.Elements))
		for i, el := range arr.Elements {
			x, err := c.lowerAs(el, row.TypeText)
			if err != nil {
				return nil, err
			}
			if x.t.Type != row.TypeText && x.t.Type != row.TypeNull {
				return nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: jsonb %s %s[]", op, pgTypeName(x))
			}
			xs[i] = x.e
		}
		return xs, nil
	}
	x, err := c.lowerTyped(n)
	if err != nil {
		return nil, err
	}
	if x.lit == nil {
		return nil, sqlerr.Unsupported("a text[] operand of jsonb's " + op + " other than an array literal or ARRAY[...]")
	}
	elems, err := parseTextArray(*x.lit)
	if err != nil {
		return nil, err
	}
	out := make([]expr.Expr, len(elems))
	for i, e := range elems {
		out[i] = expr.TypedNull(row.TypeText)
		if e != nil {
			out[i] = expr.Literal(row.Text(*e))
		}
	}
	return out, nil
}

// parseTextArray parses a one-dimensional text array literal as
// PostgreSQL's array_in does: {a, "b c", NULL, "x\"y"}; nil elements are
// NULL.
func parseTextArray(s string) ([]*string, error) {
	bad := func() error {
		return sqlerr.Errorf(sqlerr.InvalidTextRepresentation, "malformed array literal: %q", s)
	}
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return nil, bad()
	}
	body := t[1 : len(t)-1]
	if strings.TrimSpace(body) == "" {
		return nil, nil
	}
	var out []*string
	i := 0
	for {
		for i < len(body) && isArraySpace(body[i]) {
			i++
		}
		var sb strings.Builder
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			for {
				if i >= len(body) {
					return nil, bad()
				}
				if body[i] == '"' {
					i++
					break
				}
				var ok bool
				if i, ok = unescapeArrayByte(&sb, body, i); !ok {
					return nil, bad()
				}
			}
			for i < len(body) && isArraySpace(body[i]) {
				i++
			}
		} else {
			for i < len(body) && body[i] != ',' {
				if c := body[i]; c == '{' || c == '}' || c == '"' {
					return nil, bad()
				}
				var ok bool
				if i, ok = unescapeArrayByte(&sb, body, i); !ok {
					return nil, bad()
				}
			}
		}
		v := sb.String()
		if !quoted {
			v = strings.TrimRight(v, " \t\n\r\v\f")
			if v == "" {
				return nil, bad()
			}
		}
		if !quoted && strings.EqualFold(v, "null") {
			out = append(out, nil)
		} else {
			out = append(out, &v)
		}
		if i >= len(body) {
			return out, nil
		}
		if body[i] != ',' {
			return nil, bad()
		}
		i++
	}
}

func isArraySpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// jsonbFunc lowers the jsonb functions; ok is false for other names.
func (c *exprCtx) jsonbFunc(name string, args []*pg.Node) (typed, bool, error) {
	if y, ok, err := c.jsonRecordCall(name, args); ok {
		return y, true, err
	}
	if name == "json_object" || name == "jsonb_object" {
		y, err := c.jsonObject(name, args)
		return y, true, err
	}
	var f expr.Func
	switch name {
	case "jsonb_build_object":
		f = expr.FuncJSONBuildObject
	case "jsonb_build_array":
		f = expr.FuncJSONBuildArray
	case "to_jsonb":
		f = expr.FuncToJSONB
	case "jsonb_typeof":
		f = expr.FuncJSONTypeof
	case "jsonb_array_length":
		f = expr.FuncJSONArrayLength
	case "jsonb_extract_path":
		f = expr.FuncJSONPath
	case "jsonb_extract_path_text":
		f = expr.FuncJSONPathText
	default:
		return c.jsonFunc(name, args)
	}
	es := make([]expr.Expr, len(args))
	for i, a := range args {
		want := row.TypeText
		if i == 0 && (f == expr.FuncJSONTypeof || f == expr.FuncJSONArrayLength || f == expr.FuncJSONPath || f == expr.FuncJSONPathText) {
			want = row.TypeJSONB
		}
		x, err := c.lowerAs(a, want)
		if err != nil {
			return typed{}, true, err
		}
		if x.t.Type == row.TypeTimestampTZ && (f == expr.FuncToJSONB || f == expr.FuncJSONBuildArray || f == expr.FuncJSONBuildObject) {
			return typed{}, true, sqlerr.Unsupported("timestamp with time zone values in jsonb")
		}
		es[i] = x.e
		switch {
		case f == expr.FuncJSONBuildObject && i%2 == 0:
			es[i] = jsonKeyArg(x)
		case f == expr.FuncToJSONB || f == expr.FuncJSONBuildArray || f == expr.FuncJSONBuildObject:
			es[i] = jsonValueArg(x)
		}
	}
	y, err := c.check(expr.Call(f, es...))
	if f == expr.FuncJSONArrayLength {
		y.w = IntWidth4
	}
	return y, true, err
}

// jsonbConcat is jsonb || jsonb; an untyped operand is jsonb.
func (c *exprCtx) jsonbConcat(x, y typed) (typed, error) {
	var err error
	if x, err = c.settle(x, row.TypeJSONB); err != nil {
		return typed{}, err
	}
	if y, err = c.settle(y, row.TypeJSONB); err != nil {
		return typed{}, err
	}
	return c.check(expr.Call(expr.FuncJSONConcat, x.e, y.e))
}

// jsonbValue converts x to the jsonb value to_jsonb gives it: jsonb as
// is, a numeric with its SQL type's display scale, NULL as SQL NULL.
func (c *exprCtx) jsonbValue(x typed) (expr.Expr, error) {
	switch {
	case x.t.Type == row.TypeJSONB:
		return x.e, nil
	case x.t.Type == row.TypeNull:
		return expr.TypedNull(row.TypeJSONB), nil
	case x.t.Type == row.TypeTimestampTZ:
		return expr.Expr{}, sqlerr.Unsupported("timestamp with time zone values in jsonb")
	}
	return expr.Call(expr.FuncToJSONB, jsonValueArg(x)), nil
}

// jsonbAggregate plans jsonb_agg(x) and jsonb_object_agg(k, v): the
// engine aggregates jsonb values (x as to_jsonb gives it, a one-pair
// object for jsonb_object_agg), in value order (docs/sql.md).
func (a *aggScope) jsonbAggregate(inner *exprCtx, name string, fc *pg.FuncCall) (typed, error) {
	want, err := jsonAggArity(name, fc)
	if err != nil {
		return typed{}, err
	}
	xs := make([]typed, len(fc.Args))
	for i, n := range fc.Args {
		x, err := inner.lower(n)
		if err != nil {
			return typed{}, err
		}
		if err := refuseJSONKey(x.t.Type, "an equality"); fc.AggDistinct && err != nil {
			return typed{}, err
		}
		xs[i] = x
	}
	v, err := inner.jsonbValue(xs[len(xs)-1])
	if err != nil {
		return typed{}, err
	}
	arg := v
	if want == 2 {
		if xs[0].t.Type == row.TypeJSONB || xs[0].t.Type == row.TypeTimestampTZ {
			return typed{}, sqlerr.Errorf(sqlerr.InvalidParameterValue, "key value must be scalar, not array, composite, or json")
		}
		arg = expr.Call(expr.FuncJSONBuildObject, jsonKeyArg(xs[0]), v)
	}
	if err := refuseOuterAggregate(a.input, arg); err != nil {
		return typed{}, err
	}
	jt := row.ColumnType{Type: row.TypeJSONB, Nullable: true}
	return a.add(aggregate{fn: name, distinct: fc.AggDistinct, arg: arg, argType: jt, out: jt}), nil
}

// unescapeArrayByte writes the array element byte at body[i] to sb, the
// byte after it when it is a backslash, and returns the index after what
// it read; ok is false when a backslash ends body.
func unescapeArrayByte(sb *strings.Builder, body string, i int) (next int, ok bool) {
	if body[i] == '\\' {
		i++
		if i >= len(body) {
			return i, false
		}
	}
	sb.WriteByte(body[i])
	return i + 1, true
}

// jsonAccessFuncs are the functions of ->, ->>, #> and #>> for one of the
// json types.
type jsonAccessFuncs struct{ get, getText, path, pathText expr.Func }

var (
	jsonbAccess    = jsonAccessFuncs{expr.FuncJSONGet, expr.FuncJSONGetText, expr.FuncJSONPath, expr.FuncJSONPathText}
	jsonTextAccess = jsonAccessFuncs{expr.FuncJSONTextGet, expr.FuncJSONTextGetText, expr.FuncJSONTextPath, expr.FuncJSONTextPathText}
)

// jsonAccess lowers x op r for op one of ->, ->>, #> and #>> with fs.
func (c *exprCtx) jsonAccess(op string, x typed, r *pg.Node, fs jsonAccessFuncs) (typed, bool, error) {
	var call expr.Expr
	switch op {
	case "->", "->>":
		y, err := c.lowerAs(r, row.TypeText)
		if err != nil {
			return typed{}, true, err
		}
		f := fs.get
		if op == "->>" {
			f = fs.getText
		}
		call = expr.Call(f, x.e, y.e)
	default:
		path, err := c.textArrayOperand(r, op)
		if err != nil {
			return typed{}, true, err
		}
		f := fs.path
		if op == "#>>" {
			f = fs.pathText
		}
		call = expr.Call(f, append([]expr.Expr{x.e}, path...)...)
	}
	z, err := c.check(call)
	return z, true, err
}
