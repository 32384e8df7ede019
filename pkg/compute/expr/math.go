package expr

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"strings"
	"unicode/utf8"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// CodeStringDataRightTruncation is string_data_right_truncation: a value
// too long for a varchar(n) or char(n) column.
const CodeStringDataRightTruncation = "22001"

// CodeInvalidArgumentForLog is invalid_argument_for_logarithm.
const CodeInvalidArgumentForLog = "2201E"

// compareNumeric compares a numeric with a numeric or an integer exactly;
// with a float64 the numeric converts to float64, as PostgreSQL resolves
// numeric = float8 to a float8 comparison.
func compareNumeric(a, b row.Datum) (int, error) {
	if a.Type() == row.TypeFloat64 || b.Type() == row.TypeFloat64 {
		fa, ok1 := asFloat(a)
		fb, ok2 := asFloat(b)
		if !ok1 || !ok2 {
			return 0, evalErr(CodeUndefinedFunction, "operator does not exist: %s = %s", a.Type().PGName(), b.Type().PGName())
		}
		return row.Compare(row.Float64(fa), row.Float64(fb)), nil
	}
	x, ok1 := decimalOf(a)
	y, ok2 := decimalOf(b)
	if !ok1 || !ok2 {
		return 0, evalErr(CodeUndefinedFunction, "operator does not exist: %s = %s", a.Type().PGName(), b.Type().PGName())
	}
	dx, err := numeric(x, nil)
	if err != nil {
		return 0, err
	}
	dy, err := numeric(y, nil)
	if err != nil {
		return 0, err
	}
	return row.Compare(dx.NumericKey(), dy.NumericKey()), nil
}

func evalTrunc1(a row.Datum) (row.Datum, error) {
	switch a.Type() {
	case row.TypeInt64:
		return a, nil
	case row.TypeFloat64:
		return row.Float64(math.Trunc(a.Float64())), nil
	case row.TypeNumeric:
		return numericRound(a.Decimal(), 0, true)
	}
	return row.Null(), undefinedFunc("trunc", a)
}

func evalTrunc2(a, digits row.Datum) (row.Datum, error) {
	x, ok := decimalOf(a)
	if !ok || digits.Type() != row.TypeInt64 {
		return row.Null(), undefinedFunc("trunc", a, digits)
	}
	return numericRound(x, digits.Int64(), true)
}

func evalSign(a row.Datum) (row.Datum, error) {
	switch a.Type() {
	case row.TypeInt64:
		return row.Int64(int64(cmpSign(a.Int64()))), nil
	case row.TypeFloat64:
		f := a.Float64()
		switch {
		case math.IsNaN(f):
			return a, nil
		case f > 0:
			return row.Float64(1), nil
		case f < 0:
			return row.Float64(-1), nil
		}
		return row.Float64(0), nil
	case row.TypeNumeric:
		x := a.Decimal()
		if isNaN(x) {
			return a, nil
		}
		return row.NumericFromInt64(int64(x.Sign())), nil
	}
	return row.Null(), undefinedFunc("sign", a)
}

func cmpSign(i int64) int {
	switch {
	case i > 0:
		return 1
	case i < 0:
		return -1
	}
	return 0
}

// decimalPair is the numeric values of a two-argument numeric function's
// arguments, or the function-does-not-exist error naming fn.
func decimalPair(fn string, a, b row.Datum) (*apd.Decimal, *apd.Decimal, error) {
	x, ok1 := decimalOf(a)
	y, ok2 := decimalOf(b)
	if !ok1 || !ok2 {
		return nil, nil, undefinedFunc(fn, a, b)
	}
	return x, y, nil
}

func evalDivTrunc(a, b row.Datum) (row.Datum, error) {
	x, y, err := decimalPair("div", a, b)
	if err != nil {
		return row.Null(), err
	}
	return numericDivTrunc(x, y)
}

func evalExp(a row.Datum) (row.Datum, error) {
	if a.Type() == row.TypeNumeric {
		return numericExp(a.DecimalDisplay())
	}
	x, ok := asFloat(a)
	if !ok {
		return row.Null(), undefinedFunc("exp", a)
	}
	r, err := checkFloat(math.Exp(x), math.IsInf(x, 0), math.IsInf(x, -1))
	if err != nil {
		return row.Null(), err
	}
	return row.Float64(r), nil
}

