package expr

import (
	"math"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// intRange is a SQL integer type narrower than the engine's 64 bits.
type intRange struct {
	name     string // Postgres' name, for messages
	min, max int64
	// errRange is Postgres' error for a computed value outside the range.
	errRange *EvalError
}

var (
	int2Range = &intRange{name: "smallint", min: math.MinInt16, max: math.MaxInt16,
		errRange: &EvalError{Code: CodeNumericValueOutOfRange, Msg: "smallint out of range"}}
	int4Range = &intRange{name: "integer", min: math.MinInt32, max: math.MaxInt32,
		errRange: &EvalError{Code: CodeNumericValueOutOfRange, Msg: "integer out of range"}}
)

func typeNarrowInt(name string) func(args []row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		if !is(args[0], row.TypeInt64, row.TypeFloat64, row.TypeText, row.TypeNumeric) {
			return row.ColumnType{}, typeSig(name, args)
		}
		return row.ColumnType{Type: row.TypeInt64}, nil
	}
}

// narrowInt converts a value to the range r as Postgres' casts to int2 and
// int4 do (int8 and float8 inputs fail with "<type> out of range", text
// with its own wording).
func narrowInt(r *intRange) func(a row.Datum) (row.Datum, error) {
	return func(a row.Datum) (row.Datum, error) {
		var i int64
		switch a.Type() {
		case row.TypeInt64:
			i = a.Int64()
		case row.TypeFloat64:
			f := math.RoundToEven(a.Float64())
			if math.IsNaN(f) || f < float64(r.min) || f > float64(r.max) {
				return row.Null(), r.errRange
			}
			i = int64(f)
		case row.TypeNumeric:
			v, err := numericToInt(a.Decimal(), r.name)
			if err != nil {
				return row.Null(), err
			}
			if v < r.min || v > r.max {
				return row.Null(), r.errRange
			}
			i = v
		case row.TypeText:
			d, err := parseText(a.Text(), row.TypeInt64)
			if Code(err) == CodeNumericValueOutOfRange {
				return row.Null(), evalErr(CodeNumericValueOutOfRange, "value %q is out of range for type %s", a.Text(), r.name)
			}
			if err != nil {
				return row.Null(), evalErr(CodeInvalidTextRepr, "invalid input syntax for type %s: %q", r.name, a.Text())
			}
			i = d.Int64()
			if i < r.min || i > r.max {
				return row.Null(), evalErr(CodeNumericValueOutOfRange, "value %q is out of range for type %s", a.Text(), r.name)
			}
		default:
			return row.Null(), evalErr(CodeUndefinedFunction, "cannot cast type %s to %s", a.Type().PGName(), r.name)
		}
		if i < r.min || i > r.max {
			return row.Null(), r.errRange
		}
		return row.Int64(i), nil
	}
}
