package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Array operators (||, @>, <@, &&) and functions (array_cat,
// array_append, array_prepend, array_position, array_upper,
// array_lower, array_to_string, string_to_array), resolved as
// PostgreSQL resolves their polymorphic signatures: an untyped operand
// next to an array is an array of the same type (or, where an element
// is expected, an element), and array_cat/array_append/array_prepend
// (anycompatiblearray) meet integers, numerics and floats at the widest
// element type, while @>, <@ and && (anyarray) need equal types.

// containment lowers @>, <@ and && of lowered operands: over arrays
// when one is an array, else jsonb's @> and <@.
func (c *exprCtx) containment(op string, x, y typed) (typed, error) {
	if !x.t.Type.IsArray() && !y.t.Type.IsArray() {
		if op == "&&" {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s && %s", pgArrayTypeName(x), pgArrayTypeName(y))
		}
		return c.jsonbContains(op, x, y)
	}
	x, y, err := c.sameArrays(op, x, y)
	if err != nil {
		return typed{}, err
	}
	f := expr.FuncArrayContains
	switch op {
	case "<@":
		x, y = y, x
	case "&&":
		f = expr.FuncArrayOverlap
	}
	return c.check(expr.Call(f, x.e, y.e))
}

// pgArrayTypeName names x's type in an error as PostgreSQL does.
func pgArrayTypeName(x typed) string {
	switch {
	case x.untyped():
		return "unknown"
	case x.t.Type == row.TypeInt64Array:
		return intWidthName(x.w) + "[]"
	case x.t.Type == row.TypeInt64:
		return intWidthName(x.w)
	}
	return x.t.Type.PGName()
}

// settleArray gives an untyped operand (or a NULL) array type t.
func (c *exprCtx) settleArray(x typed, t row.Type, w IntWidth) (typed, error) {
	if x.t.Type == row.TypeNull && !x.untyped() {
		return typed{e: expr.TypedNull(t), t: row.ColumnType{Type: t, Nullable: true}, w: w}, nil
	}
	if !x.untyped() {
		return x, nil
	}
	y, err := c.settle(x, t)
	y.w = w
	return y, err
}

// sameArrays settles the operands of @>, <@ and && to one array type.
func (c *exprCtx) sameArrays(op string, x, y typed) (typed, typed, error) {
	var err error
	if x.t.Type.IsArray() {
		y, err = c.settleArray(y, x.t.Type, x.w)
	} else {
		x, err = c.settleArray(x, y.t.Type, y.w)
	}
	if err != nil {
		return typed{}, typed{}, err
	}
	if x.t.Type != y.t.Type {
		return typed{}, typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", pgArrayTypeName(x), op, pgArrayTypeName(y))
	}
	return x, y, nil
}

// arrayConcat lowers x || y (and array_cat, array_append,
// array_prepend, named by fn for errors) where one side is an array: an
// array with an array is array_cat, with an element array_append or
// array_prepend (array_cat over ARRAY[x]); an untyped operand is an array.
func (c *exprCtx) arrayConcat(fn string, x, y typed) (typed, error) {
	var err error
	switch {
	case x.t.Type.IsArray() && !y.t.Type.IsArray() && (y.untyped() || y.t.Type == row.TypeNull) && fn != "array_append":
		y, err = c.settleArray(y, x.t.Type, x.w)
	case y.t.Type.IsArray() && !x.t.Type.IsArray() && (x.untyped() || x.t.Type == row.TypeNull) && fn != "array_prepend":
		x, err = c.settleArray(x, y.t.Type, y.w)
	}
	if err != nil {
		return typed{}, err
	}
	bad := func() error {
		if fn == "||" {
			return sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s || %s", pgArrayTypeName(x), pgArrayTypeName(y))
		}
		return sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s, %s) does not exist", fn, pgArrayTypeName(x), pgArrayTypeName(y))
	}
	// Element types, met as anycompatible does.
	ex, ey := elemOf(x), elemOf(y)
	if ex.untyped() {
		ex, err = c.settle(ex, ey.t.Type)
	}
	if ey.untyped() {
		ey, err = c.settle(ey, ex.t.Type)
	}
	if err != nil {
		return typed{}, err
	}
	et := ex.t.Type
	switch {
	case ex.t.Type == ey.t.Type, ey.t.Type == row.TypeNull:
	case ex.t.Type == row.TypeNull:
		et = ey.t.Type
	case ex.t.Type.IsNumeric() && ey.t.Type.IsNumeric():
		et = promoteNumeric([]typed{ex, ey})[0].t.Type
		if et == row.TypeInt64 {
			et = promoteNumeric([]typed{ey, ex})[0].t.Type
		}
	default:
		return typed{}, bad()
	}
	at, ok := row.ArrayOf(et)
	if !ok {
		return typed{}, sqlerr.Unsupported("arrays of type " + et.PGName())
	}
	w := wider(x.w, y.w)
	xs := [2]typed{x, y}
	for i, v := range xs {
		if v.t.Type.IsArray() {
			if v.t.Type != at {
				v.e = expr.Cast(v.e, at)
			}
		} else {
			if v.t.Type != et && v.t.Type != row.TypeNull {
				v.e = expr.Cast(v.e, et)
			}
			v.e = arrayOf(et, v.e)
		}
		xs[i] = v
	}
	if !x.t.Type.IsArray() && !y.t.Type.IsArray() {
		return typed{}, bad()
	}
	z, err := c.check(expr.Call(expr.FuncArrayCat, xs[0].e, xs[1].e))
	if et == row.TypeInt64 {
		z.w = w
	}
	return z, err
}

