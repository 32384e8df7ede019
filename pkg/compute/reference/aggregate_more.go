package reference

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// appendStringAggArgs appends, after one argument per aggregate, each
// string_agg's separator and ORDER BY values and each concat_agg's ORDER
// BY values over input row ds.
func appendStringAggArgs(red *plan.Reduce, ds, args []row.Datum) ([]row.Datum, error) {
	for _, a := range red.Aggregates {
		if a.Func != plan.AggStringAgg && a.Func != plan.AggConcat {
			continue
		}
		if a.Func == plan.AggStringAgg {
			if a.Sep == nil {
				return nil, &evalError{"XX000", "string_agg without a separator"}
			}
			v, err := a.Sep.Eval(ds)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
		for _, o := range a.OrderBy {
			v, err := o.Expr.Eval(ds)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
	}
	return args, nil
}

// stringAgg computes aggregate i, a string_agg, over group g (argument
// tuples as appendStringAggArgs lays them out): expand every tuple to its
// multiplicity, sort by the ORDER BY terms, then value, then separator,
// drop NULL values (and under DISTINCT repeated (value, separator)
// pairs), and join each value to the previous with its own separator.
func stringAgg(red *plan.Reduce, i int, g Collection) (row.Datum, error) {
	at := orderedArgsAt(red, i)
	a := red.Aggregates[i]
	items := orderedItems(g, a.OrderBy, i, at, at+1)
	if len(items) == 0 {
		return row.Null(), nil
	}
	var parts []string
	for j, it := range items {
		if a.Distinct && j > 0 && row.Equal(items[j-1].v, it.v) && row.Equal(items[j-1].sep, it.sep) {
			continue
		}
		if len(parts) > 0 && !it.sep.IsNull() {
			parts = append(parts, raw(it.sep))
		}
		parts = append(parts, raw(it.v))
	}
	if items[0].v.Type() == row.TypeBytes {
		return row.BytesString(strings.Join(parts, "")), nil
	}
	return row.Text(strings.Join(parts, "")), nil
}

// orderedArgsAt is the position of aggregate i's separator (string_agg)
// or first ORDER BY value (concat_agg) in a group's argument tuples.
func orderedArgsAt(red *plan.Reduce, i int) int {
	at := len(red.Aggregates)
	for _, a := range red.Aggregates[:i] {
		switch a.Func {
		case plan.AggStringAgg:
			at += 1 + len(a.OrderBy)
		case plan.AggConcat:
			at += len(a.OrderBy)
		}
	}
	return at
}

func raw(d row.Datum) string {
	if d.Type() == row.TypeBytes {
		return d.BytesString()
	}
	return d.Text()
}

// variance computes the variance kinds over non-null args (distinct
// values with counts) by definition: the exact mean, then the exact sum
// of squared deviations, divided by n or n-1 and rounded once.
func variance(kind aggKind, name string, args []weighted) (row.Datum, error) {
	var n int64
	for _, a := range args {
		n += a.n
	}
	sample := kind == aggVarSamp || kind == aggStddevSamp
	if n == 0 || (sample && n == 1) {
		return row.Null(), nil
	}
	mean := new(big.Rat)
	for _, a := range args {
		if a.d.Type() != row.TypeFloat64 {
			return row.Null(), &evalError{"XX000", fmt.Sprintf("%s: cannot aggregate %s values", name, a.d.Type())}
		}
		f := a.d.Float64()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return row.Float64(math.NaN()), nil
		}
		mean.Add(mean, new(big.Rat).Mul(new(big.Rat).SetFloat64(f), new(big.Rat).SetInt64(a.n)))
	}
	mean.Quo(mean, new(big.Rat).SetInt64(n))
	ss := new(big.Rat)
	for _, a := range args {
		d := new(big.Rat).Sub(new(big.Rat).SetFloat64(a.d.Float64()), mean)
		ss.Add(ss, d.Mul(d, d).Mul(d, new(big.Rat).SetInt64(a.n)))
	}
	div := n
	if sample {
		div = n - 1
	}
	f, _ := ss.Quo(ss, new(big.Rat).SetInt64(div)).Float64()
	if math.IsInf(f, 0) {
		return row.Null(), &evalError{"22003", "value out of range: overflow"}
	}
	if kind == aggStddevPop || kind == aggStddevSamp {
		f = math.Sqrt(f)
	}
	return row.Float64(f), nil
}

// sumSquares adds x*x times its count over the distinct non-null values,
// through the expression layer's numeric arithmetic.
func sumSquares(name string, args []weighted) (row.Datum, error) {
	if len(args) == 0 {
		return row.Null(), nil
	}
	sum := row.NumericFromInt64(0)
	for _, a := range args {
		if a.d.Type() != row.TypeNumeric {
			return row.Null(), &evalError{"XX000", fmt.Sprintf("%s: cannot aggregate %s values", name, a.d.Type())}
		}
		sq := expr.Call(expr.FuncMul, expr.Literal(a.d), expr.Literal(a.d))
		e := expr.Call(expr.FuncAdd, expr.Literal(sum), expr.Call(expr.FuncMul, sq, expr.Literal(row.Int64(a.n))))
		var err error
		if sum, err = e.Eval(nil); err != nil {
			return row.Null(), &evalError{expr.Code(err), err.Error()}
		}
	}
	return sum, nil
}

// intervalSumOrAvg sums intervals field by field in big integers (the
// total, not a partial sum, must fit each field) and divides an average
// through the expression layer's interval / float8 operator.
func intervalSumOrAvg(kind aggKind, name string, args []weighted, count int64) (row.Datum, error) {
	var months, days, micros big.Int
	for _, a := range args {
		if a.d.Type() != row.TypeInterval {
			return row.Null(), &evalError{"XX000", fmt.Sprintf("%s: mixed argument types", name)}
		}
		iv, n := a.d.Interval(), big.NewInt(a.n)
		months.Add(&months, new(big.Int).Mul(big.NewInt(int64(iv.Months)), n))
		days.Add(&days, new(big.Int).Mul(big.NewInt(int64(iv.Days)), n))
		micros.Add(&micros, new(big.Int).Mul(big.NewInt(iv.Micros), n))
	}
	fits32 := func(x *big.Int) bool { return x.IsInt64() && x.Int64() == int64(int32(x.Int64())) }
	if !fits32(&months) || !fits32(&days) || !micros.IsInt64() {
		return row.Null(), &evalError{"22008", "interval out of range"}
	}
	sum := row.IntervalDatum(row.Interval{Months: int32(months.Int64()), Days: int32(days.Int64()), Micros: micros.Int64()})
	if kind == aggSum {
		return sum, nil
	}
	avg, err := expr.Call(expr.FuncDiv, expr.Literal(sum), expr.Literal(row.Float64(float64(count)))).Eval(nil)
	if err != nil {
		return row.Null(), &evalError{expr.Code(err), err.Error()}
	}
	return avg, nil
}
