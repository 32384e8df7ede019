package expr

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Func names a scalar function applied by an OpCall node.
type Func uint8

// The supported functions. Their JSON names (Func.String) are stable wire
// names; never renumber-dependent.
const (
	FuncInvalid Func = iota
	// Logic and NULL tests.
	FuncNot    // NOT x
	FuncIsNull // x IS NULL (never NULL)
	FuncNullIf // NULLIF(a, b)
	// Comparison (int64 and float64 compare numerically with each other).
	FuncEq
	FuncNeq
	FuncLt
	FuncLte
	FuncGt
	FuncGte
	// Arithmetic: int64 op int64 is int64 (overflow is an error); with a
	// float64 operand the result is float64.
	FuncNeg
	FuncAdd
	FuncSub
	FuncMul
	FuncDiv // integer division truncates, as in Postgres
	FuncMod
	// Math.
	FuncAbs
	FuncRound // round(x) (half to even for float64, as Postgres' rint), round(x, digits)
	FuncFloor
	FuncCeil
	FuncSqrt
	FuncPower // float64, or numeric when an argument is numeric
	// Strings (lengths and positions count characters, not bytes).
	FuncLower
	FuncUpper
	FuncLength   // characters of text, octets of bytes
	FuncConcatOp // a || b: NULL if either is NULL; non-text operands print as text
	FuncConcat   // concat(args...): NULL arguments are skipped
	FuncTrim     // btrim(s) removes spaces; btrim(s, chars)
	FuncLTrim
	FuncRTrim
	FuncReplace  // replace(s, from, to)
	FuncPosition // position(sub IN s): 1-based, 0 when absent
	FuncSubstr   // substr(s, start[, count]), 1-based
	FuncLike     // s LIKE pattern
	FuncILike    // s ILIKE pattern
	FuncGreatest // greatest(args...), NULLs ignored
	FuncLeast    // least(args...), NULLs ignored
	// single_value(n, v) is v when n <= 1 and error 21000 otherwise: the
	// value of a scalar subquery, given the number of rows n it produced
	// and one of them v (NULL when n = 0). Raising the error per row lets
	// a maintained dataflow report it in its error collection, and
	// retract it when the subquery shrinks back to one row.
	FuncSingleValue
	// s ~ pattern: POSIX-style regular expression match (Go's RE2 syntax,
	// which agrees with Postgres on the common subset; backreferences and
	// lookaround are errors). Case-insensitive matching prefixes (?i).
	FuncRegexMatch
	// int2(x) and int4(x) are x as a SQL smallint / integer: the engine
	// keeps every integer in 64 bits, and the SQL layer calls these where
	// Postgres computes or converts to a narrower integer type, so that a
	// value outside that type's range fails with 22003 as in Postgres.
	// x is int64 (range-checked: "integer out of range"), float64 (rounded
	// half to even, then checked) or text (parsed: `value "…" is out of
	// range for type integer`).
	FuncInt2
	FuncInt4
	// Date/time functions. Those that depend on a time zone take it as a
	// text argument: the SQL layer passes the session's TimeZone, so the
	// expression itself is a pure function of its inputs.
	FuncTimezone       // timezone(zone, x): x AT TIME ZONE zone (timestamp <-> timestamptz)
	FuncTimestampTZIn  // timestamptz_in(text, zone): text to timestamptz, zone when the text has none
	FuncTimestampTZOut // timestamptz_out(x, zone): timestamptz to text shown in zone
	FuncTZPlus         // tz_plus(x, interval, zone): timestamptz + interval stepping days in zone
	FuncDatePart       // date_part(field, x[, zone]): float8
	FuncDateTrunc      // date_trunc(field, x[, zone])
	FuncToChar         // to_char(x, format[, zone])
	FuncAge            // age(a, b[, zone]): symbolic years, months, days
	FuncMakeDate       // make_date(year, month, day)
	FuncMakeTime       // make_time(hour, min, sec)
	FuncMakeTimestamp  // make_timestamp(year, month, day, hour, min, sec)
	FuncToTimestamp    // to_timestamp(seconds since the epoch): timestamptz
	FuncTimePrecision  // time_precision(x, p): x rounded to p fractional digits (timestamp(p) etc.)
	// More math over int64, float64 and numeric (numeric.go, math.go).
	FuncTrunc     // trunc(x[, digits]): towards zero
	FuncSign      // sign(x): -1, 0 or 1 in x's type
	FuncDivTrunc  // div(x, y): numeric quotient truncated towards zero
	FuncExp       // exp(x): float64, or numeric of a numeric
	FuncLn        // ln(x): float64, or numeric of a numeric
	FuncLog10     // log(x): base 10, float64 or numeric
	FuncTrimScale // trim_scale(x): x at its minimal display scale (1.50 is 1.5)
	// numeric_typmod(x, precision, scale) applies a numeric(p,s) column
	// type: rounds to scale digits, 22003 when the integer part is wider
	// than precision - scale.
	FuncNumericTypmod
	// varchar(x, n) and bpchar(x, n) are an explicit cast to varchar(n) /
	// char(n): truncate to n characters (char(n) values are stored without
	// their padding, see docs/sql.md). varchar_assign and bpchar_assign
	// are the assignment to such a column: 22001 when the value is longer
	// unless the excess is spaces.
	FuncVarchar
	FuncBpchar
	FuncVarcharAssign
	FuncBpcharAssign
	// numeric_var(n, sum, sum of squares, kind, scale): the variance or
	// standard deviation of integers and numerics from their count and
	// exact sums (numeric_var.go).
	FuncNumericVar
	// Text functions (text_funcs.go, format.go, regexp.go), as PostgreSQL's.
	FuncSplitPart     // split_part(s, delim, n)
	FuncConcatWS      // concat_ws(sep, args...): NULL arguments skipped
	FuncLPad          // lpad(s, n[, fill])
	FuncRPad          // rpad(s, n[, fill])
	FuncLeft          // left(s, n)
	FuncRight         // right(s, n)
	FuncInitcap       // initcap(s)
	FuncMD5           // md5(text or bytea): hex digest
	FuncFormat        // format(fmt, args...)
	FuncRegexpReplace // regexp_replace(s, pattern, replacement[, flags])
	FuncRegexpLike    // regexp_like(s, pattern[, flags])
	FuncRepeat        // repeat(s, n)
	FuncReverse       // reverse(s)
	FuncTranslate     // translate(s, from, to)
	FuncASCII         // ascii(s)
	FuncChr           // chr(n)
	FuncStartsWith    // starts_with(s, prefix)
	// numeric_text(x, scale): a numeric's text at a display scale the SQL
	// layer knows (values are stored without trailing zeros), for concat
	// and format.
	FuncNumericText
	// numeric_key(x): x at its minimal display scale (1.50 as 1.5), so
	// that equal numerics are equal bytes where rows are grouped or
	// matched by their encoding; other values unchanged.
	FuncNumericKey
	// More math (math.go, numeric_math.go).
	FuncLog     // log(b, x) over numerics
	FuncCbrt    // cbrt(x), float64
	FuncDegrees // degrees(x), float64
	FuncRadians // radians(x), float64
	FuncPi      // pi(), float64
	// jsonb (jsonb.go): -> and ->> by key (text) or index (int), #> and
	// #>> as jsonb_extract_path(_text)(j, path...), @> (<@ with the
	// arguments swapped), ?, || and - of jsonb, and its functions.
	FuncJSONGet
	FuncJSONGetText
	FuncJSONPath
	FuncJSONPathText
	FuncJSONContains
	FuncJSONExists
	FuncJSONConcat
	FuncJSONDelete
	FuncJSONTypeof
	FuncJSONArrayLength
	FuncToJSONB
	FuncJSONBuildArray
	FuncJSONBuildObject
	// jsonb_number(x numeric, scale) is x as a jsonb number printed with
	// the display scale its SQL type gives it (numeric datums do not
	// carry one), as PostgreSQL's to_jsonb(2.50) is 2.50.
	FuncJSONNumber
	// Arrays (array.go): ARRAY[...], a[i], array_length, cardinality.
	FuncArray
	FuncArrayElem
	FuncArrayLength
	FuncCardinality
	// array_narrow(a int64[], width) range-checks every element as
	// smallint (width 2) or integer (width 4) for int2[] and int4[].
	FuncArrayNarrow
	// array_cmp_any(x, a, op, all) is x op ANY (a) (all false) or
	// x op ALL (a) (all true), op 0..5 for = <> < <= > >=.
	FuncArrayCmpAny
	// Array functions (arrayfuncs.go): array_cat(a, b) (||, and
	// array_append/array_prepend over ARRAY[x]), array_contains(a, b)
	// (a @> b; b <@ a swapped), array_overlap (&&), array_position,
	// array_upper, array_lower, array_to_string, string_to_array.
	FuncArrayCat
	FuncArrayContains
	FuncArrayOverlap
	FuncArrayPosition
	FuncArrayUpper
	FuncArrayLower
	FuncArrayToString
	FuncStringToArray
	// regexp_match(s, pattern[, flags]) is text[] (regexcache.go).
	FuncRegexpMatch
	// bpchar_pad(a, n): the text[] a with each non-NULL element padded
	// with spaces to n characters, as a char(n)[] value is output
	// (char values are stored without their padding).
	FuncBpcharPad
	// time_shift(t, us): the time t moved by us microseconds without
	// wrapping around midnight (a RANGE frame's bound over a time column,
	// as PostgreSQL's in_range for time; window_time.go).
	FuncTimeShift
	// tz_array_cast(x, zone, target) converts between timestamptz[] and
	// text, text[], timestamp[] or date[] in the session's zone; target is
	// an empty value of the result type (TZArrayTarget, tzarray.go).
	FuncTZArrayCast
	// json (jsontext.go): ->, ->>, #> and #>> (json_extract_path(_text))
	// and json_typeof over the document's text.
	FuncJSONTextGet
	FuncJSONTextGetText
	FuncJSONTextPath
	FuncJSONTextPathText
	FuncJSONTextTypeof
	// json construction (jsonbuild.go): to_json, json_build_array,
	// json_build_object and json_array_length, PostgreSQL's json text;
	// json_value_text(x) is x's json text (NULL as null) for json_agg;
	// json_pair_text(k, v) the `"k" : v` member of json_object_agg;
	// json_agg_final(a, object) joins the jsonb array of those texts.
	FuncToJSON
	FuncJSONTextBuildArray
	FuncJSONTextBuildObject
	FuncJSONTextArrayLength
	FuncJSONValueText
	FuncJSONPairText
	FuncJSONAggFinal
	// json_row(pretty, k1, v1, ...) is row_to_json's text of a record
	// whose fields are named k1... ({"k1":v1,"k2":v2}; with pretty a
	// newline and a space after each comma; jsonrow.go).
	FuncJSONRow
	// json_object(a text[]) / json_object(keys, values text[]) and
	// jsonb_object likewise (jsonobject.go).
	FuncJSONObject
	FuncJSONBObject
	// Records (record.go): row(f1, ...) is ROW(f1, ...), an anonymous
	// record; record_field(r, i, target) is r's i-th field (1-based),
	// typed as target, a typed NULL naming the field's type (a record's
	// type does not carry its fields').
	FuncRecord
	FuncRecordField
	// extract(field FROM x[, zone]): date_part's field as an exact
	// numeric at PostgreSQL's scale for the field (datetime_extract.go).
	FuncExtract
	funcCount
)

