package expr

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// jsonb operators and functions, with PostgreSQL 15's semantics.

func jsonbArg(d row.Datum) row.JSON { return d.JSON() }

// isScalar reports whether j is a top-level scalar (PostgreSQL's raw
// scalar).
func isScalar(j row.JSON) bool { return j.Kind != row.JSONArray && j.Kind != row.JSONObject }

// typeJSONGet types j -> key|index and its variants: (jsonb, text|int) to
// result, NULL when the element is missing.
func typeJSONGet(result row.Type) func([]row.ColumnType) (row.ColumnType, error) {
	return typeJSONGetOf(row.TypeJSONB, result)
}

// typeJSONGetOf types -> and ->> on a document of type in (json or jsonb).
func typeJSONGetOf(in, result row.Type) func([]row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		if !is(args[0], in) || !is(args[1], row.TypeText, row.TypeInt64) {
			return row.ColumnType{}, typeSig("jsonb operator", args)
		}
		return row.ColumnType{Type: result, Nullable: true}, nil
	}
}

// jsonGet is j -> k: an object's field by key, an array's element by
// index (negative counts from the end); missing is false otherwise.
func jsonGet(j row.JSON, k row.Datum) (row.JSON, bool) {
	if k.Type() == row.TypeText {
		return j.Lookup(k.Text())
	}
	return jsonIndex(j, k.Int64())
}

func jsonIndex(j row.JSON, i int64) (row.JSON, bool) {
	if j.Kind != row.JSONArray {
		return row.JSON{}, false
	}
	n := int64(len(j.Elems))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return row.JSON{}, false
	}
	return j.Elems[i], true
}

// jsonText is ->>'s result: a string's text, NULL for json null, the text
// form otherwise.
func jsonText(j row.JSON) row.Datum {
	switch j.Kind {
	case row.JSONString:
		return row.Text(j.Str)
	case row.JSONNull:
		return row.Null()
	}
	return row.Text(j.String())
}

func evalJSONGet(a, b row.Datum) (row.Datum, error) {
	if v, ok := jsonGet(jsonbArg(a), b); ok {
		return row.JSONB(v), nil
	}
	return row.Null(), nil
}

func evalJSONGetText(a, b row.Datum) (row.Datum, error) {
	if v, ok := jsonGet(jsonbArg(a), b); ok {
		return jsonText(v), nil
	}
	return row.Null(), nil
}

func typeJSONPath(result row.Type) func([]row.ColumnType) (row.ColumnType, error) {
	return typeJSONPathOf(row.TypeJSONB, result)
}

// typeJSONPathOf types #> and #>> on a document of type in.
func typeJSONPathOf(in, result row.Type) func([]row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		if !is(args[0], in) {
			return row.ColumnType{}, typeSig("jsonb_extract_path", args)
		}
		for _, a := range args[1:] {
			if !is(a, row.TypeText) {
				return row.ColumnType{}, typeSig("jsonb_extract_path", args)
			}
		}
		return row.ColumnType{Type: result, Nullable: true}, nil
	}
}

// jsonPath walks path from j: keys into objects, integers (negative from
// the end) into arrays. A NULL path element gives NULL.
func jsonPath(args []row.Datum) (row.JSON, bool) {
	j := jsonbArg(args[0])
	for _, p := range args[1:] {
		if p.IsNull() {
			return row.JSON{}, false
		}
		var ok bool
		switch j.Kind {
		case row.JSONObject:
			j, ok = j.Lookup(p.Text())
		case row.JSONArray:
			i, isIndex := pathIndex(p)
			if !isIndex {
				return row.JSON{}, false
			}
			j, ok = jsonIndex(j, i)
		}
		if !ok {
			return row.JSON{}, false
		}
	}
	return j, true
}

// pathIndex reads a path element that steps into an array (json and
// jsonb alike): an integer, negative from the end.
func pathIndex(p row.Datum) (int64, bool) {
	i, err := strconv.ParseInt(strings.TrimSpace(p.Text()), 10, 32)
	return i, err == nil
}

