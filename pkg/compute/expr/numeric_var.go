package expr

import (
	"github.com/cockroachdb/apd/v3"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// The kinds of numeric_var's fourth argument: bit 0 picks the sample
// statistic, bit 1 the standard deviation.
const (
	NumericVarPop     = 0
	NumericVarSamp    = 1
	NumericStddevPop  = 2
	NumericStddevSamp = 3
)

func typeNumericVar(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeInt64) || !is(args[1], row.TypeNumeric) || !is(args[2], row.TypeNumeric) ||
		!is(args[3], row.TypeInt64) || !is(args[4], row.TypeInt64) {
		return row.ColumnType{}, typeSig("numeric_var", args)
	}
	return row.ColumnType{Type: row.TypeNumeric, Nullable: true}, nil
}

// evalNumericVar is numeric_var(n, Σx, Σx², kind, scale): PostgreSQL's
// numeric_stddev_internal over the count and the exact sums of a group's
// integer or numeric values. The variance is (n·Σx² − (Σx)²) / (n·(n−1))
// (sample) or / n² (population), 0 when the numerator is not positive,
// divided at select_div_scale's result scale, where the numerator's
// display scale is taken as at least 2·scale (the argument's declared
// scale: stored values drop trailing zeros); the standard deviation is
// its square root at that scale. NULL for no values (or one, for the
// sample statistics); NaN when a value is NaN or infinite.
func evalNumericVar(args []row.Datum) (row.Datum, error) {
	n, kind, scale := args[0].Int64(), args[3].Int64(), args[4].Int64()
	sample, stddev := kind&1 == 1, kind&2 != 0
	if n == 0 || (sample && n <= 1) {
		return row.Null(), nil
	}
	sx, sxx := args[1].Decimal(), args[2].Decimal()
	if sx.Form != apd.Finite || sxx.Form != apd.Finite {
		return numeric(decNaN, nil)
	}
	bn := apd.New(n, 0)
	num, sq := new(apd.Decimal), new(apd.Decimal)
	if _, err := exact.Mul(num, bn, sxx); err != nil {
		return numeric(nil, err)
	}
	if _, err := exact.Mul(sq, sx, sx); err != nil {
		return numeric(nil, err)
	}
	if _, err := exact.Sub(num, num, sq); err != nil {
		return numeric(nil, err)
	}
	if num.Sign() <= 0 {
		return numeric(new(apd.Decimal), nil)
	}
	den := apd.New(n-1, 0)
	if !sample {
		den = apd.New(n, 0)
	}
	if _, err := exact.Mul(den, den, bn); err != nil {
		return numeric(nil, err)
	}
	rscale := min(max(divScale(num, den), 2*scale), numericMaxDisplayScale)
	v := divRound(num, den, rscale)
	if !stddev {
		return numeric(v, nil)
	}
	z := new(apd.Decimal)
	lead := int64(v.NumDigits()) + int64(v.Exponent)
	if _, err := precise(lead/2+rscale+10).Sqrt(z, v); err != nil {
		return numeric(nil, err)
	}
	return numericRound(z, rscale, false)
}
