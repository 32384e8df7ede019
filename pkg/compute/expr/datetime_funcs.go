package expr

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// LoadZone resolves a time zone as Postgres' TimeZone setting and AT TIME
// ZONE do: IANA names (case-insensitively), UTC/GMT/Z, and POSIX-style
// numeric offsets, where '+05' means five hours WEST of UTC (Postgres
// follows POSIX there, the opposite of ISO 8601 offsets). An unknown
// zone is 22023.
func LoadZone(name string) (*time.Location, error) {
	s := strings.TrimSpace(name)
	if off, ok := posixOffset(s); ok {
		return time.FixedZone(s, -off), nil
	}
	if loc, ok := row.LoadZone(s); ok {
		return loc, nil
	}
	return nil, evalErr(CodeInvalidParameterValue, "time zone %q not recognized", name)
}

// posixOffset parses [+-]H[H][:MM] as seconds.
func posixOffset(s string) (int, bool) {
	if strings.HasPrefix(s, "<") {
		// "<+03>-03": an abbreviation, then the POSIX offset.
		if i := strings.IndexByte(s, '>'); i > 0 {
			s = s[i+1:]
		}
	}
	if s == "" {
		return 0, false
	}
	sign := 1
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		sign, s = -1, s[1:]
	default:
		if s[0] < '0' || s[0] > '9' {
			return 0, false
		}
	}
	h, m, found := strings.Cut(s, ":")
	if h == "" || len(h) > 2 || (found && len(m) != 2) {
		return 0, false
	}
	hv, mv := 0, 0
	for _, c := range h {
		if c < '0' || c > '9' {
			return 0, false
		}
		hv = hv*10 + int(c-'0')
	}
	for _, c := range m {
		if c < '0' || c > '9' {
			return 0, false
		}
		mv = mv*10 + int(c-'0')
	}
	if hv > 15 || mv > 59 {
		return 0, false
	}
	return sign * (hv*3600 + mv*60), true
}

func zoneArg(d row.Datum) (*time.Location, error) {
	if d.Type() != row.TypeText {
		return nil, evalErr(CodeInternal, "time zone argument must be text, not %s", d.Type())
	}
	return LoadZone(d.Text())
}

// evalTimezone is timezone(zone, x), x AT TIME ZONE zone: a timestamp
// read as wall-clock time in zone gives the instant (timestamptz); a
// timestamptz gives the wall-clock time in zone (timestamp).
func evalTimezone(z, x row.Datum) (row.Datum, error) {
	loc, err := zoneArg(z)
	if err != nil {
		return row.Null(), err
	}
	switch x.Type() {
	case row.TypeTimestamp:
		us := x.Timestamp()
		if !row.TimestampIsFinite(us) {
			return row.TimestampTZ(us), nil
		}
		r := row.TimestampFromLocal(us, loc)
		if !row.ValidTimestamp(r) {
			return row.Null(), errTimestampRange
		}
		return row.TimestampTZ(r), nil
	case row.TypeTimestampTZ:
		us := x.TimestampTZ()
		if !row.TimestampIsFinite(us) {
			return row.Timestamp(us), nil
		}
		r := us + row.ZoneOffset(us, loc)*row.MicrosPerSecond
		if !row.ValidTimestamp(r) {
			return row.Null(), errTimestampRange
		}
		return row.Timestamp(r), nil
	}
	return row.Null(), undefinedFunc("timezone", z, x)
}

func evalTimestampTZIn(s, z row.Datum) (row.Datum, error) {
	loc, err := zoneArg(z)
	if err != nil {
		return row.Null(), err
	}
	return ParseTemporal(s.Text(), row.TypeTimestampTZ, loc)
}

func evalTimestampTZOut(x, z row.Datum) (row.Datum, error) {
	loc, err := zoneArg(z)
	if err != nil {
		return row.Null(), err
	}
	return row.Text(string(row.AppendTimestampTZ(nil, x.TimestampTZ(), loc))), nil
}

func evalTZPlus(x, iv, z row.Datum) (row.Datum, error) {
	loc, err := zoneArg(z)
	if err != nil {
		return row.Null(), err
	}
	us, err := timestampTZPlusInterval(x.TimestampTZ(), iv.Interval(), loc)
	if err != nil {
		return row.Null(), err
	}
	return row.TimestampTZ(us), nil
}

