package planner

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// rangeOffsetType is the offset type of a RANGE frame over an ORDER BY
// column of type t other than an integer (PostgreSQL's in_range support
// functions): float8 and numeric take an offset of their own type, the
// date, time and interval types an interval.
func rangeOffsetType(t row.Type) (row.Type, bool) {
	switch t {
	case row.TypeFloat64, row.TypeNumeric:
		return t, true
	case row.TypeDate, row.TypeTimestamp, row.TypeTimestampTZ, row.TypeTime, row.TypeInterval:
		return row.TypeInterval, true
	}
	return row.TypeInvalid, false
}

// implicitOffset reports whether an offset of type from converts to the
// offset type to implicitly, as PostgreSQL resolves the in_range function.
func implicitOffset(from, to row.Type) bool {
	switch {
	case from == to, from == row.TypeNull:
		return true
	case to == row.TypeFloat64:
		return from == row.TypeInt64 || from == row.TypeNumeric
	case to == row.TypeNumeric:
		return from == row.TypeInt64
	}
	return false
}

// rangeTarget lowers the offset of a RANGE frame bound over the ORDER BY
// column o (not an integer) to the bound's target: #0 minus the offset
// for PRECEDING in ascending order and FOLLOWING in descending order, plus
// it otherwise (see plan.FrameBound). The offset must be a constant: NULL
// is 22004 and a negative (or NaN) offset 22013, as PostgreSQL. Over a
// time column the offset's months and days are ignored, in the sign test
// too, and the bound does not wrap around midnight (timeRangeTarget).
func (c *exprCtx) rangeTarget(n *pg.Node, what string, kind plan.BoundKind, o winOrder) (*expr.Expr, error) {
	colType := o.x.t.Type
	offType, _ := rangeOffsetType(colType)
	x, err := c.lowerTyped(n)
	if err != nil {
		return nil, err
	}
	if x.untyped() {
		if x, err = c.settle(x, offType); err != nil {
			return nil, err
		}
	}
	if !implicitOffset(x.t.Type, offType) {
		return nil, sqlerr.Unsupported("RANGE with offset PRECEDING/FOLLOWING for column type " + colType.PGName() + " and offset type " + x.t.Type.PGName())
	}
	if len(x.e.Columns()) > 0 {
		return nil, sqlerr.Errorf("42P10", "argument of RANGE must not contain variables")
	}
	if x.t.Type != offType && x.t.Type != row.TypeNull {
		if x, err = c.castTo(x, offType); err != nil {
			return nil, err
		}
	}
	d, err := x.e.Eval(nil)
	if err != nil {
		return nil, err
	}
	if d.IsNull() {
		return nil, sqlerr.Errorf("22004", "%s must not be null", what)
	}
	if colType == row.TypeTime {
		return timeRangeTarget(d.Interval(), kind, o.desc)
	}
	if negativeOffset(d) {
		return nil, errRangeOffset
	}
	fn := expr.FuncAdd
	if (kind == plan.Preceding) != o.desc {
		fn = expr.FuncSub
	}
	t := expr.Call(fn, expr.Column(0), expr.Literal(d))
	return &t, nil
}

var errRangeOffset = sqlerr.New("22013", "invalid preceding or following size in window function")

// timeRangeTarget is the bound's target over a time column, as
// PostgreSQL's in_range_time_interval: base ± the offset's time part (its
// months and days are ignored, as time + interval ignores them), without
// the wraparound of time + interval, so '1 hour' PRECEDING of 00:30 takes
// no rows from the evening. A negative time part is 22013.
func timeRangeTarget(off row.Interval, kind plan.BoundKind, desc bool) (*expr.Expr, error) {
	if off.Micros < 0 {
		return nil, errRangeOffset
	}
	us := off.Micros
	if (kind == plan.Preceding) != desc {
		us = -us
	}
	t := expr.Call(expr.FuncTimeShift, expr.Column(0), expr.Literal(row.Int64(us)))
	return &t, nil
}

// negativeOffset reports an offset PostgreSQL's in_range rejects: below
// zero, NaN, or an interval shorter than nothing.
func negativeOffset(d row.Datum) bool {
	switch d.Type() {
	case row.TypeFloat64:
		f := d.Float64()
		return math.IsNaN(f) || f < 0
	case row.TypeNumeric:
		dec := d.Decimal()
		return dec.Form == apd.NaN || dec.Form == apd.NaNSignaling || dec.Negative && !dec.IsZero()
	case row.TypeInterval:
		return d.Interval().CompareLength(row.Interval{}) < 0
	}
	return false
}

// typedRange reports whether a RANGE frame with an offset may order by a
// column of type t other than an integer.
func typedRange(t row.Type) bool {
	_, ok := rangeOffsetType(t)
	return ok
}