// funcDef describes how to type and evaluate one function. Strict
// functions return NULL when any argument is NULL without being called;
// exactly one of eval1/eval2/eval3/evalN is set, matching the arity.
type funcDef struct {
	name             string
	minArgs, maxArgs int // maxArgs < 0: unbounded
	strict           bool
	// typeOf returns the result type given argument types; for a strict
	// function nullability is derived from the arguments.
	typeOf func(args []row.ColumnType) (row.ColumnType, error)
	eval1  func(a row.Datum) (row.Datum, error)
	eval2  func(a, b row.Datum) (row.Datum, error)
	eval3  func(a, b, c row.Datum) (row.Datum, error)
	evalN  func(args []row.Datum) (row.Datum, error)
}

// lookup returns f's definition, or nil for an unknown function.
func (f Func) def() *funcDef {
	if f == FuncInvalid || f >= funcCount {
		return nil
	}
	return &funcs[f]
}

func (f Func) String() string {
	if d := f.def(); d != nil {
		return d.name
	}
	return "func(" + strconv.Itoa(int(f)) + ")"
}

// ParseFunc returns the function with the given wire name.
func ParseFunc(name string) (Func, error) {
	for f := FuncInvalid + 1; f < funcCount; f++ {
		if funcs[f].name == name {
			return f, nil
		}
	}
	return FuncInvalid, fmt.Errorf("unknown function %q", name)
}

// MarshalJSON encodes the function as its name.
func (f Func) MarshalJSON() ([]byte, error) {
	if f.def() == nil {
		return nil, fmt.Errorf("marshal function: invalid function %d", uint8(f))
	}
	return json.Marshal(f.String())
}

// UnmarshalJSON decodes a function name.
func (f *Func) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("unmarshal function: %w", err)
	}
	p, err := ParseFunc(s)
	if err != nil {
		return fmt.Errorf("unmarshal function: %w", err)
	}
	*f = p
	return nil
}
