package expr

import (
	"math"
	"math/big"
	"strconv"

	"github.com/cockroachdb/apd/v3"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Logarithms, exp and power over numerics, as PostgreSQL's numeric.c:
// each result is rounded (half away from zero) to a result scale chosen
// from an estimate of its magnitude, for at least numericMinSigDigits
// significant digits and at least the inputs' display scales (here their
// stored scales, see row's doc.go). The values are computed with apd at a
// precision above that scale, then rounded once.

var (
	errLogZero               = &EvalError{Code: CodeInvalidArgumentForLog, Msg: "cannot take logarithm of zero"}
	errLogNegative           = &EvalError{Code: CodeInvalidArgumentForLog, Msg: "cannot take logarithm of a negative number"}
	errZeroPower             = &EvalError{Code: CodeInvalidArgumentForPower, Msg: "zero raised to a negative power is undefined"}
	errComplex               = &EvalError{Code: CodeInvalidArgumentForPower, Msg: "a negative number raised to a non-integer power yields a complex result"}
	errNumericOverflowFormat = &EvalError{Code: CodeNumericValueOutOfRange, Msg: "value overflows numeric format"}
)

// clampScale bounds a result scale to [max(floor...), numericMaxDisplayScale].
func clampScale(rscale int64, floors ...int64) int64 {
	for _, f := range floors {
		rscale = max(rscale, f)
	}
	return min(max(rscale, 0), numericMaxDisplayScale)
}

// magnitude is floor(log10(|x|)) of a finite non-zero decimal: the
// position of its leading digit.
func magnitude(x *apd.Decimal) int64 {
	return int64(x.NumDigits()) + int64(x.Exponent) - 1
}

// approxLog10 is log10(|x|) in float64 from x's leading digits, for any
// finite non-zero x however large or small.
func approxLog10(x *apd.Decimal) float64 {
	c := bigOf(x)
	c.Abs(c)
	s := c.String()
	lead := s[:min(len(s), 17)]
	v, _ := strconv.ParseFloat(lead, 64)
	return math.Log10(v) + float64(len(s)-len(lead)) + float64(x.Exponent)
}

// estimateLnDweight is PostgreSQL's estimate_ln_dweight: the decimal
// weight of ln(x) for x > 0.
func estimateLnDweight(x *apd.Decimal) int64 {
	lo, hi := apd.New(9, -1), apd.New(11, -1)
	if x.Cmp(lo) >= 0 && x.Cmp(hi) <= 0 {
		d := new(apd.Decimal)
		if _, err := exact.Sub(d, x, apd.New(1, 0)); err != nil || d.IsZero() {
			return 0
		}
		return magnitude(d)
	}
	ln := approxLog10(x) * math.Ln10
	return int64(math.Log10(math.Abs(ln)))
}

// lnAt is ln(x) for finite x > 0 to rscale fractional digits.
func lnAt(x *apd.Decimal, rscale, dweight int64) (*apd.Decimal, error) {
	z := new(apd.Decimal)
	if _, err := precise(rscale+max(dweight, 0)+12).Ln(z, x); err != nil {
		return nil, err
	}
	return z, nil
}

// numericLn is ln(x).
func numericLn(x *apd.Decimal) (row.Datum, error) {
	switch {
	case isNaN(x):
		return numeric(decNaN, nil)
	case x.Sign() < 0:
		return row.Null(), errLogNegative
	case x.IsZero():
		return row.Null(), errLogZero
	case isInf(x):
		return numeric(decPosInf, nil)
	}
	dw := estimateLnDweight(x)
	rscale := clampScale(numericMinSigDigits-dw, scaleOf(x))
	z, err := lnAt(x, rscale, dw)
	if err != nil {
		return numeric(nil, err)
	}
	return numericRound(z, rscale, false)
}

// numericLog is log(b, x): the logarithm of x in base b.
func numericLog(b, x *apd.Decimal) (row.Datum, error) {
	if isNaN(b) || isNaN(x) {
		return numeric(decNaN, nil)
	}
	switch {
	case b.Sign() < 0 || x.Sign() < 0:
		return row.Null(), errLogNegative
	case b.IsZero() || x.IsZero():
		return row.Null(), errLogZero
	case isInf(b) && isInf(x):
		return numeric(decNaN, nil)
	case isInf(b):
		return numeric(new(apd.Decimal), nil)
	case isInf(x):
		return numeric(decPosInf, nil)
	}
	if b.Cmp(apd.New(1, 0)) == 0 {
		return row.Null(), errDivisionByZero
	}
	bw, xw := estimateLnDweight(b), estimateLnDweight(x)
	rscale := clampScale(numericMinSigDigits-(xw-bw), scaleOf(b), scaleOf(x))
	guard := rscale + max(xw-bw, 0) + max(bw, xw, 0) + 12
	lb, err := lnAt(b, guard, bw)
	if err != nil {
		return numeric(nil, err)
	}
	lx, err := lnAt(x, guard, xw)
	if err != nil {
		return numeric(nil, err)
	}
	z := new(apd.Decimal)
	if _, err := precise(guard+12).Quo(z, lx, lb); err != nil {
		return numeric(nil, err)
	}
	return numericRound(z, rscale, false)
}

// numericExp is exp(x).
func numericExp(x *apd.Decimal) (row.Datum, error) {
	switch {
	case isNaN(x):
		return numeric(decNaN, nil)
	case isInf(x) && x.Negative:
		return numeric(new(apd.Decimal), nil)
	case isInf(x):
		return numeric(decPosInf, nil)
	}
	f, _ := x.Float64()
	val := min(max(f*0.434294481903252, -2000), 2000)
	if val > float64(row.NumericMaxWeight) {
		return row.Null(), errNumericOverflowFormat
	}
	rscale := clampScale(numericMinSigDigits-int64(val), scaleOf(x))
	z := new(apd.Decimal)
	if _, err := precise(rscale+max(int64(val), 0)+12).Exp(z, x); err != nil {
		return row.Null(), errNumericOverflowFormat
	}
	return numericRound(z, rscale, false)
}

// numericPower is power(x, y) with PostgreSQL's special cases for NaN,
// the infinities, zero and negative bases.
func numericPower(x, y *apd.Decimal) (row.Datum, error) {
	if x.Form != apd.Finite || y.Form != apd.Finite {
		return numericPowerSpecial(x, y)
	}
	integral := isIntegral(y)
	// PostgreSQL 15 computes an exponent that fits an int32 by repeated
	// multiplication at numericMinSigDigits fractional digits, at least
	// the base's scale (power_var_int); others through ln and exp at a
	// scale from the result's estimated weight.
	f := 0.0
	rscale := clampScale(numericMinSigDigits, scaleOf(x))
	if yf := floatOf(y); !integral || yf > math.MaxInt32 || yf < math.MinInt32 {
		f = approxLog10(x) * yf
		rscale = clampScale(numericMinSigDigits-int64(f), scaleOf(x), scaleOf(y))
	}
	switch {
	case x.IsZero() && y.Sign() < 0:
		return row.Null(), errZeroPower
	case x.Sign() < 0 && !integral:
		return row.Null(), errComplex
	case y.IsZero():
		return numericRound(apd.New(1, 0), rscale, false)
	case x.IsZero():
		return numericRound(new(apd.Decimal), rscale, false)
	}
	// The result's decimal weight, estimated in float64.
	f = approxLog10(x) * floatOf(y)
	if f > float64(row.NumericMaxWeight) {
		return row.Null(), errNumericOverflowFormat
	}
	if f+1 < -numericMaxDisplayScale {
		return numeric(new(apd.Decimal), nil)
	}
	z := new(apd.Decimal)
	if _, err := precise(rscale+max(int64(f), 0)+12).Pow(z, x, y); err != nil {
		return row.Null(), errNumericOverflowFormat
	}
	return numericRound(z, rscale, false)
}

func floatOf(x *apd.Decimal) float64 {
	f, _ := x.Float64()
	return f
}

// isIntegral reports whether a finite decimal has no fractional part.
func isIntegral(x *apd.Decimal) bool {
	if x.Exponent >= 0 {
		return true
	}
	r, err := numericRound(x, 0, true)
	return err == nil && r.Decimal().Cmp(x) == 0
}

// numericPowerSpecial is power(x, y) when x or y is NaN or infinite.
func numericPowerSpecial(x, y *apd.Decimal) (row.Datum, error) {
	one := apd.New(1, 0)
	if isNaN(x) {
		if !isNaN(y) && !isInf(y) && y.IsZero() {
			return numeric(one, nil)
		}
		return numeric(decNaN, nil)
	}
	if isNaN(y) {
		if !isInf(x) && x.Cmp(one) == 0 {
			return numeric(one, nil)
		}
		return numeric(decNaN, nil)
	}
	s1, s2 := x.Sign(), y.Sign()
	if s1 == 0 && s2 < 0 {
		return row.Null(), errZeroPower
	}
	if s1 < 0 && (isInf(y) || !isIntegral(y)) {
		return row.Null(), errComplex
	}
	if isInf(y) {
		if x.Cmp(one) == 0 {
			return numeric(one, nil)
		}
		abs := new(apd.Decimal).Abs(x)
		if (isInf(x) || abs.Cmp(one) > 0) == (s2 > 0) {
			return numeric(decPosInf, nil)
		}
		return numeric(new(apd.Decimal), nil)
	}
	// x is infinite, y finite.
	switch {
	case s2 == 0:
		return numeric(one, nil)
	case s2 < 0:
		return numeric(new(apd.Decimal), nil)
	case !x.Negative:
		return numeric(decPosInf, nil)
	}
	// -Infinity to a positive integral power: negative for odd powers.
	c := bigOf(y)
	if y.Exponent < 0 {
		c.Quo(c, pow10(-int64(y.Exponent)))
	} else if y.Exponent > 0 {
		c.SetInt64(0) // a multiple of ten is even
	}
	if c.Bit(0) == 1 || new(big.Int).Abs(c).Bit(0) == 1 {
		return numeric(decNegInf, nil)
	}
	return numeric(decPosInf, nil)
}
