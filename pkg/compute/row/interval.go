package row

import (
	"cmp"
	"encoding/binary"
	"math"
	"strconv"
)

// Interval is a Postgres interval: months, days and microseconds kept
// apart, because a month has no fixed number of days and a day (across a
// daylight saving change) no fixed number of hours.
//
// For ordering and equality Postgres treats a month as 30 days and a day
// as 24 hours, so '1 mon' = '30 days'. Compare orders by that length
// first and then by months and days, so that two intervals of the same
// length but different fields ('1 mon', '30 days') are distinct values
// that sort next to each other: the row encoding must give distinct
// values distinct bytes (see doc.go). The SQL comparison operators use
// SameLength-style comparison (CompareLength) as Postgres does; GROUP BY,
// DISTINCT and join keys, which work on encoded rows, keep them apart.
type Interval struct {
	Months int32
	Days   int32
	Micros int64
}

// Microsecond counts of the fixed units.
const (
	MicrosPerSecond = 1_000_000
	MicrosPerMinute = 60 * MicrosPerSecond
	MicrosPerHour   = 60 * MicrosPerMinute
	MicrosPerDay    = 24 * MicrosPerHour
	daysPerMonth    = 30
)

// lengthKey returns the interval's length, months*30 + days days plus
// Micros, as whole days and a remainder in [0, MicrosPerDay): ordering
// the pairs lexicographically orders the lengths without 128-bit
// arithmetic.
func (iv Interval) lengthKey() (days, rem int64) {
	d := int64(iv.Months)*daysPerMonth + int64(iv.Days)
	q, r := iv.Micros/MicrosPerDay, iv.Micros%MicrosPerDay
	if r < 0 {
		q--
		r += MicrosPerDay
	}
	return d + q, r
}

// CompareLength compares the lengths of two intervals, a month counting
// 30 days and a day 24 hours: Postgres' interval comparison.
func (iv Interval) CompareLength(o Interval) int {
	ad, ar := iv.lengthKey()
	bd, br := o.lengthKey()
	if c := cmp.Compare(ad, bd); c != 0 {
		return c
	}
	return cmp.Compare(ar, br)
}

// Compare is CompareLength with months and then days breaking ties: a
// total order in which equal means identical.
func (iv Interval) Compare(o Interval) int {
	if c := iv.CompareLength(o); c != 0 {
		return c
	}
	if c := cmp.Compare(iv.Months, o.Months); c != 0 {
		return c
	}
	return cmp.Compare(iv.Days, o.Days)
}

func (iv Interval) packMonthsDays() string {
	var b [8]byte
	binary.BigEndian.PutUint32(b[:4], uint32(iv.Months))
	binary.BigEndian.PutUint32(b[4:], uint32(iv.Days))
	return string(b[:])
}

func unpackMonthsDays(s string, micros int64) Interval {
	if len(s) != 8 {
		return Interval{Micros: micros}
	}
	return Interval{
		Months: int32(binary.BigEndian.Uint32([]byte(s[:4]))),
		Days:   int32(binary.BigEndian.Uint32([]byte(s[4:]))),
		Micros: micros,
	}
}

// intervalEncodedLen is the payload of an encoded interval: the length
// key (whole days, sign-flipped; remainder micros) then months and days
// (sign-flipped), so that bytewise order is Compare's order.
const intervalEncodedLen = 8 + 8 + 4 + 4

func appendInterval(dst []byte, iv Interval) []byte {
	days, rem := iv.lengthKey()
	dst = binary.BigEndian.AppendUint64(dst, uint64(days)^(1<<63))
	dst = binary.BigEndian.AppendUint64(dst, uint64(rem))
	dst = binary.BigEndian.AppendUint32(dst, uint32(iv.Months)^(1<<31))
	return binary.BigEndian.AppendUint32(dst, uint32(iv.Days)^(1<<31))
}

