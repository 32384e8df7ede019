package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Arrays: one-dimensional arrays of smallint, integer, bigint (int64
// elements, the width kept in typed.w for the wire OID), float8,
// numeric, text and boolean (row/array.go, expr/array.go).

// arrayElemType maps an array type name (int[], text[]) to its row type.
// Element type modifiers (varchar(3)[], numeric(5,2)[]) are refused: the
// engine would not apply them to the elements.
func arrayElemType(tn *pg.TypeName) (row.Type, error) {
	elem := &pg.TypeName{Names: tn.Names, Typmods: tn.Typmods}
	et, err := baseType(elem)
	if err != nil {
		return row.TypeInvalid, err
	}
	if len(tn.Typmods) > 0 && et != row.TypeText {
		// varchar(n)[] and char(n)[] are text[] with the element's
		// modifier (TypeModFromName); numeric(p,s)[] would need the
		// scale on every element.
		return row.TypeInvalid, sqlerr.Unsupported("array types with a type modifier other than varchar(n)[] and char(n)[]")
	}
	t, ok := row.ArrayOf(et)
	if !ok {
		return row.TypeInvalid, sqlerr.Unsupported("arrays of type " + et.PGName())
	}
	return t, nil
}

// arrayConstructor lowers ARRAY[x, ...]: the elements unified to one
// type (text when all are untyped, as in PostgreSQL).
func (c *exprCtx) arrayConstructor(a *pg.A_ArrayExpr) (typed, error) {
	if len(a.Elements) == 0 {
		return typed{}, sqlerr.Errorf(sqlerr.InvalidParameterType /* 42P18 indeterminate_datatype */, "cannot determine type of empty array")
	}
	for _, n := range a.Elements {
		if n.GetAArrayExpr() != nil {
			return typed{}, sqlerr.Unsupported("multidimensional arrays")
		}
	}
	xs, err := c.lowerList(a.Elements)
	if err != nil {
		return typed{}, err
	}
	untyped := make([]bool, len(xs))
	for i, n := range a.Elements {
		k := n.GetAConst()
		untyped[i] = n.GetParamRef() != nil || k != nil && (k.Isnull || k.GetSval() != nil)
	}
	for i := range xs {
		if xs[i], err = c.settle(xs[i], row.TypeText); err != nil {
			return typed{}, err
		}
	}
	et := row.TypeText
	for _, x := range xs {
		if x.t.Type != row.TypeNull {
			et = x.t.Type
			break
		}
	}
	es, mod := exprs(xs), TypeMod{}
	if et == row.TypeText {
		es, mod = textArrayElems(xs, untyped)
	}
	y, err := c.check(arrayOf(et, es...))
	y.w = widthOf(xs)
	y.mod = mod
	return y, err
}

// textArrayElems is the elements and the modifier of ARRAY[xs...] of
// text elements, as PostgreSQL resolves their common type: the modifier
// the elements share (char(n)[], varchar(n)[]); else the type of the
// first typed element, so that a char(n) one first makes a bpchar[]
// (typmod -1) whose char(n) elements keep their padding (each its own
// n) while text elements stay as they are, and a varchar one a
// varchar[]; else text[].
func textArrayElems(xs []typed, untyped []bool) ([]expr.Expr, TypeMod) {
	es := exprs(xs)
	if m := sharedCharMod(xs); m.Kind != ModNone {
		return es, m
	}
	for i, x := range xs {
		if untyped[i] || x.t.Type == row.TypeNull {
			continue
		}
		switch charMod(x.mod).Kind {
		case ModVarchar:
			return es, TypeMod{Kind: ModVarchar}
		case ModBpchar:
			for j, y := range xs {
				if y.mod.Kind == ModBpchar && y.mod.N > 0 {
					es[j] = expr.Call(expr.FuncRPad, y.e, expr.Literal(row.Int64(int64(y.mod.N))))
				}
			}
			return es, TypeMod{Kind: ModBpchar}
		}
		return es, TypeMod{}
	}
	return es, TypeMod{}
}

// elemArrayMod is the modifier of an array of values with modifier m: a
// char(n)[] keeps n, since its elements are padded to n on output as
// PostgreSQL's (padded when stored) are; a varchar(n)[] is a varchar[]
// without a length, as PostgreSQL describes array_agg's result.
func elemArrayMod(m TypeMod) TypeMod {
	switch m.Kind {
	case ModBpchar:
		return m
	case ModVarchar:
		return TypeMod{Kind: ModVarchar}
	}
	return TypeMod{}
}

// sharedCharMod is the array modifier of ARRAY[xs...] of text elements:
// that of the elements' common char(n) or varchar(n) modifier when every
// element other than a NULL literal has it, else none.
func sharedCharMod(xs []typed) TypeMod {
	var m TypeMod
	for _, x := range xs {
		if x.t.Type == row.TypeNull {
			continue
		}
		if charMod(x.mod).Kind == ModNone || (m.Kind != ModNone && x.mod != m) {
			return TypeMod{}
		}
		m = x.mod
	}
	return elemArrayMod(m)
}

// arrayOf is ARRAY[xs...] with elements of type et. The engine's ARRAY
// takes its type from its first non-NULL element and makes a text[] of
// NULLs alone, so other element types get a cast that keeps such an
// array, ARRAY[NULL::int], an int[] (the cast returns an array that
// already has the type as it is).
func arrayOf(et row.Type, xs ...expr.Expr) expr.Expr {
	a := expr.Call(expr.FuncArray, xs...)
	if at, ok := row.ArrayOf(et); ok && et != row.TypeText {
		return expr.Cast(a, at)
	}
	return a
}

// emptyArray is ARRAY[]::t[].
func emptyArray(t row.Type) (typed, error) {
	d, err := row.Array(t, nil)
	if err != nil {
		return typed{}, sqlerr.Errorf(sqlerr.InternalError, "empty array: %v", err)
	}
	return typed{e: expr.Literal(d), t: row.ColumnType{Type: t}}, nil
}

// subscript lowers a[i]; slices and chained subscripts are refused.
func (c *exprCtx) subscript(ind *pg.A_Indirection) (typed, error) {
	if len(ind.Indirection) != 1 || ind.Indirection[0].GetAIndices() == nil {
		return typed{}, sqlerr.Unsupported("this indirection (only a[i] on an array)")
	}
	idx := ind.Indirection[0].GetAIndices()
	if idx.IsSlice {
		return typed{}, sqlerr.Unsupported("array slices")
	}
	a, err := c.lowerTyped(ind.Arg)
	if err != nil {
		return typed{}, err
	}
	if !a.t.Type.IsArray() {
		return typed{}, sqlerr.Errorf(sqlerr.DatatypeMismatch, "cannot subscript type %s because it does not support subscripting", a.t.Type.PGName())
	}
	i, err := c.lowerAs(idx.Uidx, row.TypeInt64)
	if err != nil {
		return typed{}, err
	}
	if i.t.Type != row.TypeInt64 && i.t.Type != row.TypeNull {
		return typed{}, sqlerr.Errorf(sqlerr.DatatypeMismatch, "array subscript must have type integer")
	}
	y, err := c.check(expr.Call(expr.FuncArrayElem, a.e, i.e))
	y.mod = charMod(a.mod) // an element of varchar(n)[] is varchar(n)
	return withWidth(y, err, a.w)
}

// arrayFunc lowers array_length(a, dim) and cardinality(a); ok is false
// for other names.
func (c *exprCtx) arrayFunc(name string, args []*pg.Node) (y typed, ok bool, err error) {
	var f expr.Func
	var arity int
	switch name {
	case "array_length":
		f, arity = expr.FuncArrayLength, 2
	case "cardinality":
		f, arity = expr.FuncCardinality, 1
	default:
		return typed{}, false, nil
	}
	xs := make([]typed, len(args))
	for i, n := range args {
		if xs[i], err = c.lowerTyped(n); err != nil {
			return typed{}, true, err
		}
		want := row.TypeInt64
		if i == 0 {
			want = row.TypeText
		}
		if xs[i].untyped() && i == 0 {
			return typed{}, true, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(unknown) is not unique", name)
		}
		if xs[i], err = c.settle(xs[i], want); err != nil {
			return typed{}, true, err
		}
	}
	if len(xs) != arity || (len(xs) > 0 && !xs[0].t.Type.IsArray()) {
		return typed{}, true, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, argTypeNames(xs))
	}
	y, err = c.check(expr.Call(f, exprs(xs)...))
	return y, true, err
}

