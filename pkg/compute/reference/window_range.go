package reference

import (
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// inRangeTarget reports whether row b is on the frame's side of bound bd
// of row a's RANGE frame over a non-integer ORDER BY column o, by the
// definition of PostgreSQL's in_range support functions: with target t =
// bd.RangeTarget(a's value), the start bound holds b's value v when v is
// at or after t in the order's direction, the end bound when at or before.
// A date compares with its timestamp; NaN is after every number (a NaN
// current value's bound is its peers; a NaN target from a value that is
// not NaN, an infinity minus an infinite offset, holds every value); NULLs
// are where the order puts them.
func inRangeTarget(o plan.ColumnOrder, bd plan.FrameBound, a, b []row.Datum, start bool) (bool, error) {
	cur, val := a[o.Column], b[o.Column]
	order := []plan.ColumnOrder{o}
	if cur.IsNull() || val.IsNull() {
		// Compared with a NULL, every non-NULL bound is where cur is.
		if start {
			return !less(order, b, a), nil
		}
		return !less(order, a, b), nil
	}
	// less: the bound is an upper limit on v in ascending terms.
	lessSide := start == o.Desc
	switch {
	case val.IsNaN() && cur.IsNaN():
		return true, nil
	case val.IsNaN():
		return !lessSide, nil
	case cur.IsNaN():
		return lessSide, nil
	}
	t, err := bd.RangeTarget.Eval([]row.Datum{cur})
	if err != nil {
		return false, err
	}
	if t.IsNaN() {
		return true, nil
	}
	if val.Type() == row.TypeDate && t.Type() == row.TypeTimestamp {
		val = dateAsTimestamp(val.Date())
	}
	c := row.CompareOrder(val, t)
	if lessSide {
		return c <= 0, nil
	}
	return c >= 0, nil
}

func dateAsTimestamp(days int32) row.Datum {
	switch days {
	case row.DateInfinity:
		return row.Timestamp(row.TimestampInfinity)
	case row.DateNegInfinity:
		return row.Timestamp(row.TimestampNegInfinity)
	}
	return row.Timestamp(int64(days) * row.MicrosPerDay)
}