// elemOf is x as an element: an array's element type, or x itself.
func elemOf(x typed) typed {
	if x.t.Type.IsArray() {
		return typed{t: row.ColumnType{Type: x.t.Type.ElemType(), Nullable: true}, w: x.w}
	}
	return x
}

// arrayFunc2 lowers the array functions of arrayfuncs.go; ok is false
// for other names.
func (c *exprCtx) arrayFunc2(name string, args []*pg.Node) (typed, bool, error) {
	arity := map[string][2]int{"array_cat": {2, 2}, "array_append": {2, 2}, "array_prepend": {2, 2},
		"array_position": {2, 3}, "array_upper": {2, 2}, "array_lower": {2, 2},
		"array_to_string": {2, 3}, "string_to_array": {2, 3}}
	n, ok := arity[name]
	if !ok {
		return typed{}, false, nil
	}
	xs, err := c.lowerEach(args)
	if err != nil {
		return typed{}, true, err
	}
	if len(xs) < n[0] || len(xs) > n[1] {
		return typed{}, true, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, argTypeNames(xs))
	}
	y, err := c.arrayCall(name, xs)
	return y, true, err
}

func (c *exprCtx) lowerEach(args []*pg.Node) ([]typed, error) {
	xs := make([]typed, len(args))
	for i, n := range args {
		var err error
		if xs[i], err = c.lowerTyped(n); err != nil {
			return nil, err
		}
	}
	return xs, nil
}

func (c *exprCtx) arrayCall(name string, xs []typed) (typed, error) {
	switch name {
	case "array_cat":
		var err error
		if !xs[0].t.Type.IsArray() && !xs[1].t.Type.IsArray() {
			if !isUntypedOrNull(xs[0]) || !isUntypedOrNull(xs[1]) || (!xs[0].untyped() && !xs[1].untyped()) {
				return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function array_cat(%s, %s) does not exist", pgArrayTypeName(xs[0]), pgArrayTypeName(xs[1]))
			}
			// Untyped alone: text[], as PostgreSQL resolves unknown.
			xs[0], err = c.settleArray(xs[0], row.TypeTextArray, 0)
		}
		if err != nil {
			return typed{}, err
		}
		return c.arrayConcat(name, xs[0], xs[1])
	case "array_append", "array_prepend":
		a, e := 0, 1
		if name == "array_prepend" {
			a, e = 1, 0
		}
		var err error
		if xs[a], xs[e], err = c.meetElem(name, xs[a], xs[e]); err != nil {
			return typed{}, err
		}
		return c.arrayConcat(name, xs[0], xs[1])
	case "array_position":
		var err error
		if xs[0], xs[1], err = c.meetElem(name, xs[0], xs[1]); err == nil && len(xs) == 3 {
			xs[2], err = c.settle(xs[2], row.TypeInt64)
		}
		if err != nil {
			return typed{}, err
		}
		if len(xs) == 3 && xs[2].t.Type != row.TypeInt64 && xs[2].t.Type != row.TypeNull {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function array_position(%s) does not exist", argTypeNames(xs))
		}
		y, err := c.check(expr.Call(expr.FuncArrayPosition, exprs(xs)...))
		y.w = IntWidth4
		return y, err
	case "array_upper", "array_lower":
		f := expr.FuncArrayUpper
		if name == "array_lower" {
			f = expr.FuncArrayLower
		}
		if xs[0].untyped() {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(unknown, %s) does not exist", name, pgArrayTypeName(xs[1]))
		}
		var err error
		if xs[1], err = c.settle(xs[1], row.TypeInt64); err != nil {
			return typed{}, err
		}
		if !xs[0].t.Type.IsArray() || (xs[1].t.Type != row.TypeInt64 && xs[1].t.Type != row.TypeNull) {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, argTypeNames(xs))
		}
		y, err := c.check(expr.Call(f, xs[0].e, xs[1].e))
		y.w = IntWidth4
		return y, err
	case "array_to_string":
		if xs[0].untyped() {
			return typed{}, sqlerr.Errorf(sqlerr.DatatypeMismatch, "could not determine polymorphic type because input has type unknown")
		}
		if !xs[0].t.Type.IsArray() {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function array_to_string(%s) does not exist", argTypeNames(xs))
		}
		if xs[0].t.Type == row.TypeTimestampTZArray {
			// The elements are shown in the session's time zone.
			y, _, err := c.timestamptzArrayCast(xs[0], row.TypeTextArray)
			if err != nil {
				return typed{}, err
			}
			xs[0] = y
		}
		xs[0] = padCharArray(xs[0])
		return c.textArgsCall(expr.FuncArrayToString, "array_to_string", xs, 1)
	}
	return c.textArgsCall(expr.FuncStringToArray, "string_to_array", xs, 0)
}