func argTypeNames(xs []typed) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += x.t.Type.PGName()
	}
	return s
}

// arrayPGType returns the type OID of an array type, the integer width
// choosing between int2[], int4[] and int8[].
func arrayPGType(t row.Type, w IntWidth) uint32 {
	switch t {
	case row.TypeInt64Array:
		switch w {
		case IntWidth2:
			return 1005
		case IntWidth4:
			return 1007
		}
		return 1016
	case row.TypeFloat64Array:
		return 1022
	case row.TypeNumericArray:
		return 1231
	case row.TypeTextArray:
		return 1009
	case row.TypeBoolArray:
		return 1000
	case row.TypeDateArray:
		return 1182
	case row.TypeTimestampArray:
		return 1115
	case row.TypeUUIDArray:
		return 2951
	case row.TypeBytesArray:
		return 1001
	case row.TypeJSONBArray:
		return 3807
	case row.TypeJSONArray:
		return 199
	case row.TypeTimestampTZArray:
		return 1185
	case row.TypeRecordArray:
		return 2287
	}
	return 0
}

// arrayCast lowers x::t[]: an untyped literal is read by array_in at plan
// time; a typed array casts element by element. Integer elements of
// int2[] and int4[] are range-checked as the narrow integer casts are.
func (c *exprCtx) arrayCast(tc *pg.TypeCast, x typed, to row.Type) (typed, error) {
	w := IntWidthFromName(tc.TypeName)
	var y typed
	var err error
	switch {
	case x.untyped():
		y, err = c.settle(x, to)
	case x.t.Type == to:
		y = x
	case expr.CanCast(x.t.Type, to):
		y, err = c.check(expr.Cast(x.e, to))
	default:
		return typed{}, sqlerr.Errorf("42846", "cannot cast type %s to %s", x.t.Type.PGName(), to.PGName())
	}
	if err != nil {
		return typed{}, err
	}
	if to == row.TypeInt64Array && w != 0 && (x.t.Type != to || x.w == 0 || x.w > w) {
		if y, err = c.check(expr.Call(expr.FuncArrayNarrow, y.e, expr.Literal(row.Int64(int64(w))))); err != nil {
			return typed{}, err
		}
	}
	y.w = w
	return y, nil
}

