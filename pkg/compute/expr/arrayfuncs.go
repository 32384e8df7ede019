package expr

import (
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Array functions and operators with PostgreSQL's NULL rules:
// array_cat (||; the SQL layer's array_append(a, x) is array_cat(a,
// ARRAY[x])), @> and <@
// (array_contains), && (array_overlap), array_position, array_upper,
// array_lower, array_to_string and string_to_array. Element comparisons
// are SQL equality (a NULL element equals nothing), except
// array_position, which finds a NULL as IS NOT DISTINCT FROM does.

// arrayPair is the common array type of two operands that are arrays of
// one type or NULL.
func arrayPair(name string, args []row.ColumnType) (row.Type, error) {
	t, err := unify(name, args)
	if err != nil || (t != row.TypeNull && !t.IsArray()) {
		return row.TypeInvalid, typeSig(name, args)
	}
	return t, nil
}

// typeArrayCat is array_cat(a, b): NULL only when both are.
func typeArrayCat(args []row.ColumnType) (row.ColumnType, error) {
	t, err := arrayPair("array_cat", args)
	if err != nil {
		return row.ColumnType{}, err
	}
	if t == row.TypeNull {
		return row.ColumnType{}, evalErr(CodeDatatypeMismatch, "array_cat: operands have no array type")
	}
	return row.ColumnType{Type: t, Nullable: args[0].Nullable && args[1].Nullable}, nil
}

func evalArrayCat(a, b row.Datum) (row.Datum, error) {
	switch {
	case a.IsNull():
		return b, nil
	case b.IsNull():
		return a, nil
	}
	d, err := row.ArrayConcat(a.Type(), a, b)
	if err != nil {
		return row.Null(), evalErr(CodeDatatypeMismatch, "array_cat: %v", err)
	}
	return d, nil
}

func typeArrayContains(args []row.ColumnType) (row.ColumnType, error) {
	if _, err := arrayPair("array_contains", args); err != nil {
		return row.ColumnType{}, err
	}
	return row.ColumnType{Type: row.TypeBool}, nil
}

func typeArrayOverlap(args []row.ColumnType) (row.ColumnType, error) {
	if _, err := arrayPair("array_overlap", args); err != nil {
		return row.ColumnType{}, err
	}
	return row.ColumnType{Type: row.TypeBool}, nil
}

// containsElem reports whether some non-NULL element of elems equals x.
func containsElem(elems []row.Datum, x row.Datum) (bool, error) {
	if x.IsNull() {
		return false, nil
	}
	for _, e := range elems {
		if e.IsNull() {
			continue
		}
		c, err := compareDatums(e, x)
		if err != nil {
			return false, err
		}
		if c == 0 {
			return true, nil
		}
	}
	return false, nil
}

// evalArrayContains is a @> b: every element of b equals some element of
// a (so a NULL element of b makes it false, and the empty array is
// contained in every array).
func evalArrayContains(a, b row.Datum) (row.Datum, error) {
	ae := a.ArrayElems()
	for _, x := range b.ArrayElems() {
		ok, err := containsElem(ae, x)
		if err != nil || !ok {
			return row.Bool(false), err
		}
	}
	return row.Bool(true), nil
}

// evalArrayOverlap is a && b: some element of a equals some element of
// b.
func evalArrayOverlap(a, b row.Datum) (row.Datum, error) {
	ae := a.ArrayElems()
	for _, x := range b.ArrayElems() {
		ok, err := containsElem(ae, x)
		if err != nil || ok {
			return row.Bool(ok), err
		}
	}
	return row.Bool(false), nil
}

// typeArrayPosition is array_position(a, x [, start]).
func typeArrayPosition(args []row.ColumnType) (row.ColumnType, error) {
	if !isArray(args[0]) || (args[0].Type.IsArray() && !is(args[1], args[0].Type.ElemType())) ||
		(len(args) == 3 && !is(args[2], row.TypeInt64)) {
		return row.ColumnType{}, typeSig("array_position", args)
	}
	return row.ColumnType{Type: row.TypeInt64, Nullable: true}, nil
}

// evalArrayPosition returns the first position at or after start (1
// when absent) whose element IS NOT DISTINCT FROM x; NULL when there is
// none or a is NULL. A NULL start is 22004 as in PostgreSQL.
func evalArrayPosition(args []row.Datum) (row.Datum, error) {
	a, x := args[0], args[1]
	start := int64(1)
	if len(args) == 3 {
		if args[2].IsNull() {
			return row.Null(), evalErr(CodeNullValueNotAllowed, "initial position must not be null")
		}
		start = args[2].Int64()
	}
	if a.IsNull() {
		return row.Null(), nil
	}
	for i, e := range a.ArrayElems() {
		if int64(i+1) < start {
			continue
		}
		if e.IsNull() || x.IsNull() {
			if e.IsNull() && x.IsNull() {
				return row.Int64(int64(i + 1)), nil
			}
			continue
		}
		c, err := compareDatums(e, x)
		if err != nil {
			return row.Null(), err
		}
		if c == 0 {
			return row.Int64(int64(i + 1)), nil
		}
	}
	return row.Null(), nil
}

// typeArrayBound is array_upper(a, dim) and array_lower(a, dim).
func typeArrayBound(name string) func(args []row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		if !isArray(args[0]) || !is(args[1], row.TypeInt64) {
			return row.ColumnType{}, typeSig(name, args)
		}
		return row.ColumnType{Type: row.TypeInt64, Nullable: true}, nil
	}
}