// localFields is a finite timestamp broken into calendar fields.
type localFields struct {
	year, month, day   int64 // astronomical year
	hour, min, sec, us int64
	days               int64 // since the epoch
}

func splitTimestamp(us int64) localFields {
	days, rem := row.FloorDiv(us, row.MicrosPerDay)
	y, m, d := row.CivilFromDays(days)
	return localFields{year: y, month: m, day: d, hour: rem / row.MicrosPerHour, min: rem / row.MicrosPerMinute % 60,
		sec: rem / row.MicrosPerSecond % 60, us: rem % row.MicrosPerSecond, days: days}
}

// isoWeek returns the ISO 8601 year and week of a day.
func isoWeek(days int64) (year, week int64) {
	_, dow := row.FloorDiv(days+3, 7) // 0 = Monday
	thursday := days - dow + 3
	y, _, _ := row.CivilFromDays(thursday)
	jan1 := row.DaysFromCivil(y, 1, 1)
	return y, (thursday-jan1)/7 + 1
}

func dayOfWeek(days int64) int64 {
	_, d := row.FloorDiv(days+4, 7) // 1970-01-01 was a Thursday; 0 = Sunday
	return d
}

// timestampInput converts the date/time argument of date_part,
// date_trunc, to_char and age to wall-clock micros, with a timestamptz
// shown in zone z (the session's).
func timestampInput(x row.Datum, z *time.Location) (int64, error) {
	switch x.Type() {
	case row.TypeTimestamp:
		return x.Timestamp(), nil
	case row.TypeTimestampTZ:
		us := x.TimestampTZ()
		if !row.TimestampIsFinite(us) {
			return us, nil
		}
		return us + row.ZoneOffset(us, z)*row.MicrosPerSecond, nil
	case row.TypeDate:
		return dateToTimestamp(x.Date())
	}
	return 0, evalErr(CodeUndefinedFunction, "function does not exist for type %s", x.Type().PGName())
}

func optionalZone(args []row.Datum, i int) (*time.Location, error) {
	if len(args) <= i {
		return time.UTC, nil
	}
	return zoneArg(args[i])
}

// zonedArgs checks the arguments of a function with an optional time zone
// third: null when any argument is NULL (the result is NULL), else the
// zone (UTC when absent).
func zonedArgs(args []row.Datum) (loc *time.Location, null bool, err error) {
	if slices.ContainsFunc(args, row.Datum.IsNull) {
		return nil, true, nil
	}
	loc, err = optionalZone(args, 2)
	return loc, false, err
}

// evalDatePart is date_part(field, x[, zone]), also EXTRACT.
func evalDatePart(args []row.Datum) (row.Datum, error) {
	field := strings.ToLower(strings.TrimSpace(args[0].Text()))
	x := args[1]
	loc, null, err := zonedArgs(args)
	if null || err != nil {
		return row.Null(), err
	}
	switch x.Type() {
	case row.TypeInterval:
		return intervalPart(field, x.Interval())
	case row.TypeTime:
		return timePart(field, x.Time())
	}
	us, err := timestampInput(x, loc)
	if err != nil {
		return row.Null(), err
	}
	if x.Type() == row.TypeTimestampTZ {
		switch field {
		case "epoch":
			if !row.TimestampIsFinite(x.TimestampTZ()) {
				return row.Float64(math.Inf(sign(x.TimestampTZ()))), nil
			}
			return row.Float64(float64(x.TimestampTZ()) / 1e6), nil
		case "timezone", "timezone_hour", "timezone_minute":
			off := row.ZoneOffset(x.TimestampTZ(), loc)
			switch field {
			case "timezone_hour":
				off /= 3600
			case "timezone_minute":
				off = off / 60 % 60
			}
			return row.Float64(float64(off)), nil
		}
	}
	return timestampPart(field, us, x.Type())
}

func sign(v int64) int {
	if v < 0 {
		return -1
	}
	return 1
}

func unitNotRecognized(field string, t row.Type) *EvalError {
	return evalErr(CodeInvalidParameterValue, "unit %q not recognized for type %s", field, t.PGName())
}

