package expr

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// PostgreSQL's numeric scale constants (numeric.c): division and square
// root aim for at least numericMinSigDigits significant digits and never
// more than numericMaxDisplayScale fractional digits.
const (
	numericMinSigDigits    = 16
	numericMaxDisplayScale = 1000
	decDigits              = 4 // decimal digits per NBASE (10000) digit
)

var (
	errNumericOverflow = &EvalError{Code: CodeNumericValueOutOfRange, Msg: "value overflows numeric format"}
	errNumericField    = &EvalError{Code: CodeNumericValueOutOfRange, Msg: "numeric field overflow"}
	errNegativeSqrt    = &EvalError{Code: CodeInvalidArgumentForPower, Msg: "cannot take square root of a negative number"}
)

// exact is the context of exact arithmetic: precision 0 makes add, sub
// and mul exact in apd; the exponent limits are apd's widest.
var exact = apd.Context{MaxExponent: apd.MaxExponent, MinExponent: apd.MinExponent, Traps: apd.DefaultTraps, Rounding: apd.RoundHalfUp}

// precise returns a context rounding half away from zero (PostgreSQL's
// numeric rounding) to prec significant digits.
func precise(prec int64) *apd.Context {
	c := exact
	c.Precision = uint32(min(max(prec, 1), math.MaxInt32))
	return &c
}

// numeric wraps a computed decimal as a datum whose display scale is
// the decimal's exponent (each operation below computes its result at
// PostgreSQL's result scale); a value outside PostgreSQL's range is 22003.
func numeric(x *apd.Decimal, err error) (row.Datum, error) {
	if err != nil {
		// apd reports exponent overflow and underflow as conditions
		// whose text names them.
		if msg := err.Error(); strings.Contains(msg, "overflow") || strings.Contains(msg, "underflow") {
			return row.Null(), errNumericOverflow
		}
		return row.Null(), evalErr(CodeNumericValueOutOfRange, "numeric: %v", err)
	}
	d, err := row.NumericExact(x)
	if err != nil {
		return row.Null(), errNumericOverflow
	}
	return d, nil
}

// decimalOf is a as a decimal: numerics at their display scale (1.50 as
// 150E-2), integers exactly.
func decimalOf(a row.Datum) (*apd.Decimal, bool) {
	switch a.Type() {
	case row.TypeNumeric:
		return a.DecimalDisplay(), true
	case row.TypeInt64:
		return apd.New(a.Int64(), 0), true
	}
	return nil, false
}

func isNaN(x *apd.Decimal) bool { return x.Form == apd.NaN || x.Form == apd.NaNSignaling }
func isInf(x *apd.Decimal) bool { return x.Form == apd.Infinite }

var (
	decNaN    = &apd.Decimal{Form: apd.NaN}
	decPosInf = &apd.Decimal{Form: apd.Infinite}
	decNegInf = &apd.Decimal{Form: apd.Infinite, Negative: true}
)

func decInf(neg bool) *apd.Decimal {
	if neg {
		return decNegInf
	}
	return decPosInf
}

// numericArith applies a binary arithmetic operator to two numerics (or
// a numeric and an integer) with PostgreSQL's rules for NaN and the
// infinities, which differ from apd's (Infinity - Infinity is NaN, not
// an error).
func numericArith(op string, a, b row.Datum) (row.Datum, error) {
	x, ok1 := decimalOf(a)
	y, ok2 := decimalOf(b)
	if !ok1 || !ok2 {
		return row.Null(), evalErr(CodeUndefinedFunction, "operator does not exist: %s %s %s", a.Type().PGName(), op, b.Type().PGName())
	}
	z := new(apd.Decimal)
	switch op {
	case "+", "-":
		if op == "-" {
			y = new(apd.Decimal).Neg(y)
		}
		switch {
		case isNaN(x) || isNaN(y):
			return numeric(decNaN, nil)
		case isInf(x) && isInf(y):
			if x.Negative != y.Negative {
				return numeric(decNaN, nil)
			}
			return numeric(x, nil)
		case isInf(x):
			return numeric(x, nil)
		case isInf(y):
			return numeric(y, nil)
		}
		_, err := exact.Add(z, x, y)
		return numeric(z, err)
	case "*":
		switch {
		case isNaN(x) || isNaN(y):
			return numeric(decNaN, nil)
		case isInf(x) || isInf(y):
			if x.IsZero() || y.IsZero() {
				return numeric(decNaN, nil)
			}
			return numeric(decInf(x.Negative != y.Negative), nil)
		}
		_, err := exact.Mul(z, x, y)
		return numeric(z, err)
	case "/":
		return numericDiv(x, y)
	case "%":
		return numericMod(x, y)
	}
	return row.Null(), evalErr(CodeInternal, "unknown numeric operator %s", op)
}

