package operators

import (
	"fmt"
	"math"
	"math/big"

	"github.com/cockroachdb/apd/v3"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// floatVariance computes var_pop, var_samp, stddev_pop or stddev_samp of
// float64 arguments. The sums of x and x² are exact (every float64 is a
// rational), so the variance (n·Σx² − (Σx)²) / (n·(n−1)) is the exact one
// rounded once to float64: it depends only on the group's multiset, not
// on the order in which rows arrived, which a maintained view needs.
// PostgreSQL's float8 algorithm (Youngs-Cramer, in scan order) can differ
// from it in the last digit. As in PostgreSQL a sample statistic of one
// value is NULL, an infinite or NaN argument makes the result NaN, and a
// result beyond float64's range is 22003.
func floatVariance(a Aggregate, args []argCount) (row.Datum, error) {
	sample := a.Func == AggVarSamp || a.Func == AggStddevSamp
	var (
		n         int64
		nonFinite bool
	)
	sx, sxx := new(big.Rat), new(big.Rat)
	x, m := new(big.Rat), new(big.Rat)
	for i, v := range args {
		w, err := weightOf(a, args, i, row.TypeFloat64)
		if err != nil {
			return row.Null(), err
		}
		if w == 0 {
			continue
		}
		n += w
		f := v.d.Float64()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			nonFinite = true
			continue
		}
		x.SetFloat64(f)
		m.SetInt64(w)
		m.Mul(m, x)
		sx.Add(sx, m)
		sxx.Add(sxx, m.Mul(m, x))
	}
	switch {
	case n == 0 || (sample && n == 1):
		return row.Null(), nil
	case nonFinite:
		return row.Float64(math.NaN()), nil
	}
	num := new(big.Rat).Mul(new(big.Rat).SetInt64(n), sxx)
	num.Sub(num, sx.Mul(sx, sx))
	den := new(big.Rat).SetInt64(n)
	if sample {
		den.Mul(den, new(big.Rat).SetInt64(n-1))
	} else {
		den.Mul(den, new(big.Rat).SetInt64(n))
	}
	f, _ := num.Quo(num, den).Float64()
	if math.IsInf(f, 0) {
		return row.Null(), Error{Code: CodeNumericOutOfRange, Message: "value out of range: overflow"}
	}
	if a.Func == AggStddevPop || a.Func == AggStddevSamp {
		f = math.Sqrt(f)
	}
	return row.Float64(f), nil
}

// sumSquares is the exact sum of x² over numeric arguments.
func sumSquares(a Aggregate, args []argCount) (row.Datum, error) {
	var (
		s     numericSum
		found bool
	)
	for i, v := range args {
		w, err := weightOf(a, args, i, row.TypeNumeric)
		if err != nil {
			return row.Null(), err
		}
		if w == 0 {
			continue
		}
		x := v.d.Decimal()
		sq := new(apd.Decimal)
		switch x.Form {
		case apd.Finite:
			if _, err := exactCtx.Mul(sq, x, x); err != nil {
				return row.Null(), Error{Code: CodeNumericOutOfRange, Message: "value overflows numeric format"}
			}
		case apd.Infinite:
			sq.Form = apd.Infinite
		default:
			sq.Form = apd.NaN
		}
		d, err := row.Numeric(sq)
		if err != nil {
			return row.Null(), Error{Code: CodeNumericOutOfRange, Message: "value overflows numeric format"}
		}
		s.add(d, w)
		found = true
	}
	if !found {
		return row.Null(), nil
	}
	return s.result()
}

// weightOf is argument i's multiplicity, 0 for a NULL or an argument that
// does not count (multiplicity); an argument of another type than want is
// an internal error.
func weightOf(a Aggregate, args []argCount, i int, want row.Type) (int64, error) {
	d := args[i].d
	if d.IsNull() {
		return 0, nil
	}
	w := multiplicity(a, args, i)
	if w != 0 && d.Type() != want {
		return 0, Error{Code: CodeInternal, Message: fmt.Sprintf("%s: cannot aggregate %s values", a.Func, d.Type())}
	}
	return w, nil
}
