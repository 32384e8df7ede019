package expr

import (
	"errors"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Date/time errors with Postgres' messages.
var (
	errTimestampRange = &EvalError{Code: CodeDatetimeFieldOverflow, Msg: "timestamp out of range"}
	errDateRange      = &EvalError{Code: CodeDatetimeFieldOverflow, Msg: "date out of range"}
	errIntervalRange  = &EvalError{Code: CodeDatetimeFieldOverflow, Msg: "interval out of range"}
	errIntegerRange   = &EvalError{Code: CodeNumericValueOutOfRange, Msg: "integer out of range"}
)

// canCastTemporal lists the casts between date/time types (text is
// handled by CanCast).
func canCastTemporal(from, to row.Type) bool {
	switch from {
	case row.TypeDate:
		return to == row.TypeTimestamp || to == row.TypeTimestampTZ
	case row.TypeTimestamp, row.TypeTimestampTZ:
		return to == row.TypeDate || to == row.TypeTime || to == row.TypeTimestamp || to == row.TypeTimestampTZ
	case row.TypeTime:
		return to == row.TypeInterval
	case row.TypeInterval:
		return to == row.TypeTime
	}
	return false
}

// castTemporal converts between date/time types, with timestamptz in UTC.
func castTemporal(d row.Datum, to row.Type) (row.Datum, error) {
	switch d.Type() {
	case row.TypeDate:
		ts, err := dateToTimestamp(d.Date())
		if err != nil {
			return row.Null(), err
		}
		if to == row.TypeTimestampTZ {
			return row.TimestampTZ(ts), nil
		}
		return row.Timestamp(ts), nil
	case row.TypeTimestamp, row.TypeTimestampTZ:
		us := d.Timestamp()
		if d.Type() == row.TypeTimestampTZ {
			us = d.TimestampTZ()
		}
		switch to {
		case row.TypeDate:
			return timestampToDate(us), nil
		case row.TypeTime:
			if !row.TimestampIsFinite(us) {
				return row.Null(), nil // Postgres' time of an infinite timestamp is NULL
			}
			_, rem := row.FloorDiv(us, row.MicrosPerDay)
			return row.Time(rem), nil
		case row.TypeTimestamp:
			return row.Timestamp(us), nil
		case row.TypeTimestampTZ:
			return row.TimestampTZ(us), nil
		}
	case row.TypeTime:
		return row.IntervalDatum(row.Interval{Micros: d.Time()}), nil
	case row.TypeInterval:
		_, rem := row.FloorDiv(d.Interval().Micros, row.MicrosPerDay)
		return row.Time(rem), nil
	}
	return row.Null(), evalErr(CodeUndefinedFunction, "cannot cast type %s to %s", d.Type().PGName(), to.PGName())
}

func dateToTimestamp(days int32) (int64, error) {
	switch days {
	case row.DateInfinity:
		return row.TimestampInfinity, nil
	case row.DateNegInfinity:
		return row.TimestampNegInfinity, nil
	}
	us := int64(days) * row.MicrosPerDay
	if !row.ValidTimestamp(us) {
		return 0, &EvalError{Code: CodeDatetimeFieldOverflow, Msg: "date out of range for timestamp"}
	}
	return us, nil
}

func timestampToDate(us int64) row.Datum {
	switch us {
	case row.TimestampInfinity:
		return row.Date(row.DateInfinity)
	case row.TimestampNegInfinity:
		return row.Date(row.DateNegInfinity)
	}
	days, _ := row.FloorDiv(us, row.MicrosPerDay)
	return row.Date(int32(days))
}

// ParseTemporal parses text as a date/time type, timestamptz without a
// zone in the text taken in loc (nil: UTC), with Postgres' SQLSTATEs:
// 22007 for malformed input, 22008 for a field or value out of range,
// 22015 for an interval field overflow, 22023 for an unknown zone.
func ParseTemporal(s string, to row.Type, loc *time.Location) (row.Datum, error) {
	var d row.Datum
	var err error
	switch to {
	case row.TypeDate:
		var v int32
		v, err = row.ParseDate(s)
		d = row.Date(v)
	case row.TypeTime:
		var v int64
		v, err = row.ParseTime(s)
		d = row.Time(v)
	case row.TypeTimestamp:
		var v int64
		v, err = row.ParseTimestamp(s)
		d = row.Timestamp(v)
	case row.TypeTimestampTZ:
		var v int64
		v, err = row.ParseTimestampTZ(s, loc)
		d = row.TimestampTZ(v)
	case row.TypeInterval:
		var v row.Interval
		v, err = row.ParseInterval(s)
		d = row.IntervalDatum(v)
	default:
		return row.Null(), evalErr(CodeInternal, "%s is not a date/time type", to)
	}
	if err != nil {
		return row.Null(), parseError(err)
	}
	return d, nil
}

func parseError(err error) *EvalError {
	var pe *row.ParseError
	if !errors.As(err, &pe) {
		return evalErr(CodeInvalidDatetimeFormat, "%v", err)
	}
	code := CodeInvalidDatetimeFormat
	switch pe.Kind {
	case row.ErrFieldRange, row.ErrValueRange:
		code = CodeDatetimeFieldOverflow
	case row.ErrZone:
		code = CodeInvalidParameterValue
	case row.ErrIntervalField:
		code = CodeIntervalFieldOverflow
	case row.ErrUnsupported:
		code = CodeFeatureNotSupported
	}
	return &EvalError{Code: code, Msg: pe.Error()}
}

// ---- arithmetic ----

// addMonthsDays adds months then days to a wall-clock timestamp as
// Postgres does: a month step that lands past the end of the month
// clamps to its last day ('2024-01-31' + '1 mon' = '2024-02-29').
func addMonthsDays(us int64, months, days int32) (int64, error) {
	if months != 0 {
		d, rem := row.FloorDiv(us, row.MicrosPerDay)
		y, m, dd := row.CivilFromDays(d)
		total := y*12 + (m - 1) + int64(months)
		ny, nm := row.FloorDiv(total, 12)
		nm++
		dd = min(dd, row.DaysInMonth(ny, nm))
		nd := row.DaysFromCivil(ny, nm, dd)
		if nd < row.MinDateDays || nd > row.MaxTimestamp/row.MicrosPerDay {
			return 0, errTimestampRange
		}
		us = nd*row.MicrosPerDay + rem
	}
	if days != 0 {
		v, ok := addChecked(us, int64(days)*row.MicrosPerDay)
		if !ok {
			return 0, errTimestampRange
		}
		us = v
	}
	return us, nil
}

func addChecked(a, b int64) (int64, bool) {
	r := a + b
	return r, (b >= 0) == (r >= a)
}

// timestampPlusInterval is timestamp + interval (wall-clock arithmetic).
func timestampPlusInterval(us int64, iv row.Interval) (int64, error) {
	if !row.TimestampIsFinite(us) {
		return us, nil
	}
	us, err := addMonthsDays(us, iv.Months, iv.Days)
	if err != nil {
		return 0, err
	}
	r, ok := addChecked(us, iv.Micros)
	if !ok || !row.ValidTimestamp(r) {
		return 0, errTimestampRange
	}
	return r, nil
}

// timestampTZPlusInterval is timestamptz + interval: months and days
// step the wall clock in loc (so a day across a daylight saving change
// is 23 or 25 hours), the time part is added to the instant.
func timestampTZPlusInterval(us int64, iv row.Interval, loc *time.Location) (int64, error) {
	if !row.TimestampIsFinite(us) {
		return us, nil
	}
	if iv.Months != 0 || iv.Days != 0 {
		local := us + row.ZoneOffset(us, loc)*row.MicrosPerSecond
		moved, err := addMonthsDays(local, iv.Months, iv.Days)
		if err != nil {
			return 0, err
		}
		us = row.TimestampFromLocal(moved, loc)
	}
	r, ok := addChecked(us, iv.Micros)
	if !ok || !row.ValidTimestamp(r) {
		return 0, errTimestampRange
	}
	return r, nil
}

// timestampDiff is timestamp - timestamp: the micros between them with
// whole 24-hour days moved to the day field, as Postgres'
// interval_justify_hours does.
func timestampDiff(a, b int64) (row.Datum, error) {
	if !row.TimestampIsFinite(a) || !row.TimestampIsFinite(b) {
		return row.Null(), &EvalError{Code: CodeDatetimeFieldOverflow, Msg: "cannot subtract infinite timestamps"}
	}
	d, ok := addChecked(a, -b)
	if !ok {
		return row.Null(), errIntervalRange
	}
	days := d / row.MicrosPerDay
	return row.IntervalDatum(row.Interval{Days: int32(days), Micros: d - days*row.MicrosPerDay}), nil
}

func intervalAdd(a, b row.Interval) (row.Datum, error) {
	m := int64(a.Months) + int64(b.Months)
	d := int64(a.Days) + int64(b.Days)
	us, ok := addChecked(a.Micros, b.Micros)
	if !ok || m != int64(int32(m)) || d != int64(int32(d)) {
		return row.Null(), errIntervalRange
	}
	return row.IntervalDatum(row.Interval{Months: int32(m), Days: int32(d), Micros: us}), nil
}

func intervalNeg(a row.Interval) (row.Interval, error) {
	n, ok := a.Neg()
	if !ok {
		return row.Interval{}, errIntervalRange
	}
	return n, nil
}

// intervalScale multiplies an interval by f (or divides by it), cascading
// fractional months to days and fractional days to time as Postgres'
// interval_mul and interval_div do.
func intervalScale(iv row.Interval, f float64, divide bool) (row.Datum, error) {
	if divide && f == 0 {
		return row.Null(), errDivisionByZero
	}
	out, ok := row.ScaleInterval(iv, f, divide)
	if !ok {
		return row.Null(), errIntervalRange
	}
	return row.IntervalDatum(out), nil
}

// temporalResult is the result type of a date/time arithmetic operator,
// or TypeInvalid when the operator does not exist for these types.
func temporalResult(op string, a, b row.Type) row.Type {
	type pair struct{ a, b row.Type }
	const (
		D, T, TS, TZ, I, N, F = row.TypeDate, row.TypeTime, row.TypeTimestamp, row.TypeTimestampTZ, row.TypeInterval, row.TypeInt64, row.TypeFloat64
	)
	var table map[pair]row.Type
	switch op {
	case "+":
		table = map[pair]row.Type{{D, N}: D, {N, D}: D, {D, I}: TS, {I, D}: TS, {D, T}: TS, {T, D}: TS,
			{TS, I}: TS, {I, TS}: TS, {TZ, I}: TZ, {I, TZ}: TZ, {T, I}: T, {I, T}: T, {I, I}: I}
	case "-":
		table = map[pair]row.Type{{D, N}: D, {D, D}: N, {D, I}: TS, {TS, I}: TS, {TZ, I}: TZ, {T, I}: T,
			{TS, TS}: I, {TZ, TZ}: I, {T, T}: I, {I, I}: I}
	case "*":
		table = map[pair]row.Type{{I, F}: I, {F, I}: I, {I, N}: I, {N, I}: I}
	case "/":
		table = map[pair]row.Type{{I, F}: I, {I, N}: I}
	}
	if t, ok := table[pair{a, b}]; ok {
		return t
	}
	return row.TypeInvalid
}

// evalTemporal evaluates a date/time arithmetic operator (UTC for
// timestamptz; the SQL layer uses FuncTZPlus for zone-aware steps).
func evalTemporal(op string, a, b row.Datum) (row.Datum, error) {
	ta, tb := a.Type(), b.Type()
	if temporalResult(op, ta, tb) == row.TypeInvalid {
		return row.Null(), evalErr(CodeUndefinedFunction, "operator does not exist: %s %s %s", ta.PGName(), op, tb.PGName())
	}
	// Commutative forms: put the interval, integer or time second for +,
	// the interval first for *.
	swap := false
	switch op {
	case "+":
		swap = ta == row.TypeInterval && tb != row.TypeInterval || ta == row.TypeInt64 || ta == row.TypeTime && tb == row.TypeDate
	case "*":
		swap = ta != row.TypeInterval
	}
	if swap {
		a, b, ta, tb = b, a, tb, ta
	}
	switch {
	case ta == row.TypeDate && tb == row.TypeInt64:
		return dateAddDays(a.Date(), b.Int64(), op == "-")
	case ta == row.TypeDate && tb == row.TypeDate:
		if !row.DateIsFinite(a.Date()) || !row.DateIsFinite(b.Date()) {
			return row.Null(), &EvalError{Code: CodeDatetimeFieldOverflow, Msg: "cannot subtract infinite dates"}
		}
		return row.Int64(int64(a.Date()) - int64(b.Date())), nil
	case ta == row.TypeDate && tb == row.TypeTime:
		ts, err := dateToTimestamp(a.Date())
		if err != nil || !row.TimestampIsFinite(ts) {
			return row.Timestamp(ts), err
		}
		return row.Timestamp(ts + b.Time()), nil
	case ta == row.TypeDate && tb == row.TypeInterval:
		ts, err := dateToTimestamp(a.Date())
		if err != nil {
			return row.Null(), err
		}
		return tsInterval(op, row.Timestamp(ts), b.Interval(), nil)
	case (ta == row.TypeTimestamp || ta == row.TypeTimestampTZ) && tb == row.TypeInterval:
		return tsInterval(op, a, b.Interval(), time.UTC)
	case ta == row.TypeTimestamp && tb == row.TypeTimestamp:
		return timestampDiff(a.Timestamp(), b.Timestamp())
	case ta == row.TypeTimestampTZ && tb == row.TypeTimestampTZ:
		return timestampDiff(a.TimestampTZ(), b.TimestampTZ())
	case ta == row.TypeTime && tb == row.TypeInterval:
		us := b.Interval().Micros % row.MicrosPerDay
		if op == "-" {
			us = -us
		}
		_, r := row.FloorDiv(a.Time()+us, row.MicrosPerDay)
		return row.Time(r), nil
	case ta == row.TypeTime && tb == row.TypeTime:
		return row.IntervalDatum(row.Interval{Micros: a.Time() - b.Time()}), nil
	case ta == row.TypeInterval && tb == row.TypeInterval:
		y := b.Interval()
		if op == "-" {
			var err error
			if y, err = intervalNeg(y); err != nil {
				return row.Null(), err
			}
		}
		return intervalAdd(a.Interval(), y)
	case ta == row.TypeInterval:
		f, _ := asFloat(b)
		return intervalScale(a.Interval(), f, op == "/")
	}
	return row.Null(), evalErr(CodeInternal, "date/time operator %s %s %s not implemented", ta, op, tb)
}

func dateAddDays(days int32, n int64, subtract bool) (row.Datum, error) {
	if !row.DateIsFinite(days) {
		return row.Date(days), nil
	}
	if subtract {
		n = -n
	}
	if n != int64(int32(n)) {
		return row.Null(), errIntegerRange
	}
	r := int64(days) + n
	if r < row.MinDateDays || r > row.MaxDateDays {
		return row.Null(), errDateRange
	}
	return row.Date(int32(r)), nil
}

// tsInterval is timestamp(tz) ± interval; loc nil means wall-clock
// (timestamp) arithmetic.
func tsInterval(op string, ts row.Datum, iv row.Interval, loc *time.Location) (row.Datum, error) {
	if op == "-" {
		var err error
		if iv, err = intervalNeg(iv); err != nil {
			return row.Null(), err
		}
	}
	if ts.Type() == row.TypeTimestampTZ {
		us, err := timestampTZPlusInterval(ts.TimestampTZ(), iv, loc)
		return row.TimestampTZ(us), err
	}
	us, err := timestampPlusInterval(ts.Timestamp(), iv)
	return row.Timestamp(us), err
}