// assignArray is the assignment of x to a column of array type t (an
// int2[] or int4[] when w is set): arrays of numbers cast element-wise,
// as PostgreSQL's assignment casts do, and integer elements are
// range-checked for the column's width.
func assignArray(x typed, t row.Type, w IntWidth, col string) (expr.Expr, error) {
	e := x.e
	switch {
	case x.t.Type == t:
	case x.t.Type == row.TypeNull,
		x.t.Type.IsArray() && x.t.Type.ElemType().IsNumeric() && t.ElemType().IsNumeric():
		e = expr.Cast(x.e, t)
	default:
		return expr.Expr{}, sqlerr.Errorf(sqlerr.DatatypeMismatch, "column %q is of type %s but expression is of type %s",
			col, t.PGName(), x.t.Type.PGName())
	}
	if t == row.TypeInt64Array && w != 0 && (x.t.Type != t || x.w == 0 || x.w > w) {
		e = expr.Call(expr.FuncArrayNarrow, e, expr.Literal(row.Int64(int64(w))))
	}
	return e, nil
}

// anyAllArray lowers x op ANY/ALL (a) over an array value a.
// code is array_cmp_any's op argument (anyAllOperator).
func (c *exprCtx) anyAllArray(code int, all bool, x, a typed) (typed, error) {
	if a.param > 0 {
		// x = ANY($1): the parameter is an array of x's type.
		var err error
		if x, err = c.settle(x, row.TypeText); err != nil {
			return typed{}, err
		}
		at, ok := row.ArrayOf(x.t.Type)
		if !ok {
			return typed{}, sqlerr.Unsupported("arrays of type " + x.t.Type.PGName())
		}
		if a, err = c.settle(a, at); err != nil {
			return typed{}, err
		}
	}
	if !a.t.Type.IsArray() {
		return typed{}, sqlerr.Errorf(sqlerr.WrongObjectType, "op ANY/ALL (array) requires array on right side")
	}
	x, err := c.settle(x, a.t.Type.ElemType())
	if err != nil {
		return typed{}, err
	}
	if err := checkPatternArray(code, x, a); err != nil {
		return typed{}, err
	}
	return c.check(expr.Call(expr.FuncArrayCmpAny, x.e, a.e, expr.Literal(row.Int64(int64(code))), expr.Literal(row.Bool(all))))
}

