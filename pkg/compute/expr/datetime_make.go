package expr

import (
	"fmt"
	"math"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// ---- typing of the date/time functions ----

func typeSig2(a, b, result row.Type) func([]row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		if !is(args[0], a) || !is(args[1], b) {
			return row.ColumnType{}, typeSig("function", args)
		}
		return row.ColumnType{Type: result}, nil
	}
}

func typeTimezone(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeText) {
		return row.ColumnType{}, typeSig("timezone", args)
	}
	switch args[1].Type {
	case row.TypeTimestamp:
		return row.ColumnType{Type: row.TypeTimestampTZ}, nil
	case row.TypeTimestampTZ:
		return row.ColumnType{Type: row.TypeTimestamp}, nil
	}
	return row.ColumnType{}, typeSig("timezone", args)
}

func typeTZPlus(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeTimestampTZ) || !is(args[1], row.TypeInterval) || !is(args[2], row.TypeText) {
		return row.ColumnType{}, typeSig("tz_plus", args)
	}
	return row.ColumnType{Type: row.TypeTimestampTZ}, nil
}

// zoneOK checks an optional trailing zone argument.
func zoneOK(args []row.ColumnType, i int) bool { return len(args) <= i || is(args[i], row.TypeText) }

func typeDatePart(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeText) || !is(args[1], row.TypeTimestamp, row.TypeTimestampTZ, row.TypeDate, row.TypeTime, row.TypeInterval) || !zoneOK(args, 2) {
		return row.ColumnType{}, typeSig("date_part", args)
	}
	return row.ColumnType{Type: row.TypeFloat64}, nil
}

func typeExtract(args []row.ColumnType) (row.ColumnType, error) {
	if _, err := typeDatePart(args); err != nil {
		return row.ColumnType{}, typeSig("extract", args)
	}
	return row.ColumnType{Type: row.TypeNumeric}, nil
}

func typeDateTrunc(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeText) || !is(args[1], row.TypeTimestamp, row.TypeTimestampTZ, row.TypeInterval) || !zoneOK(args, 2) {
		return row.ColumnType{}, typeSig("date_trunc", args)
	}
	return row.ColumnType{Type: args[1].Type}, nil
}

func typeToChar(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeTimestamp, row.TypeTimestampTZ, row.TypeDate) || !is(args[1], row.TypeText) || !zoneOK(args, 2) {
		return row.ColumnType{}, typeSig("to_char", args)
	}
	return row.ColumnType{Type: row.TypeText}, nil
}

func typeAge(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeTimestamp, row.TypeTimestampTZ) || !is(args[1], args[0].Type) || !zoneOK(args, 2) {
		return row.ColumnType{}, typeSig("age", args)
	}
	return row.ColumnType{Type: row.TypeInterval}, nil
}

// typeMake types make_date/make_time/make_timestamp/to_timestamp: nInts
// integer arguments, then (make_time, make_timestamp, to_timestamp) one
// float8 of seconds.
func typeMake(result row.Type, nInts int) func([]row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		for i, a := range args {
			ok := is(a, row.TypeInt64)
			if i >= nInts {
				ok = is(a, row.TypeInt64, row.TypeFloat64)
			}
			if !ok {
				return row.ColumnType{}, typeSig(result.String(), args)
			}
		}
		return row.ColumnType{Type: result}, nil
	}
}

func typeTimePrecision(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeTimestamp, row.TypeTimestampTZ, row.TypeTime, row.TypeInterval) || !is(args[1], row.TypeInt64) {
		return row.ColumnType{}, typeSig("time_precision", args)
	}
	return row.ColumnType{Type: args[0].Type}, nil
}

// ---- constructors ----

func evalMakeDate(args []row.Datum) (row.Datum, error) {
	y, m, d := args[0].Int64(), args[1].Int64(), args[2].Int64()
	days, ok := civilDays(y, m, d)
	if !ok || days < row.MinDateDays || days > row.MaxDateDays {
		return row.Null(), evalErr(CodeDatetimeFieldOverflow, "date field value out of range: %d-%02d-%02d", y, m, d)
	}
	return row.Date(int32(days)), nil
}

// civilDays validates a date given with a signed year (negative is BC,
// as make_date takes it) and returns its days since the epoch.
func civilDays(y, m, d int64) (int64, bool) {
	if y == 0 || m < 1 || m > 12 || d < 1 || y > 6_000_000 || y < -6_000_000 {
		return 0, false
	}
	if y < 0 {
		y++ // -1 is 1 BC, astronomical year 0
	}
	if d > row.DaysInMonth(y, m) {
		return 0, false
	}
	return row.DaysFromCivil(y, m, d), true
}

