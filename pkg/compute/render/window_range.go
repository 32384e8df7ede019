package render

import (
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// rangeTarget returns the operator's Target of a RANGE frame bound over a
// non-integer ORDER BY column (plan.FrameBound.RangeTarget), or nil. The
// bound's value is the target expression over the current value, then, as
// PostgreSQL's in_range functions compare:
//   - for a date column (the expression gives a timestamp), the first
//     date at or after it in the order's direction (start) or the last at
//     or before it (end), so that dates compare as timestamps;
//   - a NaN from a value that is not NaN (an infinite value minus or plus
//     an infinite offset) takes every number on its side (PostgreSQL
//     treats +Infinity as infinitely preceding +Infinity and -Infinity as
//     infinitely following -Infinity) and NaN only where in_range puts NaN
//     after the bound: the bound is the infinity at that end.
func rangeTarget(b plan.FrameBound, start, desc bool) func(row.Datum) (row.Datum, error) {
	if b.RangeTarget == nil {
		return nil
	}
	e := *b.RangeTarget
	// ceil: the bound rounds towards later values in ascending terms.
	ceil := start != desc
	return func(cur row.Datum) (row.Datum, error) {
		t, err := e.Eval([]row.Datum{cur})
		if err != nil || t.IsNull() {
			return t, err
		}
		switch {
		case cur.Type() == row.TypeDate && t.Type() == row.TypeTimestamp:
			return timestampToDateBound(t.Timestamp(), ceil), nil
		case t.IsNaN() && !cur.IsNaN():
			return infinity(t.Type(), ceil), nil
		}
		return t, nil
	}
}

func timestampToDateBound(us int64, ceil bool) row.Datum {
	switch us {
	case row.TimestampInfinity:
		return row.Date(row.DateInfinity)
	case row.TimestampNegInfinity:
		return row.Date(row.DateNegInfinity)
	}
	days, rem := row.FloorDiv(us, row.MicrosPerDay)
	if ceil && rem != 0 {
		days++
	}
	return row.Date(int32(days))
}

// infinity is -Infinity (neg) or +Infinity of type t: bounds that take
// every number and, on the side where in_range excludes NaN, no NaN.
func infinity(t row.Type, neg bool) row.Datum {
	if t == row.TypeNumeric {
		d, err := row.Numeric(&apd.Decimal{Form: apd.Infinite, Negative: neg})
		if err == nil {
			return d
		}
	}
	if neg {
		return row.Float64(math.Inf(-1))
	}
	return row.Float64(math.Inf(1))
}

// frameBound converts a plan frame bound to the operator's.
func frameBound(b plan.FrameBound, kind operators.FrameBoundKind, start, desc bool) operators.FrameBound {
	return operators.FrameBound{Kind: kind, Offset: b.Offset, Target: rangeTarget(b, start, desc)}
}