// logArg checks the argument of a logarithm as PostgreSQL's dlog1 and
// dlog10 do.
func logArg(name string, a row.Datum) (float64, error) {
	x, ok := asFloat(a)
	switch {
	case !ok:
		return 0, undefinedFunc(name, a)
	case x == 0:
		return 0, evalErr(CodeInvalidArgumentForLog, "cannot take logarithm of zero")
	case x < 0:
		return 0, evalErr(CodeInvalidArgumentForLog, "cannot take logarithm of a negative number")
	}
	return x, nil
}

func evalLn(a row.Datum) (row.Datum, error) {
	if a.Type() == row.TypeNumeric {
		return numericLn(a.DecimalDisplay())
	}
	x, err := logArg("ln", a)
	if err != nil {
		return row.Null(), err
	}
	return row.Float64(math.Log(x)), nil
}

func evalLog10(a row.Datum) (row.Datum, error) {
	if a.Type() == row.TypeNumeric {
		return numericLog(apd.New(10, 0), a.DecimalDisplay())
	}
	x, err := logArg("log", a)
	if err != nil {
		return row.Null(), err
	}
	return row.Float64(math.Log10(x)), nil
}

func evalTrimScale(a row.Datum) (row.Datum, error) {
	if a.Type() != row.TypeNumeric {
		return row.Null(), undefinedFunc("trim_scale", a)
	}
	return a.NumericKey(), nil
}

func evalNumericTypmod(a, p, s row.Datum) (row.Datum, error) {
	x, ok := decimalOf(a)
	if !ok || p.Type() != row.TypeInt64 || s.Type() != row.TypeInt64 {
		return row.Null(), undefinedFunc("numeric_typmod", a, p, s)
	}
	d, err := numeric(x, nil)
	if err != nil {
		return row.Null(), err
	}
	return NumericTypmod(d, p.Int64(), s.Int64())
}

// evalCharN returns the varchar(n) (bpchar false) or char(n) conversion,
// explicit (truncating) or an assignment (22001 unless the excess is
// spaces). char(n) values drop their trailing spaces: the padding is
// added back on output (docs/sql.md).
func evalCharN(bpchar, assign bool) func(a, n row.Datum) (row.Datum, error) {
	var charN func(a, n row.Datum) (row.Datum, error)
	charN = func(a, n row.Datum) (row.Datum, error) {
		if a.Type() == row.TypeTextArray && n.Type() == row.TypeInt64 {
			// varchar(n)[] and char(n)[]: the rule applies to each
			// element.
			return mapTextElems(a, func(e row.Datum) (row.Datum, error) { return charN(e, n) })
		}
		if a.Type() != row.TypeText || n.Type() != row.TypeInt64 {
			return row.Null(), undefinedFunc("varchar", a, n)
		}
		s, limit := a.Text(), n.Int64()
		if limit > 0 && int64(len(s)) > limit && int64(utf8.RuneCountInString(s)) > limit {
			cut := cutRunes(s, limit)
			if assign && strings.TrimLeft(s[cut:], " ") != "" {
				name := "character varying"
				if bpchar {
					name = "character"
				}
				return row.Null(), evalErr(CodeStringDataRightTruncation, "value too long for type %s(%d)", name, limit)
			}
			s = s[:cut]
		}
		if bpchar {
			s = strings.TrimRight(s, " ")
		}
		return row.Text(s), nil
	}
	return charN
}

// cutRunes is the byte offset after the first n characters of s.
func cutRunes(s string, n int64) int {
	var i int
	for k := int64(0); k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

func typeNumericOnly(n int) func(args []row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		for _, a := range args[:n] {
			if !is(a, row.TypeNumeric, row.TypeInt64) {
				return row.ColumnType{}, typeSig("numeric function", args)
			}
		}
		return row.ColumnType{Type: row.TypeNumeric}, nil
	}
}