// numericSpecialDiv handles the operands of / and % that are not both
// finite with a non-zero divisor; ok is false when x / y is ordinary.
func numericSpecialDiv(x, y *apd.Decimal, mod bool) (row.Datum, bool, error) {
	switch {
	case isNaN(x) || isNaN(y):
		d, err := numeric(decNaN, nil)
		return d, true, err
	case y.IsZero():
		return row.Null(), true, errDivisionByZero
	case isInf(x) && isInf(y), isInf(x) && mod:
		d, err := numeric(decNaN, nil)
		return d, true, err
	case isInf(x):
		d, err := numeric(decInf(x.Negative != y.Negative), nil)
		return d, true, err
	case isInf(y):
		if mod {
			d, err := numeric(x, nil)
			return d, true, err
		}
		d, err := numeric(new(apd.Decimal), nil)
		return d, true, err
	}
	return row.Null(), false, nil
}

// scaleOf is the number of fractional digits of a finite decimal.
func scaleOf(x *apd.Decimal) int64 { return max(-int64(x.Exponent), 0) }

// nbaseWeight returns PostgreSQL's weight (in base-10000 digits) and
// first base-10000 digit of a finite decimal; 0, 0 for zero.
func nbaseWeight(x *apd.Decimal) (int64, int64) {
	if x.IsZero() {
		return 0, 0
	}
	digits := x.Coeff.String()
	lead := int64(len(digits)) - 1 + int64(x.Exponent) // 10^lead <= |x| < 10^(lead+1)
	w := lead / decDigits
	if lead < 0 && lead%decDigits != 0 {
		w-- // floor division
	}
	n := lead - w*decDigits + 1 // decimal digits in the first base-10000 digit
	var first int64
	for i := range n {
		first *= 10
		if i < int64(len(digits)) {
			first += int64(digits[i] - '0')
		}
	}
	return w, first
}

// divScale is PostgreSQL's select_div_scale: enough fractional digits for
// numericMinSigDigits significant digits of the quotient, at least the
// operands' scales. The operands' display scales are their stored
// scales, which drop trailing zeros (see row's doc.go).
func divScale(x, y *apd.Decimal) int64 {
	w1, f1 := nbaseWeight(x)
	w2, f2 := nbaseWeight(y)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := numericMinSigDigits - qweight*decDigits
	rscale = max(rscale, scaleOf(x), scaleOf(y), 0)
	return min(rscale, numericMaxDisplayScale)
}

// bigOf returns x's coefficient as a signed big.Int.
func bigOf(x *apd.Decimal) *big.Int {
	b := x.Coeff.MathBigInt()
	if x.Negative {
		b.Neg(b)
	}
	return b
}

func pow10(n int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil) }

// fromBig returns c × 10^-scale.
func fromBig(c *big.Int, scale int64) *apd.Decimal {
	z := new(apd.Decimal)
	neg := c.Sign() < 0
	z.Coeff.SetMathBigInt(new(big.Int).Abs(c))
	z.Negative = neg
	z.Exponent = int32(-scale)
	return z
}

