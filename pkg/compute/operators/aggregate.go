package operators

import (
	"fmt"
	"math/bits"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// AggFunc names an aggregate function.
type AggFunc uint8

// The aggregate functions. Every one but CountStar reads one argument
// column; all but the counts ignore NULL arguments and return NULL when no
// non-null argument remains.
const (
	AggInvalid AggFunc = iota
	// AggCountStar counts rows (its argument, if any, is ignored).
	AggCountStar
	// AggCount counts non-null arguments.
	AggCount
	// AggSum sums int64 (error 22003 on overflow), float64, numeric
	// (exactly, with PostgreSQL's NaN and infinity rules) or interval
	// (field by field, exactly; error 22008 when a field of the total
	// leaves its range) arguments.
	AggSum
	// AggMin and AggMax return the least / greatest argument in SQL order.
	AggMin
	AggMax
	// AggAvg returns float64(sum) / float64(count) of the non-null
	// arguments; an int64 sum that overflows is error 22003. Of intervals
	// it is the interval sum divided by the count as PostgreSQL's
	// interval_div divides.
	AggAvg
	// AggStringAgg concatenates the non-null text arguments, each but the
	// first preceded by its own row's separator (column Sep; a NULL
	// separator adds nothing), ordered by Order, then by value and
	// separator (stringagg.go).
	AggStringAgg
	// AggVarPop, AggVarSamp, AggStddevPop and AggStddevSamp are the
	// population and sample variance and standard deviation of float64
	// arguments, computed exactly and rounded once (variance.go). The SQL
	// layer computes those of integers and numerics from sums instead.
	AggVarPop
	AggVarSamp
	AggStddevPop
	AggStddevSamp
	// AggSumSquares is the exact sum of the squares of numeric arguments
	// (NaN if one is NaN, Infinity if one is infinite): with count and
	// sum, what the SQL layer computes numeric variances from; under
	// Distinct it squares the distinct arguments.
	AggSumSquares
	// AggJSONAgg and AggJSONObjectAgg are jsonb_agg and
	// jsonb_object_agg over jsonb arguments (jsonagg.go).
	AggJSONAgg
	AggJSONObjectAgg
	// AggConcat concatenates the non-null arguments (arrays of one type,
	// or jsonb arrays) ordered by Order, then by value (concatagg.go):
	// array_agg and jsonb_agg with ORDER BY.
	AggConcat
)

var aggNames = [...]string{"invalid", "count(*)", "count", "sum", "min", "max", "avg",
	"string_agg", "var_pop", "var_samp", "stddev_pop", "stddev_samp", "sum_squares", "jsonb_agg", "jsonb_object_agg", "concat_agg"}

func (f AggFunc) String() string {
	if int(f) < len(aggNames) {
		return aggNames[f]
	}
	return fmt.Sprintf("agg(%d)", uint8(f))
}

// Aggregate is one aggregate of a Reduce: a function over argument column
// Column of the reduce input's values. Distinct applies the function to the
// set of distinct non-null arguments (count(distinct x), sum(distinct x)).
// Sep is read by AggStringAgg only (the separator column), Order by
// AggStringAgg and AggConcat (the ORDER BY inside the call), both over
// columns of the same values.
type Aggregate struct {
	Func     AggFunc
	Column   int
	Distinct bool
	Sep      int
	Order    []row.ColumnOrder
}

func (a Aggregate) String() string {
	d := ""
	if a.Distinct {
		d = "distinct "
	}
	if a.Func == AggCountStar {
		return "count(*)"
	}
	return fmt.Sprintf("%s(%s#%d)", a.Func, d, a.Column)
}

// argCount is one argument value with its multiplicity in a group.
type argCount struct {
	d row.Datum
	n int64
}

// evalAggregate computes a over args: the group's argument values with
// positive multiplicities, NULLs included, which must be sorted in SQL
// order (equal datums adjacent) when needsSorted(a, args) says so. rows is
// the group's total row count.
func evalAggregate(a Aggregate, args []argCount, rows int64) (row.Datum, error) {
	if a.Func == AggCountStar {
		return row.Int64(rows), nil
	}
	mult := func(i int) int64 { return multiplicity(a, args, i) }
	switch a.Func {
	case AggCount:
		var n int64
		for i, v := range args {
			if !v.d.IsNull() {
				n += mult(i)
			}
		}
		return row.Int64(n), nil
	case AggMin, AggMax:
		var best row.Datum
		found := false
		for _, v := range args {
			if v.d.IsNull() {
				continue
			}
			if !found || moreExtreme(v.d, best, a.Func == AggMax) {
				best, found = v.d, true
			}
		}
		if !found {
			return row.Null(), nil
		}
		return best, nil
	case AggSum, AggAvg:
		return sumOrAvg(a, args)
	case AggVarPop, AggVarSamp, AggStddevPop, AggStddevSamp:
		return floatVariance(a, args)
	case AggSumSquares:
		return sumSquares(a, args)
	case AggJSONAgg, AggJSONObjectAgg:
		return jsonAggregate(a, args, mult)
	default:
		return row.Null(), Error{Code: CodeInternal, Message: fmt.Sprintf("unknown aggregate function %s", a.Func)}
	}
}

// sameArg reports whether x and y are one argument value of a: under
// DISTINCT by SQL equality (1.5 and 1.50 are one value), else as datums
// (a sum's display scale is its inputs' largest).
func sameArg(a Aggregate, x, y row.Datum) bool {
	if a.Distinct {
		return row.Equal(x.NumericKey(), y.NumericKey())
	}
	return row.Equal(x, y)
}

// multiplicity is the weight of args[i] in a: its count, or under
// Distinct 1 for the first of a run of equal values (args sorted) and 0
// for the rest.
func multiplicity(a Aggregate, args []argCount, i int) int64 {
	if a.Distinct {
		if i > 0 && sameArg(a, args[i-1].d, args[i].d) {
			return 0
		}
		return 1
	}
	return args[i].n
}

// needsSorted reports whether evalAggregate needs args sorted: DISTINCT
// collapses adjacent equal values, and a float sum is defined in ascending
// value order (float addition is not associative). Counts, min, max and
// exact integer sums do not care, and skipping the sort is most of the cost
// of a count or sum over a large group.
func needsSorted(a Aggregate, args []argCount) bool {
	if a.Distinct || a.Func == AggJSONAgg || a.Func == AggJSONObjectAgg {
		return true
	}
	if a.Func != AggSum && a.Func != AggAvg {
		return false
	}
	for _, v := range args {
		if v.d.Type() == row.TypeFloat64 {
			return true
		}
	}
	return false
}

func sumOrAvg(a Aggregate, args []argCount) (row.Datum, error) {
	var (
		isum  int128
		fsum  float64
		nsum  numericSum
		ivsum intervalSum
		count int64
		typ   row.Type
	)
	// Walk runs of adjacent equal values. When args is sorted (DISTINCT,
	// floats) a run is one distinct value, so a float sum adds each value
	// once times its total multiplicity and depends only on the multiset;
	// integer sums are exact, so for them runs may repeat a value.
	for i := 0; i < len(args); {
		v := args[i].d
		var n int64
		for ; i < len(args) && sameArg(a, args[i].d, v); i++ {
			n += args[i].n
		}
		if v.IsNull() || n == 0 {
			continue
		}
		if a.Distinct {
			n = 1
		}
		switch t := v.Type(); {
		case typ != row.TypeInvalid && t != typ:
			return row.Null(), Error{Code: CodeInternal, Message: fmt.Sprintf("%s: mixed argument types %s and %s", a.Func, typ, t)}
		case t == row.TypeInt64:
			isum = isum.add(mul64(v.Int64(), n))
		case t == row.TypeFloat64:
			fsum += v.Float64() * float64(n)
		case t == row.TypeNumeric && a.Func == AggSum:
			nsum.add(v, n)
		case t == row.TypeInterval:
			ivsum.add(v, n)
		default:
			return row.Null(), Error{Code: CodeInternal, Message: fmt.Sprintf("%s: cannot sum %s values", a.Func, t)}
		}
		typ = v.Type()
		count += n
	}
	if count == 0 {
		return row.Null(), nil
	}
	if typ == row.TypeNumeric {
		return nsum.result()
	}
	if typ == row.TypeInterval {
		return ivsum.result(a.Func, count)
	}
	if typ == row.TypeInt64 {
		s, ok := isum.int64()
		if !ok {
			return row.Null(), Error{Code: CodeNumericOutOfRange, Message: "bigint out of range in " + a.Func.String()}
		}
		if a.Func == AggSum {
			return row.Int64(s), nil
		}
		return row.Float64(float64(s) / float64(count)), nil
	}
	if a.Func == AggSum {
		return row.Float64(fsum), nil
	}
	return row.Float64(fsum / float64(count)), nil
}

// int128 is a two's-complement 128-bit integer: exact sums of up to 2^63
// products of two int64s, so overflow is judged on the true sum, not on
// the order in which updates arrived.
type int128 struct {
	hi int64
	lo uint64
}

func mul64(a, b int64) int128 {
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(absU(a), absU(b))
	r := int128{hi: int64(hi), lo: lo}
	if neg {
		r = r.neg()
	}
	return r
}

func absU(a int64) uint64 {
	if a < 0 {
		return uint64(-a) // correct for MinInt64 too: two's complement wraps to 2^63
	}
	return uint64(a)
}

func (x int128) neg() int128 {
	lo, borrow := bits.Sub64(0, x.lo, 0)
	hi := -x.hi - int64(borrow)
	return int128{hi: hi, lo: lo}
}

func (x int128) add(y int128) int128 {
	lo, carry := bits.Add64(x.lo, y.lo, 0)
	return int128{hi: x.hi + y.hi + int64(carry), lo: lo}
}

// int64 returns x as an int64 and whether it fits.
func (x int128) int64() (int64, bool) {
	v := int64(x.lo)
	if (x.hi == 0 && v >= 0) || (x.hi == -1 && v < 0) {
		return v, true
	}
	return 0, false
}

// moreExtreme reports whether d replaces best as the least (greatest when
// max) argument. Numerics of one value at different scales tie in SQL;
// the largest scale wins either way, the rule a group's key follows
// (ShownKey), so that the result depends on the group's contents only.
func moreExtreme(d, best row.Datum, max bool) bool {
	c := row.Compare(d.NumericKey(), best.NumericKey())
	if c == 0 {
		return row.Compare(d, best) > 0
	}
	return (c > 0) == max
}