// timeOfDay validates hour, minute and (fractional) seconds.
func timeOfDay(h, mi int64, sec float64) (int64, bool) {
	if h < 0 || h > 24 || mi < 0 || mi > 59 || math.IsNaN(sec) || sec < 0 || sec > 60 {
		return 0, false
	}
	us := h*row.MicrosPerHour + mi*row.MicrosPerMinute + int64(math.RoundToEven(sec*1e6))
	if us > row.MicrosPerDay {
		return 0, false
	}
	return us, true
}

func evalMakeTime(args []row.Datum) (row.Datum, error) {
	sec, _ := asFloat(args[2])
	us, ok := timeOfDay(args[0].Int64(), args[1].Int64(), sec)
	if !ok {
		return row.Null(), evalErr(CodeDatetimeFieldOverflow, "time field value out of range: %d:%02d:%s",
			args[0].Int64(), args[1].Int64(), formatSeconds(sec))
	}
	return row.Time(us), nil
}

func formatSeconds(sec float64) string {
	if sec == math.Trunc(sec) && !math.IsInf(sec, 0) {
		return fmt.Sprintf("%02d", int64(sec))
	}
	return string(row.AppendFloat(nil, sec))
}

func evalMakeTimestamp(args []row.Datum) (row.Datum, error) {
	y, m, d := args[0].Int64(), args[1].Int64(), args[2].Int64()
	days, ok := civilDays(y, m, d)
	if !ok {
		return row.Null(), evalErr(CodeDatetimeFieldOverflow, "date field value out of range: %d-%02d-%02d", y, m, d)
	}
	sec, _ := asFloat(args[5])
	us, ok := timeOfDay(args[3].Int64(), args[4].Int64(), sec)
	if !ok {
		return row.Null(), evalErr(CodeDatetimeFieldOverflow, "time field value out of range: %d:%02d:%s",
			args[3].Int64(), args[4].Int64(), formatSeconds(sec))
	}
	if days < row.MinDateDays || days > row.MaxTimestamp/row.MicrosPerDay-1 {
		return row.Null(), evalErr(CodeDatetimeFieldOverflow, "timestamp out of range: %d-%02d-%02d", y, m, d)
	}
	return row.Timestamp(days*row.MicrosPerDay + us), nil
}

func evalToTimestamp(a row.Datum) (row.Datum, error) {
	f, ok := asFloat(a)
	if !ok {
		return row.Null(), undefinedFunc("to_timestamp", a)
	}
	switch {
	case math.IsNaN(f):
		return row.Null(), evalErr(CodeDatetimeFieldOverflow, "timestamp cannot be NaN")
	case math.IsInf(f, 1):
		return row.TimestampTZ(row.TimestampInfinity), nil
	case math.IsInf(f, -1):
		return row.TimestampTZ(row.TimestampNegInfinity), nil
	}
	us := math.RoundToEven(f * 1e6)
	if us < float64(row.MinTimestamp) || us >= float64(row.MaxTimestamp) {
		return row.Null(), evalErr(CodeDatetimeFieldOverflow, "timestamp out of range: %q", string(row.AppendFloat(nil, f)))
	}
	return row.TimestampTZ(int64(us)), nil
}

// evalTimePrecision rounds the fractional seconds of x to p digits, half
// away from zero (for timestamps: from 2000-01-01), as Postgres applies the typmod of timestamp(p),
// time(p) and interval(p).
func evalTimePrecision(x, p row.Datum) (row.Datum, error) {
	prec := p.Int64()
	if prec < 0 || prec > 6 {
		return row.Null(), evalErr(CodeInvalidParameterValue, "time precision %d must be between 0 and 6", prec)
	}
	scale := int64(math.Pow10(int(6 - prec)))
	roundFrom := func(us, zero int64) int64 {
		us -= zero
		if us >= 0 {
			return (us+scale/2)/scale*scale + zero
		}
		return -((-us + scale/2) / scale * scale) + zero
	}
	// Postgres' timestamps count from 2000-01-01, so "away from zero"
	// means away from that instant.
	const pgEpoch = 946684800 * row.MicrosPerSecond
	round := func(us int64) int64 { return roundFrom(us, 0) }
	switch x.Type() {
	case row.TypeTimestamp:
		if !row.TimestampIsFinite(x.Timestamp()) {
			return x, nil
		}
		return row.Timestamp(roundFrom(x.Timestamp(), pgEpoch)), nil
	case row.TypeTimestampTZ:
		if !row.TimestampIsFinite(x.TimestampTZ()) {
			return x, nil
		}
		return row.TimestampTZ(roundFrom(x.TimestampTZ(), pgEpoch)), nil
	case row.TypeTime:
		return row.Time(round(x.Time())), nil
	case row.TypeInterval:
		iv := x.Interval()
		iv.Micros = round(iv.Micros)
		return row.IntervalDatum(iv), nil
	}
	return row.Null(), undefinedFunc("time_precision", x, p)
}