func unitNotSupported(field string, t row.Type) *EvalError {
	return evalErr(CodeFeatureNotSupported, "unit %q not supported for type %s", field, t.PGName())
}

// canonicalField maps Postgres' unit spellings (plurals, abbreviations)
// to one name.
func canonicalField(f string) string {
	switch f {
	case "microseconds", "microsecond", "usec", "usecs", "us":
		return "microseconds"
	case "milliseconds", "millisecond", "msec", "msecs", "ms":
		return "milliseconds"
	case "second", "seconds", "sec", "secs", "s":
		return "second"
	case "minute", "minutes", "min", "mins", "m":
		return "minute"
	case "hour", "hours", "hr", "hrs", "h":
		return "hour"
	case "day", "days", "d":
		return "day"
	case "week", "weeks", "w":
		return "week"
	case "month", "months", "mon", "mons":
		return "month"
	case "quarter", "qtr":
		return "quarter"
	case "year", "years", "yr", "yrs", "y":
		return "year"
	case "decade", "decades":
		return "decade"
	case "century", "centuries":
		return "century"
	case "millennium", "millennia", "millenniums":
		return "millennium"
	}
	return f
}

func timestampPart(field string, us int64, t row.Type) (row.Datum, error) {
	f := canonicalField(field)
	if !row.TimestampIsFinite(us) {
		switch f {
		case "year", "decade", "century", "millennium", "julian", "isoyear", "epoch":
			return row.Float64(math.Inf(sign(us))), nil
		case "microseconds", "milliseconds", "second", "minute", "hour", "day", "month", "quarter", "week",
			"dow", "isodow", "doy", "timezone", "timezone_hour", "timezone_minute":
			return row.Null(), nil
		}
		return row.Null(), unitNotRecognized(field, t)
	}
	lf := splitTimestamp(us)
	secFrac := float64(lf.sec) + float64(lf.us)/1e6
	var v float64
	switch f {
	case "microseconds":
		v = float64(lf.sec*1_000_000 + lf.us)
	case "milliseconds":
		v = float64(lf.sec*1000) + float64(lf.us)/1000
	case "second":
		v = secFrac
	case "minute":
		v = float64(lf.min)
	case "hour":
		v = float64(lf.hour)
	case "day":
		v = float64(lf.day)
	case "month":
		v = float64(lf.month)
	case "quarter":
		v = float64((lf.month-1)/3 + 1)
	case "year":
		if lf.year > 0 {
			v = float64(lf.year)
		} else {
			v = float64(lf.year - 1)
		}
	case "decade":
		if lf.year >= 0 {
			v = float64(lf.year / 10)
		} else {
			v = float64(-((8 - (lf.year - 1)) / 10))
		}
	case "century":
		if lf.year > 0 {
			v = float64((lf.year + 99) / 100)
		} else {
			v = float64(-((99 - (lf.year - 1)) / 100))
		}
	case "millennium":
		if lf.year > 0 {
			v = float64((lf.year + 999) / 1000)
		} else {
			v = float64(-((999 - (lf.year - 1)) / 1000))
		}
	case "week":
		_, w := isoWeek(lf.days)
		v = float64(w)
	case "isoyear":
		y, _ := isoWeek(lf.days)
		if y <= 0 {
			y--
		}
		v = float64(y)
	case "dow":
		v = float64(dayOfWeek(lf.days))
	case "isodow":
		d := dayOfWeek(lf.days)
		if d == 0 {
			d = 7
		}
		v = float64(d)
	case "doy":
		v = float64(lf.days - row.DaysFromCivil(lf.year, 1, 1) + 1)
	case "epoch":
		v = float64(us) / 1e6
	case "julian":
		_, rem := row.FloorDiv(us, row.MicrosPerDay)
		v = float64(lf.days+2440588) + float64(rem)/float64(row.MicrosPerDay)
	case "timezone", "timezone_hour", "timezone_minute":
		return row.Null(), unitNotSupported(field, t)
	default:
		return row.Null(), unitNotRecognized(field, t)
	}
	return row.Float64(v), nil
}