// unnestCall lowers unnest(a) in FROM: one column named unnest of a's
// element type (and integer width).
func (c *exprCtx) unnestCall(args []*pg.Node) (expr.TableCall, []column, error) {
	if len(args) != 1 {
		return expr.TableCall{}, nil, sqlerr.Unsupported("unnest with other than one argument")
	}
	x, err := c.lowerTyped(args[0])
	if err != nil {
		return expr.TableCall{}, nil, err
	}
	if x.untyped() || x.t.Type == row.TypeNull {
		return expr.TableCall{}, nil, sqlerr.Errorf("42725", "function unnest(unknown) is not unique")
	}
	if !x.t.Type.IsArray() {
		return expr.TableCall{}, nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function unnest(%s) does not exist", x.t.Type.PGName())
	}
	col := column{name: "unnest", typ: row.ColumnType{Type: x.t.Type.ElemType(), Nullable: true}}
	if x.t.Type == row.TypeInt64Array {
		col.w = x.w
	}
	if x.t.Type == row.TypeTextArray {
		// The elements of a char(n)[] are char(n) values, padded on
		// output (stored without their padding).
		col.mod = charMod(x.mod)
	}
	return expr.TableCall{Func: expr.TableUnnest, Args: []expr.Expr{x.e}}, []column{col}, nil
}

// subqueryArrayType is the type of ARRAY(subquery) over values of type
// t (text for an untyped NULL column, as PostgreSQL resolves unknown).
func subqueryArrayType(t row.Type) (row.Type, error) {
	if t == row.TypeNull {
		t = row.TypeText
	}
	if t.IsArray() {
		return row.TypeInvalid, sqlerr.Unsupported("ARRAY(subquery) of arrays (multidimensional arrays)")
	}
	at, ok := row.ArrayOf(t)
	if !ok {
		return row.TypeInvalid, sqlerr.Unsupported("arrays of type " + t.PGName())
	}
	return at, nil
}

// arraySubLink lowers ARRAY(subquery) over r: the array of the
// subquery's values for each row of r (for a correlated subquery, those
// of the row's keys), '{}' when there are none. It is concat_agg of
// one-element arrays per key, in the subquery's ORDER BY (then value
// order; without ORDER BY, value order), attached as a correlated
// aggregate.
func (c *exprCtx) arraySubLink(r *rel, outer *scope, sl *pg.SubLink) (typed, error) {
	sp, err := c.p.planSubLinkQuery(sl, r, outer, true, c.depth)
	if err != nil {
		return typed{}, err
	}
	vt := sp.valueType()
	at, err := subqueryArrayType(vt.Type)
	if err != nil {
		return typed{}, err
	}
	w := IntWidth(0)
	if sp.agg == nil {
		w = sp.sub.scope.cols[sp.nKeys].w
	}
	if sp.agg != nil {
		// Exactly one value per outer row.
		v, err := sp.perRowValue(r)
		if err != nil {
			return typed{}, err
		}
		return typed{e: arrayOf(at.ElemType(), v.e), t: row.ColumnType{Type: at}, w: v.w}, nil
	}
	nk := sp.nKeys
	agg := plan.Aggregate{Func: plan.AggConcat, Expr: arrayOf(at.ElemType(), expr.Column(nk))}
	for _, o := range sp.order {
		agg.OrderBy = append(agg.OrderBy, plan.AggOrder{Expr: expr.Column(o.Column), Desc: o.Desc, NullsLast: o.NullsLast})
	}
	g := plan.NewReduce(sp.sub.plan(), columns(nk), agg)
	empty, err := row.Array(at, nil)
	if err != nil {
		return typed{}, sqlerr.Errorf(sqlerr.InternalError, "ARRAY(subquery): %v", err)
	}
	i, err := attachPerKeyDistinct(r, sp.outerKeys, g, []row.ColumnType{{Type: at, Nullable: true}}, []expr.Expr{expr.Literal(empty)}, sp.safeKeys())
	if err != nil {
		return typed{}, err
	}
	return typed{e: expr.Column(i), t: row.ColumnType{Type: at}, w: w}, nil
}