func isUntypedOrNull(x typed) bool { return x.untyped() || x.t.Type == row.TypeNull }

// meetElem settles an array argument and an element argument of fn
// (array_append, array_prepend, array_position) to an array type and
// its element type: untyped ones after the other (text[] when both are),
// integers, numerics and floats at the widest.
func (c *exprCtx) meetElem(fn string, a, e typed) (typed, typed, error) {
	notExist := func() error {
		return sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s, %s) does not exist", fn, pgArrayTypeName(a), pgArrayTypeName(e))
	}
	if e.t.Type.IsArray() {
		return typed{}, typed{}, sqlerr.Unsupported(fn + " of an array (multidimensional arrays)")
	}
	var err error
	if !a.t.Type.IsArray() {
		if !isUntypedOrNull(a) {
			return typed{}, typed{}, notExist()
		}
		et := e.t.Type
		if isUntypedOrNull(e) {
			et = row.TypeText
		}
		at, ok := row.ArrayOf(et)
		if !ok {
			return typed{}, typed{}, sqlerr.Unsupported("arrays of type " + et.PGName())
		}
		if a, err = c.settleArray(a, at, e.w); err != nil {
			return typed{}, typed{}, err
		}
	}
	if e, err = c.settle(e, a.t.Type.ElemType()); err != nil {
		return typed{}, typed{}, err
	}
	et := a.t.Type.ElemType()
	switch {
	case e.t.Type == et || e.t.Type == row.TypeNull:
		return a, e, nil
	case !et.IsNumeric() || !e.t.Type.IsNumeric():
		return typed{}, typed{}, notExist()
	}
	to := promoteNumeric([]typed{elemOf(a), e})
	if to[0].t.Type == et {
		to = promoteNumeric([]typed{e, elemOf(a)})
	}
	wide := to[0].t.Type
	if wide != et {
		at, _ := row.ArrayOf(wide)
		a = typed{e: expr.Cast(a.e, at), t: row.ColumnType{Type: at, Nullable: a.t.Nullable}}
	}
	if e.t.Type != wide {
		e = typed{e: expr.Cast(e.e, wide), t: row.ColumnType{Type: wide, Nullable: e.t.Nullable}}
	}
	return a, e, nil
}

// textArgsCall calls f with xs[from:] settled to text (42883 when one is
// of another type).
func (c *exprCtx) textArgsCall(f expr.Func, name string, xs []typed, from int) (typed, error) {
	for i := from; i < len(xs); i++ {
		var err error
		if xs[i], err = c.settle(xs[i], row.TypeText); err != nil {
			return typed{}, err
		}
		if xs[i].t.Type != row.TypeText && xs[i].t.Type != row.TypeNull {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, argTypeNames(xs))
		}
	}
	return c.check(expr.Call(f, exprs(xs)...))
}