func evalJSONPath(args []row.Datum) (row.Datum, error) {
	if v, ok := jsonPath(args); ok {
		return row.JSONB(v), nil
	}
	return row.Null(), nil
}

func evalJSONPathText(args []row.Datum) (row.Datum, error) {
	if v, ok := jsonPath(args); ok {
		return jsonText(v), nil
	}
	return row.Null(), nil
}

// evalJSONContains is a @> b (JsonbDeepContains).
func evalJSONContains(a, b row.Datum) (row.Datum, error) {
	x, y := jsonbArg(a), jsonbArg(b)
	if isScalar(x) && !isScalar(y) {
		return row.False, nil // a raw scalar contains no container
	}
	if y.Kind != row.JSONObject && x.Kind == row.JSONArray && isScalar(y) {
		y = row.JSON{Kind: row.JSONArray, Elems: []row.JSON{y}} // an array contains its top-level scalars
	}
	return row.Bool(jsonContains(x, y)), nil
}

func jsonContains(x, y row.JSON) bool {
	if x.Kind != y.Kind {
		return false
	}
	switch x.Kind {
	case row.JSONObject:
		if len(y.Keys) > len(x.Keys) {
			return false
		}
		for i, k := range y.Keys {
			v, ok := x.Lookup(k)
			if !ok || !jsonContains(v, y.Vals[i]) {
				return false
			}
		}
		return true
	case row.JSONArray:
		for _, e := range y.Elems {
			found := false
			for _, f := range x.Elems {
				if jsonContains(f, e) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return row.JSONEqual(x, y)
}

// evalJSONExists is j ? key: a top-level object key, or a string element
// of a top-level array (or the string itself).
func evalJSONExists(a, b row.Datum) (row.Datum, error) {
	return row.Bool(jsonExists(jsonbArg(a), b.Text())), nil
}

func jsonExists(j row.JSON, key string) bool {
	switch j.Kind {
	case row.JSONObject:
		_, ok := j.Lookup(key)
		return ok
	case row.JSONArray:
		for _, e := range j.Elems {
			if e.Kind == row.JSONString && e.Str == key {
				return true
			}
		}
		return false
	case row.JSONString:
		return j.Str == key
	}
	return false
}

// evalJSONConcat is a || b: two objects merge (b's keys win); otherwise
// both are taken as arrays (a non-array as a one-element array) and
// concatenated.
func evalJSONConcat(a, b row.Datum) (row.Datum, error) {
	x, y := jsonbArg(a), jsonbArg(b)
	if x.Kind == row.JSONObject && y.Kind == row.JSONObject {
		return row.JSONB(row.JSONObjectOf(append(append([]string(nil), x.Keys...), y.Keys...),
			append(append([]row.JSON(nil), x.Vals...), y.Vals...))), nil
	}
	elems := func(j row.JSON) []row.JSON {
		if j.Kind == row.JSONArray {
			return j.Elems
		}
		return []row.JSON{j}
	}
	out := append(append([]row.JSON(nil), elems(x)...), elems(y)...)
	return row.JSONB(row.JSON{Kind: row.JSONArray, Elems: out}), nil
}

func typeJSONDelete(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeJSONB) || !is(args[1], row.TypeText, row.TypeInt64) {
		return row.ColumnType{}, typeSig("jsonb operator -", args)
	}
	return row.ColumnType{Type: row.TypeJSONB}, nil
}

var errDeleteScalar = &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot delete from scalar"}

// evalJSONDelete is j - key (an object's key, or an array's string
// elements equal to it) and j - index (an array element).
func evalJSONDelete(a, b row.Datum) (row.Datum, error) {
	j := jsonbArg(a)
	if isScalar(j) {
		return row.Null(), errDeleteScalar
	}
	if b.Type() == row.TypeInt64 {
		if j.Kind == row.JSONObject {
			return row.Null(), &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot delete from object using integer index"}
		}
		i, n := b.Int64(), int64(len(j.Elems))
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return a, nil
		}
		out := append(append([]row.JSON(nil), j.Elems[:i]...), j.Elems[i+1:]...)
		return row.JSONB(row.JSON{Kind: row.JSONArray, Elems: out}), nil
	}
	key := b.Text()
	if j.Kind == row.JSONObject {
		out := row.JSON{Kind: row.JSONObject}
		for i, k := range j.Keys {
			if k != key {
				out.Keys, out.Vals = append(out.Keys, k), append(out.Vals, j.Vals[i])
			}
		}
		return row.JSONB(out), nil
	}
	out := row.JSON{Kind: row.JSONArray}
	for _, e := range j.Elems {
		if e.Kind != row.JSONString || e.Str != key {
			out.Elems = append(out.Elems, e)
		}
	}
	return row.JSONB(out), nil
}

func evalJSONTypeof(a row.Datum) (row.Datum, error) {
	names := map[row.JSONKind]string{row.JSONNull: "null", row.JSONString: "string", row.JSONNumber: "number",
		row.JSONBool: "boolean", row.JSONArray: "array", row.JSONObject: "object"}
	return row.Text(names[jsonbArg(a).Kind]), nil
}

func evalJSONArrayLength(a row.Datum) (row.Datum, error) {
	j := jsonbArg(a)
	switch {
	case isScalar(j):
		return row.Null(), &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot get array length of a scalar"}
	case j.Kind == row.JSONObject:
		return row.Null(), &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot get array length of a non-array"}
	}
	return row.Int64(int64(len(j.Elems))), nil
}

// typeToJSONB accepts the types to_jsonb converts: every scalar type but
// timestamptz (whose JSON form is in the session's zone: refused).
func typeToJSONB(args []row.ColumnType) (row.ColumnType, error) {
	for _, a := range args {
		if a.Type == row.TypeTimestampTZ {
			return row.ColumnType{}, evalErr(CodeFeatureNotSupported, "timestamp with time zone values in jsonb are not supported")
		}
	}
	return row.ColumnType{Type: row.TypeJSONB}, nil
}

// ToJSON converts a datum to jsonb as PostgreSQL's to_jsonb does: numbers
// as numbers (a float's NaN and infinities as strings), booleans,
// jsonb as itself, date and timestamp in ISO 8601 ("2024-01-31",
// "2024-01-31T10:00:00"), everything else as the string of its text
// form; NULL as json null.
func ToJSON(d row.Datum) (row.JSON, error) {
	switch d.Type() {
	case row.TypeNull:
		return row.JSON{Kind: row.JSONNull}, nil
	case row.TypeBool:
		return row.JSON{Kind: row.JSONBool, Bool: d.Bool()}, nil
	case row.TypeInt64:
		return row.JSON{Kind: row.JSONNumber, Num: row.NumericFromInt64(d.Int64())}, nil
	case row.TypeNumeric, row.TypeFloat64:
		// Through the text form, as PostgreSQL does (a float keeps its
		// shortest round-trip digits); NaN and the infinities are no
		// JSON numbers.
		j, err := row.ParseJSON(d.String())
		if err != nil || j.Kind != row.JSONNumber {
			return row.JSON{Kind: row.JSONString, Str: d.String()}, nil
		}
		return j, nil
	case row.TypeJSONB:
		return d.JSON(), nil
	case row.TypeJSON:
		// A json document is its jsonb value (json::jsonb), not a string.
		b, err := jsonTextToJSONB(d)
		if err != nil {
			return row.JSON{}, err
		}
		return b.JSON(), nil
	case row.TypeTimestamp:
		return row.JSON{Kind: row.JSONString, Str: strings.Replace(d.String(), " ", "T", 1)}, nil
	case row.TypeTimestampTZ:
		return row.JSON{}, evalErr(CodeFeatureNotSupported, "timestamp with time zone values in jsonb are not supported")
	}
	return row.JSON{Kind: row.JSONString, Str: d.String()}, nil
}

func evalToJSONB(a row.Datum) (row.Datum, error) {
	j, err := ToJSON(a)
	if err != nil {
		return row.Null(), err
	}
	return row.JSONB(j), nil
}

func evalJSONBuildArray(args []row.Datum) (row.Datum, error) {
	out := row.JSON{Kind: row.JSONArray, Elems: make([]row.JSON, 0, len(args))}
	for _, a := range args {
		j, err := ToJSON(a)
		if err != nil {
			return row.Null(), err
		}
		out.Elems = append(out.Elems, j)
	}
	return row.JSONB(out), nil
}

func evalJSONBuildObject(args []row.Datum) (row.Datum, error) {
	if len(args)%2 != 0 {
		return row.Null(), &EvalError{Code: CodeInvalidParameterValue, Msg: "argument list must have even number of elements"}
	}
	keys := make([]string, 0, len(args)/2)
	vals := make([]row.JSON, 0, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		k := args[i]
		switch k.Type() {
		case row.TypeNull:
			return row.Null(), evalErr(CodeInvalidParameterValue, "argument %d: key must not be null", i+1)
		case row.TypeJSONB:
			return row.Null(), &EvalError{Code: CodeInvalidParameterValue, Msg: "key value must be scalar, not array, composite, or json"}
		}
		kj, err := ToJSON(k)
		if err != nil {
			return row.Null(), err
		}
		key := kj.Str
		if kj.Kind != row.JSONString {
			key = kj.String()
		}
		v, err := ToJSON(args[i+1])
		if err != nil {
			return row.Null(), err
		}
		keys, vals = append(keys, key), append(vals, v)
	}
	return row.JSONB(row.JSONObjectOf(keys, vals)), nil
}

// parseJSONB is text::jsonb.
func parseJSONB(s string) (row.Datum, error) {
	j, err := row.ParseJSON(s)
	if err != nil {
		var se *row.JSONSyntaxError
		switch {
		case errors.As(err, &se) && se.Unicode:
			return row.Null(), &EvalError{Code: "22P05", Msg: "unsupported Unicode escape sequence"}
		case errors.As(err, &se):
			return row.Null(), &EvalError{Code: CodeInvalidTextRepr, Msg: "invalid input syntax for type json"}
		case errors.Is(err, row.ErrNumericOverflow):
			return row.Null(), &EvalError{Code: CodeNumericValueOutOfRange, Msg: "value overflows numeric format"}
		}
		return row.Null(), evalErr(CodeInvalidTextRepr, "invalid input syntax for type json")
	}
	return row.JSONB(j), nil
}

// castFromJSONB is jsonb::bool, ::numeric, ::bigint, ::float8: the value
// must be a scalar of the matching kind.
func castFromJSONB(d row.Datum, to row.Type) (row.Datum, error) {
	j := d.JSON()
	switch {
	case to == row.TypeBool && j.Kind == row.JSONBool:
		return row.Bool(j.Bool), nil
	case to != row.TypeBool && j.Kind == row.JSONNumber:
		return CastDatum(j.Num, to)
	}
	kinds := map[row.JSONKind]string{row.JSONNull: "null", row.JSONString: "string", row.JSONNumber: "numeric",
		row.JSONBool: "boolean", row.JSONArray: "array", row.JSONObject: "object"}
	return row.Null(), evalErr(CodeInvalidParameterValue, "cannot cast jsonb %s to type %s", kinds[j.Kind], to.PGName())
}

func typeSig1(a, result row.Type) func([]row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		if !is(args[0], a) {
			return row.ColumnType{}, typeSig("function", args)
		}
		return row.ColumnType{Type: result}, nil
	}
}

func evalJSONNumber(a, b row.Datum) (row.Datum, error) {
	if a.Decimal().Form != 0 { // NaN and the infinities are strings
		return row.JSONB(row.JSON{Kind: row.JSONString, Str: a.String()}), nil
	}
	return row.JSONB(row.JSONNum(a, int(min(max(b.Int64(), 0), row.NumericMaxScale)))), nil
}
