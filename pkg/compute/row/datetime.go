package row

import (
	"math"
	"time"
)

// Special dates: Postgres' date -infinity and infinity.
const (
	DateNegInfinity = math.MinInt32
	DateInfinity    = math.MaxInt32
)

// The ranges Postgres accepts, in days since 1970-01-01: dates from
// 4714-11-24 BC (Julian day 0) to 5874897-12-31, timestamps from the same
// first day. Timestamps end earlier than Postgres' 294276-12-31: they are
// micros since 1970 (Postgres counts from 2000), and MaxInt64 is infinity.
const (
	unixEpochJulian = 2440588
	MinDateDays     = -unixEpochJulian
	MaxDateDays     = 2147483494 - unixEpochJulian - 1
	// MinTimestamp is 4714-11-24 00:00:00 BC.
	MinTimestamp = MinDateDays * MicrosPerDay
	// MaxTimestamp is the last finite timestamp (294247-01-10
	// 04:00:54.775806).
	MaxTimestamp = math.MaxInt64 - 1
)

// DaysFromCivil returns the days since 1970-01-01 of a proleptic
// Gregorian date; year is astronomical (0 is 1 BC, -1 is 2 BC).
func DaysFromCivil(year, month, day int64) int64 {
	if month <= 2 {
		year--
	}
	era := year
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := year - era*400
	m := month + 9
	if month > 2 {
		m = month - 3
	}
	doy := (153*m+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// CivilFromDays inverts DaysFromCivil.
func CivilFromDays(days int64) (year, month, day int64) {
	z := days + 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	year = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = doy - (153*mp+2)/5 + 1
	month = mp + 3
	if mp >= 10 {
		month = mp - 9
	}
	if month <= 2 {
		year++
	}
	return year, month, day
}

// IsLeap reports whether the astronomical year is a leap year.
func IsLeap(year int64) bool { return year%4 == 0 && (year%100 != 0 || year%400 == 0) }

// DaysInMonth returns the number of days of a month of a year.
func DaysInMonth(year, month int64) int64 {
	switch month {
	case 2:
		if IsLeap(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// FloorDiv returns a/b rounded down and the remainder in [0, b) for b > 0.
func FloorDiv(a, b int64) (q, r int64) {
	q, r = a/b, a%b
	if r < 0 {
		q--
		r += b
	}
	return q, r
}

// DateIsFinite reports whether days is neither infinity.
func DateIsFinite(days int32) bool { return days != DateNegInfinity && days != DateInfinity }

// TimestampIsFinite reports whether micros is neither infinity.
func TimestampIsFinite(micros int64) bool {
	return micros != TimestampInfinity && micros != TimestampNegInfinity
}

// ValidTimestamp reports whether a finite timestamp is in range.
func ValidTimestamp(micros int64) bool { return micros >= MinTimestamp && micros <= MaxTimestamp }

// ValidDate reports whether days is in range or an infinity.
func ValidDate(days int64) bool {
	return days >= MinDateDays && days <= MaxDateDays || days == DateNegInfinity || days == DateInfinity
}

// AppendDate formats a date as Postgres does: YYYY-MM-DD, " BC" for
// years before 1 AD, infinity and -infinity.
func AppendDate(dst []byte, days int32) []byte {
	switch days {
	case DateInfinity:
		return append(dst, "infinity"...)
	case DateNegInfinity:
		return append(dst, "-infinity"...)
	}
	y, m, d := CivilFromDays(int64(days))
	dst, bc := appendYMD(dst, y, m, d)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

func appendYMD(dst []byte, y, m, d int64) ([]byte, bool) {
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	dst = appendPadded(dst, int(y), 4)
	dst = append(dst, '-')
	dst = appendPadded(dst, int(m), 2)
	dst = append(dst, '-')
	return appendPadded(dst, int(d), 2), bc
}

// AppendTime formats micros since midnight as HH:MM:SS[.ffffff].
func AppendTime(dst []byte, micros int64) []byte {
	dst = appendPadded(dst, int(micros/MicrosPerHour), 2)
	dst = append(dst, ':')
	micros %= MicrosPerHour
	return appendClock(dst, micros/MicrosPerMinute, micros%MicrosPerMinute)
}

// appendTimestampLocal formats a finite timestamp's date and time,
// returning whether the year is BC (the caller places the suffix).
func appendTimestampLocal(dst []byte, micros int64) ([]byte, bool) {
	days, rem := FloorDiv(micros, MicrosPerDay)
	y, m, d := CivilFromDays(days)
	dst, bc := appendYMD(dst, y, m, d)
	dst = append(dst, ' ')
	return AppendTime(dst, rem), bc
}

// AppendTimestamp formats micros since the epoch as Postgres does for
// timestamp without time zone: fractional seconds with trailing zeros
// removed, years before 1 AD with a " BC" suffix.
func AppendTimestamp(dst []byte, micros int64) []byte {
	switch micros {
	case TimestampInfinity:
		return append(dst, "infinity"...)
	case TimestampNegInfinity:
		return append(dst, "-infinity"...)
	}
	dst, bc := appendTimestampLocal(dst, micros)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// ZoneOffset returns the UTC offset in seconds of loc at the instant
// micros (UTC); nil means UTC.
func ZoneOffset(micros int64, loc *time.Location) int64 {
	if loc == nil || loc == time.UTC {
		return 0
	}
	secs, _ := FloorDiv(micros, MicrosPerSecond)
	_, off := time.Unix(secs, 0).In(loc).Zone()
	return int64(off)
}

// AppendTimestampTZ formats a timestamptz in loc (nil: UTC) as Postgres
// does: the local time followed by the offset, "+HH", "+HH:MM" or
// "+HH:MM:SS".
func AppendTimestampTZ(dst []byte, micros int64, loc *time.Location) []byte {
	if !TimestampIsFinite(micros) {
		return AppendTimestamp(dst, micros)
	}
	off := ZoneOffset(micros, loc)
	dst, bc := appendTimestampLocal(dst, micros+off*MicrosPerSecond)
	dst = AppendOffset(dst, off)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// AppendOffset appends a UTC offset in seconds as Postgres prints it.
func AppendOffset(dst []byte, off int64) []byte {
	if off < 0 {
		dst = append(dst, '-')
		off = -off
	} else {
		dst = append(dst, '+')
	}
	dst = appendPadded(dst, int(off/3600), 2)
	if m, s := off/60%60, off%60; m != 0 || s != 0 {
		dst = append(dst, ':')
		dst = appendPadded(dst, int(m), 2)
		if s != 0 {
			dst = append(dst, ':')
			dst = appendPadded(dst, int(s), 2)
		}
	}
	return dst
}

// TimestampFromLocal converts a local wall-clock time (micros since the
// epoch as if UTC) in loc to the UTC instant, resolving offsets as
// PostgreSQL does: a time a jump back makes ambiguous takes the offset in
// force just after the transition (standard time), and a time a jump
// forward skips takes the offset in force just before it.
func TimestampFromLocal(local int64, loc *time.Location) int64 {
	if loc == nil || loc == time.UTC {
		return local
	}
	before := ZoneOffset(local-MicrosPerDay, loc) * MicrosPerSecond
	after := ZoneOffset(local+MicrosPerDay, loc) * MicrosPerSecond
	if before == after {
		return local - before
	}
	fits := func(off int64) bool { return ZoneOffset(local-off, loc)*MicrosPerSecond == off }
	switch {
	case fits(after):
		return local - after
	case fits(before):
		return local - before
	}
	return local - before
}

// AppendTextIn is d.AppendText with timestamptz shown in loc.
func AppendTextIn(dst []byte, d Datum, loc *time.Location) []byte {
	switch d.Type() {
	case TypeTimestampTZ:
		return AppendTimestampTZ(dst, d.TimestampTZ(), loc)
	case TypeTimestampTZArray, TypeRecordArray:
		return appendArrayTextIn(dst, d, loc)
	case TypeRecord:
		return appendRecordTextIn(dst, d, loc)
	}
	return d.AppendText(dst)
}