func timePart(field string, us int64) (row.Datum, error) {
	switch canonicalField(field) {
	case "microseconds":
		return row.Float64(float64(us % row.MicrosPerMinute)), nil
	case "milliseconds":
		return row.Float64(float64(us%row.MicrosPerMinute) / 1000), nil
	case "second":
		return row.Float64(float64(us%row.MicrosPerMinute) / 1e6), nil
	case "minute":
		return row.Float64(float64(us / row.MicrosPerMinute % 60)), nil
	case "hour":
		return row.Float64(float64(us / row.MicrosPerHour)), nil
	case "epoch":
		return row.Float64(float64(us) / 1e6), nil
	case "day", "month", "quarter", "year", "decade", "century", "millennium", "week", "dow", "isodow", "doy", "isoyear", "julian":
		return row.Null(), unitNotSupported(field, row.TypeTime)
	}
	return row.Null(), unitNotRecognized(field, row.TypeTime)
}

func intervalPart(field string, iv row.Interval) (row.Datum, error) {
	years, months := int64(iv.Months)/12, int64(iv.Months)%12
	inMinute := iv.Micros % row.MicrosPerMinute
	var v float64
	switch canonicalField(field) {
	case "microseconds":
		v = float64(inMinute)
	case "milliseconds":
		v = float64(inMinute) / 1000
	case "second":
		v = float64(inMinute) / 1e6
	case "minute":
		v = float64(iv.Micros / row.MicrosPerMinute % 60)
	case "hour":
		v = float64(iv.Micros / row.MicrosPerHour)
	case "day":
		v = float64(iv.Days)
	case "month":
		v = float64(months)
	case "quarter":
		v = float64(months/3 + 1)
	case "year":
		v = float64(years)
	case "decade":
		v = float64(years / 10)
	case "century":
		v = float64(years / 100)
	case "millennium":
		v = float64(years / 1000)
	case "epoch":
		v = float64(iv.Micros)/1e6 + 365.25*86400*float64(years) + 30*86400*float64(months) + 86400*float64(iv.Days)
	case "week", "dow", "isodow", "doy", "isoyear", "julian", "timezone", "timezone_hour", "timezone_minute":
		return row.Null(), unitNotSupported(field, row.TypeInterval)
	default:
		return row.Null(), unitNotRecognized(field, row.TypeInterval)
	}
	return row.Float64(v), nil
}

// evalDateTrunc is date_trunc(field, x[, zone]): x truncated to the
// field's precision; a timestamptz is truncated in zone.
func evalDateTrunc(args []row.Datum) (row.Datum, error) {
	field := strings.ToLower(strings.TrimSpace(args[0].Text()))
	x := args[1]
	loc, null, err := zonedArgs(args)
	if null || err != nil {
		return row.Null(), err
	}
	if x.Type() == row.TypeInterval {
		return truncInterval(field, x.Interval())
	}
	us, err := timestampInput(x, loc)
	if err != nil {
		return row.Null(), err
	}
	if !row.TimestampIsFinite(us) {
		return x, nil
	}
	t, err := truncTimestamp(field, us, x.Type())
	if err != nil {
		return row.Null(), err
	}
	if x.Type() == row.TypeTimestampTZ {
		return row.TimestampTZ(row.TimestampFromLocal(t, loc)), nil
	}
	return row.Timestamp(t), nil
}

