package expr

import (
	"math"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// evalTimeShift is time_shift(t, us): t plus us microseconds as a time
// value that may lie outside [00:00, 24:00]. PostgreSQL's in_range for a
// time column compares with base ± offset without the wraparound of time
// + interval; the value is a frame bound compared with times, never
// output. The sum saturates at the int64 limits.
func evalTimeShift(t, us row.Datum) (row.Datum, error) {
	if t.Type() != row.TypeTime || us.Type() != row.TypeInt64 {
		return row.Null(), undefinedFunc("time_shift", t, us)
	}
	a, b := t.Time(), us.Int64()
	s := a + b
	switch {
	case b > 0 && s < a:
		s = math.MaxInt64
	case b < 0 && s > a:
		s = math.MinInt64
	}
	return row.Time(s), nil
}

func typeTimeShift(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeTime) || !is(args[1], row.TypeInt64) {
		return row.ColumnType{}, typeSig("time_shift", args)
	}
	return row.ColumnType{Type: row.TypeTime}, nil
}
