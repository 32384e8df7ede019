package expr

import (
	"errors"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Arrays (one-dimensional, row/array.go): the ARRAY[...] constructor,
// a[i], array_length(a, 1), cardinality(a), casts between text and
// arrays and between arrays whose element types cast.

// typeArray is ARRAY[x, ...]: the elements share one type (the SQL
// layer casts them), untyped NULLs alone make a text[].
func typeArray(args []row.ColumnType) (row.ColumnType, error) {
	et, err := unify("ARRAY", args)
	if err != nil {
		return row.ColumnType{}, err
	}
	if et == row.TypeNull {
		et = row.TypeText
	}
	t, ok := row.ArrayOf(et)
	if !ok {
		return row.ColumnType{}, evalErr(CodeFeatureNotSupported, "arrays of type %s are not supported", et.PGName())
	}
	return row.ColumnType{Type: t}, nil
}

func evalArray(args []row.Datum) (row.Datum, error) {
	et := row.TypeText
	for _, a := range args {
		if !a.IsNull() {
			et = a.Type()
			break
		}
	}
	t, ok := row.ArrayOf(et)
	if !ok {
		return row.Null(), evalErr(CodeFeatureNotSupported, "arrays of type %s are not supported", et.PGName())
	}
	d, err := row.Array(t, args)
	if err != nil {
		return row.Null(), evalErr(CodeDatatypeMismatch, "ARRAY: %v", err)
	}
	return d, nil
}

// ArrayType returns the array type of elements of type elem, or an error
// with PostgreSQL's SQLSTATE for an element type without arrays.
func ArrayType(elem row.Type) (row.Type, error) {
	t, ok := row.ArrayOf(elem)
	if !ok {
		return row.TypeInvalid, evalErr(CodeFeatureNotSupported, "arrays of type %s are not supported", elem.PGName())
	}
	return t, nil
}

func isArray(a row.ColumnType) bool { return a.Type == row.TypeNull || a.Type.IsArray() }

// typeArrayElem is a[i]: the element type, NULL out of range.
func typeArrayElem(args []row.ColumnType) (row.ColumnType, error) {
	if !args[0].Type.IsArray() || !is(args[1], row.TypeInt64) {
		return row.ColumnType{}, evalErr(CodeDatatypeMismatch, "cannot subscript type %s because it does not support subscripting", args[0].Type.PGName())
	}
	return row.ColumnType{Type: args[0].Type.ElemType(), Nullable: true}, nil
}

func evalArrayElem(a, i row.Datum) (row.Datum, error) {
	n := i.Int64()
	elems := a.ArrayElems()
	if n < 1 || n > int64(len(elems)) {
		return row.Null(), nil
	}
	return elems[n-1], nil
}

// typeArrayLength is array_length(a, dim): NULL for an empty array and
// for a dimension the array does not have.
func typeArrayLength(args []row.ColumnType) (row.ColumnType, error) {
	if !isArray(args[0]) || !is(args[1], row.TypeInt64) {
		return row.ColumnType{}, typeSig("array_length", args)
	}
	return row.ColumnType{Type: row.TypeInt64, Nullable: true}, nil
}

func evalArrayLength(a, dim row.Datum) (row.Datum, error) {
	n := a.ArrayLen()
	if dim.Int64() != 1 || n == 0 {
		return row.Null(), nil
	}
	return row.Int64(int64(n)), nil
}

func typeCardinality(args []row.ColumnType) (row.ColumnType, error) {
	if !isArray(args[0]) {
		return row.ColumnType{}, typeSig("cardinality", args)
	}
	return row.ColumnType{Type: row.TypeInt64}, nil
}

func evalCardinality(a row.Datum) (row.Datum, error) {
	return row.Int64(int64(a.ArrayLen())), nil
}

// canCastArray: between arrays whose element types cast.
func canCastArray(from, to row.Type) bool {
	return from.IsArray() && to.IsArray() && CanCast(from.ElemType(), to.ElemType())
}

// castArray casts every element of d to the element type of to.
func castArray(d row.Datum, to row.Type) (row.Datum, error) {
	elems := d.ArrayElems()
	for i, e := range elems {
		c, err := CastDatum(e, to.ElemType())
		if err != nil {
			return row.Null(), err
		}
		elems[i] = c
	}
	return buildArray(to, elems)
}

func buildArray(t row.Type, elems []row.Datum) (row.Datum, error) {
	d, err := row.Array(t, elems)
	if err != nil {
		return row.Null(), evalErr(CodeInternal, "%v", err)
	}
	return d, nil
}

// parseArray is array_in: the text form, each element read by its
// type's input function (timestamptz elements without a zone in UTC).
func parseArray(s string, to row.Type) (row.Datum, error) { return ParseArrayIn(s, to, nil) }

// ParseArrayIn is array_in for an array of type to, with timestamptz
// elements without a zone read as local time in loc (nil: UTC), as a
// literal of the session's is.
func ParseArrayIn(s string, to row.Type, loc *time.Location) (row.Datum, error) {
	parts, err := row.ParseArrayText(s)
	if errors.Is(err, row.ErrArrayMultiDim) {
		return row.Null(), evalErr(CodeFeatureNotSupported, "multidimensional arrays are not supported: %q", s)
	}
	if err != nil {
		return row.Null(), evalErr(CodeInvalidTextRepr, "malformed array literal: %q", s)
	}
	elems := make([]row.Datum, len(parts))
	for i, p := range parts {
		if p.Null {
			continue
		}
		if to == row.TypeTextArray {
			elems[i] = row.Text(p.Text)
			continue
		}
		if to == row.TypeTimestampTZArray {
			if elems[i], err = ParseTemporal(p.Text, row.TypeTimestampTZ, loc); err != nil {
				return row.Null(), err
			}
			continue
		}
		if elems[i], err = parseText(p.Text, to.ElemType()); err != nil {
			return row.Null(), err
		}
	}
	return buildArray(to, elems)
}

func evalArrayNarrow(a, width row.Datum) (row.Datum, error) {
	r := int4Range
	switch width.Int64() {
	case 2:
		r = int2Range
	case 4:
	default:
		return row.Null(), evalErr(CodeInvalidParameterValue, "array_narrow: width %d is not 2 or 4", width.Int64())
	}
	narrow := narrowInt(r)
	for _, e := range a.ArrayElems() {
		if e.IsNull() {
			continue
		}
		if _, err := narrow(e); err != nil {
			return row.Null(), err
		}
	}
	return a, nil
}

// ArrayCmpOps are the comparisons of x op ANY/ALL (array), in the order
// of array_cmp_any's op argument.
var ArrayCmpOps = [...]Func{FuncEq, FuncNeq, FuncLt, FuncLte, FuncGt, FuncGte}

func typeArrayCmpAny(args []row.ColumnType) (row.ColumnType, error) {
	if !isArray(args[1]) || !is(args[2], row.TypeInt64) || !is(args[3], row.TypeBool) {
		return row.ColumnType{}, typeSig("array_cmp_any", args)
	}
	if args[1].Type.IsArray() && !comparable(args[0].Type, args[1].Type.ElemType()) {
		return row.ColumnType{}, evalErr(CodeUndefinedFunction, "operator does not exist: %s = %s", args[0].Type.PGName(), args[1].Type.ElemType().PGName())
	}
	return row.ColumnType{Type: row.TypeBool, Nullable: args[0].Nullable || args[1].Nullable || args[1].Type.IsArray()}, nil
}

// evalArrayCmpAny has PostgreSQL's NULL semantics: ANY is true if some
// comparison is, else NULL if some is NULL, else false (false over an
// empty array even for a NULL x); ALL dually; NULL for a NULL array.
func evalArrayCmpAny(args []row.Datum) (row.Datum, error) {
	x, a, op, all := args[0], args[1], args[2].Int64(), args[3].Bool()
	if a.IsNull() {
		return row.Null(), nil
	}
	if op < 0 || op >= int64(arrayOpCount) {
		return row.Null(), evalErr(CodeInvalidParameterValue, "array_cmp_any: operator %d", op)
	}
	sawNull := false
	for _, e := range a.ArrayElems() {
		if x.IsNull() || e.IsNull() {
			sawNull = true
			continue
		}
		holds, err := arrayOpHolds(op, x, e)
		if err != nil {
			return row.Null(), err
		}
		if holds != all {
			return row.Bool(!all), nil
		}
	}
	if sawNull {
		return row.Null(), nil
	}
	return row.Bool(all), nil
}

// cmpHolds reports whether comparison op (ArrayCmpOps' order) holds of
// a comparison result c.
func cmpHolds(op int64, c int) bool {
	switch op {
	case 0:
		return c == 0
	case 1:
		return c != 0
	case 2:
		return c < 0
	case 3:
		return c <= 0
	case 4:
		return c > 0
	default:
		return c >= 0
	}
}

func typeUnnest(args []row.Type) ([]row.ColumnType, error) {
	if len(args) != 1 || !args[0].IsArray() {
		return nil, evalErr(CodeUndefinedFunction, "function unnest(%s) does not exist", typeList(args))
	}
	return []row.ColumnType{{Type: args[0].ElemType(), Nullable: true}}, nil
}

func evalUnnest(args []row.Datum, emit func([]row.Datum) error) error {
	out := make([]row.Datum, 1)
	for _, e := range args[0].ArrayElems() {
		out[0] = e
		if err := emit(out); err != nil {
			return err
		}
	}
	return nil
}