func truncTimestamp(field string, us int64, t row.Type) (int64, error) {
	lf := splitTimestamp(us)
	unit := func(u int64) int64 { q, _ := row.FloorDiv(us, u); return q * u }
	y, m, d := lf.year, lf.month, lf.day
	switch f := canonicalField(field); f {
	case "microseconds":
		return us, nil
	case "milliseconds":
		return unit(1000), nil
	case "second":
		return unit(row.MicrosPerSecond), nil
	case "minute":
		return unit(row.MicrosPerMinute), nil
	case "hour":
		return unit(row.MicrosPerHour), nil
	case "day":
		return unit(row.MicrosPerDay), nil
	case "week":
		_, dow := row.FloorDiv(lf.days+3, 7) // 0 = Monday
		return (lf.days - dow) * row.MicrosPerDay, nil
	case "month":
		d = 1
	case "quarter":
		m, d = 3*((m-1)/3)+1, 1
	case "year":
		m, d = 1, 1
	case "decade":
		if y > 0 {
			y = y / 10 * 10
		} else {
			y = -((8 - (y - 1)) / 10) * 10
		}
		m, d = 1, 1
	case "century":
		if y > 0 {
			y = (y+99)/100*100 - 99
		} else {
			y = -((99-(y-1))/100)*100 + 1
		}
		m, d = 1, 1
	case "millennium":
		if y > 0 {
			y = (y+999)/1000*1000 - 999
		} else {
			y = -((999-(y-1))/1000)*1000 + 1
		}
		m, d = 1, 1
	default:
		return 0, unitNotRecognized(field, t)
	}
	r := row.DaysFromCivil(y, m, d) * row.MicrosPerDay
	if !row.ValidTimestamp(r) {
		return 0, errTimestampRange
	}
	return r, nil
}

func truncInterval(field string, iv row.Interval) (row.Datum, error) {
	out := iv
	trunc := func(u int64) { out.Micros = iv.Micros / u * u }
	switch canonicalField(field) {
	case "microseconds":
	case "milliseconds":
		trunc(1000)
	case "second":
		trunc(row.MicrosPerSecond)
	case "minute":
		trunc(row.MicrosPerMinute)
	case "hour":
		trunc(row.MicrosPerHour)
	case "day":
		out.Micros = 0
	case "month":
		out.Days, out.Micros = 0, 0
	case "quarter":
		out = row.Interval{Months: iv.Months/12*12 + iv.Months%12/3*3}
	case "year":
		out = row.Interval{Months: iv.Months / 12 * 12}
	case "decade":
		out = row.Interval{Months: iv.Months / 120 * 120}
	case "century":
		out = row.Interval{Months: iv.Months / 1200 * 1200}
	case "millennium":
		out = row.Interval{Months: iv.Months / 12000 * 12000}
	case "week":
		return row.Null(), unitNotSupported(field, row.TypeInterval)
	default:
		return row.Null(), unitNotRecognized(field, row.TypeInterval)
	}
	return row.IntervalDatum(out), nil
}

// evalAge is age(a, b[, zone]): a - b as years, months and days of the
// calendar (symbolic, not a count of 24-hour days), as Postgres' age.
func evalAge(args []row.Datum) (row.Datum, error) {
	loc, null, err := zonedArgs(args)
	if null || err != nil {
		return row.Null(), err
	}
	a, err := timestampInput(args[0], loc)
	if err != nil {
		return row.Null(), err
	}
	b, err := timestampInput(args[1], loc)
	if err != nil {
		return row.Null(), err
	}
	if !row.TimestampIsFinite(a) || !row.TimestampIsFinite(b) {
		return row.Null(), &EvalError{Code: CodeDatetimeFieldOverflow, Msg: "cannot subtract infinite timestamps"}
	}
	t1, t2 := splitTimestamp(a), splitTimestamp(b)
	neg := a < b
	if neg {
		t1, t2 = t2, t1
	}
	us := t1.us - t2.us
	sec := t1.sec - t2.sec
	mi := t1.min - t2.min
	hr := t1.hour - t2.hour
	day := t1.day - t2.day
	mon := t1.month - t2.month
	yr := t1.year - t2.year
	for us < 0 {
		us += 1_000_000
		sec--
	}
	for sec < 0 {
		sec += 60
		mi--
	}
	for mi < 0 {
		mi += 60
		hr--
	}
	for hr < 0 {
		hr += 24
		day--
	}
	for day < 0 {
		// Borrow the length of the month before the later date's month,
		// as Postgres does (which uses the earlier operand's month).
		day += row.DaysInMonth(t2.year, t2.month)
		mon--
	}
	for mon < 0 {
		mon += 12
		yr--
	}
	months := yr*12 + mon
	micros := ((hr*60+mi)*60+sec)*1_000_000 + us
	if neg {
		months, day, micros = -months, -day, -micros
	}
	if months != int64(int32(months)) {
		return row.Null(), errIntervalRange
	}
	return row.IntervalDatum(row.Interval{Months: int32(months), Days: int32(day), Micros: micros}), nil
}