// decodeInterval inverts appendInterval; ok is false when the bytes are
// not the encoding of any interval (remainder out of range, or micros
// that do not fit in 64 bits).
func decodeInterval(p []byte) (Interval, bool) {
	days := int64(binary.BigEndian.Uint64(p[0:8]) ^ (1 << 63))
	rem := binary.BigEndian.Uint64(p[8:16])
	months := int32(binary.BigEndian.Uint32(p[16:20]) ^ (1 << 31))
	d := int32(binary.BigEndian.Uint32(p[20:24]) ^ (1 << 31))
	if rem >= MicrosPerDay {
		return Interval{}, false
	}
	// Every interval's length key is within ±(2^31·31 + 2^63/MicrosPerDay)
	// days; bounding it first keeps the arithmetic below from overflowing.
	const maxKeyDays = 1 << 40
	if days > maxKeyDays || days < -maxKeyDays {
		return Interval{}, false
	}
	whole := days - (int64(months)*daysPerMonth + int64(d))
	if whole > math.MaxInt64/MicrosPerDay || whole < math.MinInt64/MicrosPerDay-1 {
		return Interval{}, false
	}
	// For negative whole, (whole+1)·day cannot overflow where whole·day
	// might (micros near MinInt64).
	var micros int64
	var ok bool
	if whole >= 0 {
		micros, ok = addInt64(whole*MicrosPerDay, int64(rem))
	} else {
		micros, ok = addInt64((whole+1)*MicrosPerDay, int64(rem)-MicrosPerDay)
	}
	if !ok {
		return Interval{}, false
	}
	iv := Interval{Months: months, Days: d, Micros: micros}
	if dk, rk := iv.lengthKey(); dk != days || uint64(rk) != rem {
		return Interval{}, false
	}
	return iv, true
}

// AppendInterval formats iv in Postgres' default "postgres" interval
// style: "1 year 2 mons 3 days 04:05:06.5", "-1 days +02:00:00",
// "00:00:00" for zero.
func AppendInterval(dst []byte, iv Interval) []byte {
	years, mons := iv.Months/12, iv.Months%12
	zero, before := true, false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if !zero {
			dst = append(dst, ' ')
		}
		if before && v > 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, v, 10)
		dst = append(dst, ' ')
		dst = append(dst, unit...)
		if v != 1 {
			dst = append(dst, 's')
		}
		before, zero = v < 0, false
	}
	part(int64(years), "year")
	part(int64(mons), "mon")
	part(int64(iv.Days), "day")
	if !zero && iv.Micros == 0 {
		return dst
	}
	if !zero {
		dst = append(dst, ' ')
	}
	u := iv.Micros
	switch {
	case u < 0:
		dst = append(dst, '-')
	case before:
		dst = append(dst, '+')
	}
	// |MinInt64| does not fit: work with the magnitude as unsigned.
	mag := uint64(u)
	if u < 0 {
		mag = uint64(-(u + 1)) + 1
	}
	hours := mag / MicrosPerHour
	mag %= MicrosPerHour
	if hours < 10 {
		dst = append(dst, '0')
	}
	dst = strconv.AppendUint(dst, hours, 10)
	dst = append(dst, ':')
	return appendClock(dst, int64(mag)/MicrosPerMinute, int64(mag)%MicrosPerMinute)
}

// appendClock appends "MM:SS[.ffffff]" given minutes and the micros
// within the minute.
func appendClock(dst []byte, minutes, micros int64) []byte {
	dst = appendPadded(dst, int(minutes), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, int(micros/MicrosPerSecond), 2)
	return appendFraction(dst, micros%MicrosPerSecond)
}

// appendFraction appends ".ffffff" without trailing zeros, or nothing
// for zero.
func appendFraction(dst []byte, us int64) []byte {
	if us == 0 {
		return dst
	}
	var frac [7]byte
	frac[0] = '.'
	for i := 6; i >= 1; i-- {
		frac[i] = byte('0' + us%10)
		us /= 10
	}
	n := 7
	for frac[n-1] == '0' {
		n--
	}
	return append(dst, frac[:n]...)
}

// addInt64 returns a+b and whether it did not overflow.
func addInt64(a, b int64) (int64, bool) {
	r := a + b
	return r, (b >= 0) == (r >= a)
}