// quoRound returns n / d rounded half away from zero (d != 0).
func quoRound(n, d *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(n, d, new(big.Int))
	if r.Sign() != 0 {
		r2 := new(big.Int).Abs(r)
		r2.Lsh(r2, 1)
		if r2.Cmp(new(big.Int).Abs(d)) >= 0 {
			if (n.Sign() < 0) != (d.Sign() < 0) {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	return q
}

// aligned returns the coefficients of x and y scaled to their common
// (smaller) exponent, and that exponent.
func aligned(x, y *apd.Decimal) (*big.Int, *big.Int, int64) {
	cx, cy := bigOf(x), bigOf(y)
	ex, ey := int64(x.Exponent), int64(y.Exponent)
	e := min(ex, ey)
	cx.Mul(cx, pow10(ex-e))
	cy.Mul(cy, pow10(ey-e))
	return cx, cy, e
}

// numericDiv is x / y with PostgreSQL's result scale, rounded half away
// from zero, computed exactly on integers.
func numericDiv(x, y *apd.Decimal) (row.Datum, error) {
	if d, ok, err := numericSpecialDiv(x, y, false); ok {
		return d, err
	}
	return numeric(divRound(x, y, divScale(x, y)), nil)
}

// divRound is x / y rounded half away from zero to scale fractional
// digits (y finite and non-zero).
func divRound(x, y *apd.Decimal, scale int64) *apd.Decimal {
	cx, cy := bigOf(x), bigOf(y)
	// x/y × 10^scale = cx × 10^(ex-ey+scale) / cy
	k := int64(x.Exponent) - int64(y.Exponent) + scale
	if k >= 0 {
		cx.Mul(cx, pow10(k))
	} else {
		cy.Mul(cy, pow10(-k))
	}
	return fromBig(quoRound(cx, cy), scale)
}

// numericMod is x % y: the remainder of the truncated quotient, with the
// dividend's sign.
func numericMod(x, y *apd.Decimal) (row.Datum, error) {
	if d, ok, err := numericSpecialDiv(x, y, true); ok {
		return d, err
	}
	cx, cy, e := aligned(x, y)
	return numeric(fromBig(new(big.Int).Rem(cx, cy), -e), nil)
}

// numericDivTrunc is div(x, y): the quotient truncated towards zero.
func numericDivTrunc(x, y *apd.Decimal) (row.Datum, error) {
	switch {
	case isNaN(x) || isNaN(y):
		return numeric(decNaN, nil)
	case y.IsZero():
		return row.Null(), errDivisionByZero
	case isInf(x) && isInf(y):
		return numeric(decNaN, nil)
	case isInf(x):
		return numeric(decInf(x.Negative != y.Negative), nil)
	case isInf(y):
		return numeric(new(apd.Decimal), nil)
	}
	cx, cy, _ := aligned(x, y)
	return numeric(fromBig(new(big.Int).Quo(cx, cy), 0), nil)
}

// numericRound rounds x to scale fractional digits (negative: to tens,
// hundreds...), half away from zero, or towards zero when trunc is set.
func numericRound(x *apd.Decimal, scale int64, trunc bool) (row.Datum, error) {
	if x.Form != apd.Finite {
		return numeric(x, nil)
	}
	if scaleOf(x) <= scale {
		// The result's display scale is the one asked for (round(1.5, 3)
		// is 1.500).
		d, err := row.NumericScaled(x, int(min(scale, row.NumericMaxScale)))
		if err != nil {
			return row.Null(), errNumericOverflow
		}
		return d, nil
	}
	scale = max(scale, -int64(row.NumericMaxWeight)-1)
	// x × 10^scale = c × 10^(e+scale), with e+scale < 0.
	c := bigOf(x)
	d := pow10(-(int64(x.Exponent) + scale))
	var q *big.Int
	if trunc {
		q = new(big.Int).Quo(c, d)
	} else {
		q = quoRound(c, d)
	}
	if scale >= 0 {
		return numeric(fromBig(q, scale), nil)
	}
	return numeric(fromBig(q.Mul(q, pow10(-scale)), 0), nil)
}

// numericCeilFloor is ceil(x) (up) or floor(x).
func numericCeilFloor(x *apd.Decimal, up bool) (row.Datum, error) {
	if x.Form != apd.Finite || x.Exponent >= 0 {
		return numeric(x, nil)
	}
	c := bigOf(x)
	d := pow10(-int64(x.Exponent))
	q, m := new(big.Int).DivMod(c, d, new(big.Int)) // Euclidean: m >= 0, so q is the floor
	if up && m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return numeric(fromBig(q, 0), nil)
}

// numericSqrt is PostgreSQL's numeric_sqrt: a result scale giving at
// least numericMinSigDigits significant digits, rounded half away from
// zero.
func numericSqrt(x *apd.Decimal) (row.Datum, error) {
	switch {
	case isNaN(x):
		return numeric(decNaN, nil)
	case x.Negative && !x.IsZero():
		return row.Null(), errNegativeSqrt
	case isInf(x):
		return numeric(x, nil)
	}
	w, _ := nbaseWeight(x)
	sweight := (w+1)*decDigits/2 - 1
	rscale := min(max(numericMinSigDigits-sweight, scaleOf(x), 0), numericMaxDisplayScale)
	// Compute with extra digits, then round once to rscale.
	z := new(apd.Decimal)
	lead := int64(x.NumDigits()) + int64(x.Exponent)
	if _, err := precise(lead/2+rscale+10).Sqrt(z, x); err != nil {
		return numeric(nil, err)
	}
	return numericRound(z, rscale, false)
}

// numericToInt converts a numeric to int64, rounding half away from zero
// as PostgreSQL's numeric-to-integer casts do.
func numericToInt(x *apd.Decimal, typeName string) (int64, error) {
	switch {
	case isNaN(x):
		return 0, evalErr("0A000", "cannot convert NaN to %s", typeName)
	case isInf(x):
		return 0, evalErr("0A000", "cannot convert infinity to %s", typeName)
	}
	r, err := numericRound(x, 0, false)
	if err != nil {
		return 0, err
	}
	c := bigOf(r.Decimal())
	c.Mul(c, pow10(int64(max(r.Decimal().Exponent, 0))))
	if !c.IsInt64() {
		return 0, evalErr(CodeNumericValueOutOfRange, "%s out of range", typeName)
	}
	return c.Int64(), nil
}

// numericToFloat converts a numeric to the nearest float64, as
// PostgreSQL's numeric-to-float8 cast does (through its text form).
func numericToFloat(x *apd.Decimal) (float64, error) {
	switch {
	case isNaN(x):
		return math.NaN(), nil
	case isInf(x):
		if x.Negative {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	f, err := strconv.ParseFloat(x.Text('e'), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, evalErr(CodeInternal, "numeric to float: %v", err)
	}
	if math.IsInf(f, 0) {
		return 0, evalErr(CodeNumericValueOutOfRange, "value out of range: overflow")
	}
	return f, nil
}

// floatToNumeric converts a float64 as PostgreSQL's float8-to-numeric
// cast does: through its 15-significant-digit (DBL_DIG) text form.
func floatToNumeric(f float64) (row.Datum, error) {
	switch {
	case math.IsNaN(f):
		return numeric(decNaN, nil)
	case math.IsInf(f, 0):
		return numeric(decInf(f < 0), nil)
	}
	x, _, err := apd.NewFromString(strconv.FormatFloat(f, 'g', 15, 64))
	return numeric(x, err)
}

// parseNumeric parses PostgreSQL's numeric input syntax: optional
// surrounding spaces and sign, digits with an optional point and
// exponent, or NaN / Infinity / inf in any case.
func parseNumeric(s string) (row.Datum, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "nan":
		return numeric(decNaN, nil)
	case "infinity", "+infinity", "inf", "+inf":
		return numeric(decPosInf, nil)
	case "-infinity", "-inf":
		return numeric(decNegInf, nil)
	}
	if !validNumericSyntax(t) {
		return row.Null(), invalidInput(row.TypeNumeric, s)
	}
	x, _, err := exact.NewFromString(t)
	if err != nil {
		return row.Null(), errNumericOverflow
	}
	return numeric(x, nil)
}

// validNumericSyntax reports whether t is [+-]digits[.digits][e[+-]digits]
// with at least one digit in the mantissa.
func validNumericSyntax(t string) bool {
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
		digits++
	}
	if i < len(t) && t[i] == '.' {
		i++
		for ; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		start := i
		for ; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
		}
		if i == start || i-start > 9 {
			return false
		}
	}
	return i == len(t)
}

// NumericTypmod applies a numeric(precision, scale) column type to a
// value: round to scale digits, then 22003 "numeric field overflow" when
// the integer part has more than precision - scale digits.
func NumericTypmod(d row.Datum, precision, scale int64) (row.Datum, error) {
	if d.IsNull() {
		return d, nil
	}
	x := d.Decimal()
	switch {
	case isNaN(x):
		return d, nil
	case isInf(x):
		return row.Null(), errNumericField
	}
	r, err := numericRound(x, scale, false)
	if err != nil {
		return row.Null(), err
	}
	rx := r.Decimal()
	if !rx.IsZero() && int64(rx.NumDigits())+int64(rx.Exponent) > precision-scale {
		return row.Null(), errNumericField
	}
	return r, nil
}

// typeNumericKey is numeric_key's type: its argument's, nullability
// included (numeric_key applies to a key column of any type).
func typeNumericKey(args []row.ColumnType) (row.ColumnType, error) { return args[0], nil }

// evalNumericKey is numeric_key(x): a numeric at its minimal display
// scale, any other value as it is.
func evalNumericKey(x row.Datum) (row.Datum, error) { return x.NumericKey(), nil }