func typeNumericTypmod(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeNumeric, row.TypeInt64) || !is(args[1], row.TypeInt64) || !is(args[2], row.TypeInt64) {
		return row.ColumnType{}, typeSig("numeric_typmod", args)
	}
	return row.ColumnType{Type: row.TypeNumeric}, nil
}

// evalBpcharPad is bpchar_pad(a, n): a's non-NULL elements padded with
// spaces to n characters.
func evalBpcharPad(a, n row.Datum) (row.Datum, error) {
	if a.Type() != row.TypeTextArray || n.Type() != row.TypeInt64 {
		return row.Null(), undefinedFunc("bpchar_pad", a, n)
	}
	return mapTextElems(a, func(e row.Datum) (row.Datum, error) {
		if k := utf8.RuneCountInString(e.Text()); int64(k) < n.Int64() {
			return row.Text(e.Text() + strings.Repeat(" ", int(n.Int64())-k)), nil
		}
		return e, nil
	})
}

// mapTextElems applies f to each non-NULL element of the text array a.
func mapTextElems(a row.Datum, f func(row.Datum) (row.Datum, error)) (row.Datum, error) {
	elems := a.ArrayElems()
	out := make([]row.Datum, len(elems))
	for i, e := range elems {
		out[i] = e
		if e.IsNull() {
			continue
		}
		var err error
		if out[i], err = f(e); err != nil {
			return row.Null(), err
		}
	}
	return row.Array(row.TypeTextArray, out)
}

func typeBpcharPad(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeTextArray) || !is(args[1], row.TypeInt64) {
		return row.ColumnType{}, typeSig("bpchar_pad", args)
	}
	return row.ColumnType{Type: row.TypeTextArray}, nil
}

func typeCharN(args []row.ColumnType) (row.ColumnType, error) {
	if args[0].Type == row.TypeTextArray && is(args[1], row.TypeInt64) {
		return row.ColumnType{Type: row.TypeTextArray}, nil
	}
	if !is(args[0], row.TypeText) || !is(args[1], row.TypeInt64) {
		return row.ColumnType{}, typeSig("varchar", args)
	}
	return row.ColumnType{Type: row.TypeText}, nil
}

// evalLog is log(b, x) over numerics (integers are exact numerics).
func evalLog(b, x row.Datum) (row.Datum, error) {
	db, dx, err := decimalPair("log", b, x)
	if err != nil {
		return row.Null(), err
	}
	return numericLog(db, dx)
}

// radiansPerDegree is PostgreSQL's RADIANS_PER_DEGREE.
const radiansPerDegree = 0.0174532925199432957692

// floatMath applies f to a number as float64, with PostgreSQL's overflow
// check (an infinite result from a finite argument is 22003).
func floatMath(name string, f func(float64) float64) func(a row.Datum) (row.Datum, error) {
	return func(a row.Datum) (row.Datum, error) {
		x, ok := asFloat(a)
		if !ok {
			return row.Null(), undefinedFunc(name, a)
		}
		r, err := checkFloat(f(x), math.IsInf(x, 0), true)
		if err != nil {
			return row.Null(), err
		}
		return row.Float64(r), nil
	}
}

func evalPi(args []row.Datum) (row.Datum, error) { return row.Float64(math.Pi), nil }

func typePi(args []row.ColumnType) (row.ColumnType, error) {
	return row.ColumnType{Type: row.TypeFloat64}, nil
}

// typeFloatAny1 types a double precision function of one number.
func typeFloatAny1(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeInt64, row.TypeFloat64, row.TypeNumeric) {
		return row.ColumnType{}, typeSig("math function", args)
	}
	return row.ColumnType{Type: row.TypeFloat64}, nil
}

// typePower is numeric when an argument is (the SQL layer promotes both),
// double precision otherwise.
func typePower(args []row.ColumnType) (row.ColumnType, error) {
	if args[0].Type == row.TypeNumeric || args[1].Type == row.TypeNumeric {
		if !is(args[0], row.TypeNumeric, row.TypeInt64) || !is(args[1], row.TypeNumeric, row.TypeInt64) {
			return row.ColumnType{}, typeSig("power", args)
		}
		return row.ColumnType{Type: row.TypeNumeric}, nil
	}
	return typeFloat2(args)
}
