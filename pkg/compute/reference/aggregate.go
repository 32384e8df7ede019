package reference

import (
	"fmt"
	"math/big"
	"sort"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// aggKind is an aggregate function, as the reference understands it.
type aggKind int

const (
	aggCountStar aggKind = iota
	aggCount
	aggSum
	aggMin
	aggMax
	aggAvg
	aggStringAgg
	aggVarPop
	aggVarSamp
	aggStddevPop
	aggStddevSamp
	aggSumSquares
	aggJSONAgg
	aggJSONObjectAgg
	aggConcat
)

// weighted is one argument value of a group with its multiplicity.
type weighted struct {
	d row.Datum
	n int64
}

// evalError is an error of the reference evaluator, printed exactly as
// the engine prints its errors so the two can be compared as text.
type evalError struct {
	code, msg string
}

func (e *evalError) Error() string { return e.msg + " (SQLSTATE " + e.code + ")" }

// SQLState returns the SQLSTATE code.
func (e *evalError) SQLState() string { return e.code }

// aggregate computes one aggregate over a group's argument values, written
// to be obviously correct rather than fast: expand multiplicities (or take
// distinct values), drop NULLs, then apply the definition. Integer sums use
// math/big and are range-checked once at the end.
func aggregate(kind aggKind, distinct bool, name string, vals []weighted, rows int64) (row.Datum, error) {
	if kind == aggCountStar {
		return row.Int64(rows), nil
	}
	if kind == aggJSONAgg || kind == aggJSONObjectAgg {
		return jsonAggregate(kind, distinct, vals)
	}
	// The multiset of non-null arguments, as (value, count) with distinct
	// values; DISTINCT sets every count to 1.
	var args []weighted
	for _, v := range vals {
		if v.d.IsNull() || v.n == 0 {
			continue
		}
		found := false
		for i := range args {
			// Under DISTINCT 1.5 and 1.50 are one value.
			if row.Equal(args[i].d, v.d) || distinct && row.Equal(args[i].d.NumericKey(), v.d.NumericKey()) {
				args[i].n += v.n
				found = true
				break
			}
		}
		if !found {
			args = append(args, v)
		}
	}
	if distinct {
		for i := range args {
			args[i].n = 1
		}
	}
	sort.Slice(args, func(i, j int) bool { return row.Compare(args[i].d, args[j].d) < 0 })
	var count int64
	for _, a := range args {
		count += a.n
	}
	switch kind {
	case aggCount:
		return row.Int64(count), nil
	case aggMin:
		if len(args) == 0 {
			return row.Null(), nil
		}
		// Among numerics equal to the least, the largest scale (sorted
		// last), as the engine's min picks.
		least := args[0].d
		for _, a := range args[1:] {
			if row.Compare(a.d.NumericKey(), args[0].d.NumericKey()) == 0 {
				least = a.d
			}
		}
		return least, nil
	case aggMax:
		if len(args) == 0 {
			return row.Null(), nil
		}
		return args[len(args)-1].d, nil
	case aggSum, aggAvg:
		if len(args) == 0 {
			return row.Null(), nil
		}
		switch args[0].d.Type() {
		case row.TypeInt64:
			sum := new(big.Int)
			for _, a := range args {
				if a.d.Type() != row.TypeInt64 {
					return row.Null(), &evalError{"XX000", fmt.Sprintf("%s: mixed argument types", name)}
				}
				sum.Add(sum, new(big.Int).Mul(big.NewInt(a.d.Int64()), big.NewInt(a.n)))
			}
			if !sum.IsInt64() {
				return row.Null(), &evalError{"22003", "bigint out of range in " + name}
			}
			if kind == aggSum {
				return row.Int64(sum.Int64()), nil
			}
			return row.Float64(float64(sum.Int64()) / float64(count)), nil
		case row.TypeFloat64:
			// Float addition is not associative; the engine defines the sum
			// as value*multiplicity added in ascending value order, and so
			// does the reference.
			var sum float64
			for _, a := range args {
				if a.d.Type() != row.TypeFloat64 {
					return row.Null(), &evalError{"XX000", fmt.Sprintf("%s: mixed argument types", name)}
				}
				sum += a.d.Float64() * float64(a.n)
			}
			if kind == aggSum {
				return row.Float64(sum), nil
			}
			return row.Float64(sum / float64(count)), nil
		case row.TypeNumeric:
			if kind != aggSum {
				break
			}
			// The reference sums through the expression layer's numeric
			// addition, independently of the engine's accumulator.
			sum := row.NumericFromInt64(0)
			for _, a := range args {
				var err error
				e := expr.Call(expr.FuncAdd, expr.Literal(sum), expr.Call(expr.FuncMul, expr.Literal(a.d), expr.Literal(row.Int64(a.n))))
				if sum, err = e.Eval(nil); err != nil {
					return row.Null(), &evalError{expr.Code(err), err.Error()}
				}
			}
			return sum, nil
		case row.TypeInterval:
			return intervalSumOrAvg(kind, name, args, count)
		}
		return row.Null(), &evalError{"XX000", fmt.Sprintf("%s: cannot sum %s values", name, args[0].d.Type())}
	case aggVarPop, aggVarSamp, aggStddevPop, aggStddevSamp:
		return variance(kind, name, args)
	case aggSumSquares:
		return sumSquares(name, args)
	}
	return row.Null(), &evalError{"XX000", fmt.Sprintf("unknown aggregate %d", kind)}
}
