package operators

import (
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// intervalSum sums interval values field by field, as PostgreSQL's
// sum(interval) does (months, days and microseconds kept apart, never
// cascaded), exactly: the result is out of range only when the true
// total is, not when a partial sum in some arrival order would be.
type intervalSum struct {
	months, days, micros int128
}

func (s *intervalSum) add(v row.Datum, n int64) {
	iv := v.Interval()
	s.months = s.months.add(mul64(int64(iv.Months), n))
	s.days = s.days.add(mul64(int64(iv.Days), n))
	s.micros = s.micros.add(mul64(iv.Micros, n))
}

// errIntervalRange is PostgreSQL's error for an interval field that
// leaves its range (SQLSTATE 22008).
var errIntervalRange = Error{Code: CodeDatetimeFieldOverflow, Message: "interval out of range"}

// result is the sum, or for avg the sum divided by count as
// PostgreSQL's interval_div divides it (fractional months cascade to
// days, fractional days to time).
func (s *intervalSum) result(fn AggFunc, count int64) (row.Datum, error) {
	m, okM := s.months.int64()
	d, okD := s.days.int64()
	us, okU := s.micros.int64()
	if !okM || !okD || !okU || m != int64(int32(m)) || d != int64(int32(d)) {
		return row.Null(), errIntervalRange
	}
	iv := row.Interval{Months: int32(m), Days: int32(d), Micros: us}
	if fn == AggAvg {
		var ok bool
		if iv, ok = row.ScaleInterval(iv, float64(count), true); !ok {
			return row.Null(), errIntervalRange
		}
	}
	return row.IntervalDatum(iv), nil
}