// evalArrayBound returns a one-dimensional array's bounds (lower 1,
// upper its length); NULL for an empty array or another dimension.
func evalArrayBound(upper bool) func(a, dim row.Datum) (row.Datum, error) {
	return func(a, dim row.Datum) (row.Datum, error) {
		n := a.ArrayLen()
		if dim.Int64() != 1 || n == 0 {
			return row.Null(), nil
		}
		if upper {
			return row.Int64(int64(n)), nil
		}
		return row.Int64(1), nil
	}
}

func typeArrayToString(args []row.ColumnType) (row.ColumnType, error) {
	if !isArray(args[0]) || !is(args[1], row.TypeText) || (len(args) == 3 && !is(args[2], row.TypeText)) {
		return row.ColumnType{}, typeSig("array_to_string", args)
	}
	return row.ColumnType{Type: row.TypeText, Nullable: true}, nil
}

// evalArrayToString joins the elements' text forms with sep: NULL
// elements are skipped, or written as the third argument when it is
// given and not NULL. NULL when a or sep is.
func evalArrayToString(args []row.Datum) (row.Datum, error) {
	a, sep := args[0], args[1]
	if a.IsNull() || sep.IsNull() {
		return row.Null(), nil
	}
	null, withNull := "", len(args) == 3 && !args[2].IsNull()
	if withNull {
		null = args[2].Text()
	}
	var sb strings.Builder
	first := true
	for _, e := range a.ArrayElems() {
		if e.IsNull() && !withNull {
			continue
		}
		if !first {
			sb.WriteString(sep.Text())
		}
		first = false
		if e.IsNull() {
			sb.WriteString(null)
		} else {
			sb.WriteString(e.String())
		}
	}
	return row.Text(sb.String()), nil
}

func typeStringToArray(args []row.ColumnType) (row.ColumnType, error) {
	for _, a := range args {
		if !is(a, row.TypeText) {
			return row.ColumnType{}, typeSig("string_to_array", args)
		}
	}
	return row.ColumnType{Type: row.TypeTextArray, Nullable: true}, nil
}

// evalStringToArray splits s at sep: a NULL sep splits it into
// characters, an empty sep keeps it whole; an empty s gives the empty
// array. Fields equal to the third argument (when not NULL) become NULL.
// NULL when s is.
func evalStringToArray(args []row.Datum) (row.Datum, error) {
	s, sep := args[0], args[1]
	if s.IsNull() {
		return row.Null(), nil
	}
	var parts []string
	switch str := s.Text(); {
	case str == "":
	case sep.IsNull():
		for _, r := range str {
			parts = append(parts, string(r))
		}
	case sep.Text() == "":
		parts = []string{str}
	default:
		parts = strings.Split(str, sep.Text())
	}
	elems := make([]row.Datum, len(parts))
	for i, p := range parts {
		if len(args) == 3 && !args[2].IsNull() && p == args[2].Text() {
			continue
		}
		elems[i] = row.Text(p)
	}
	return buildArray(row.TypeTextArray, elems)
}
