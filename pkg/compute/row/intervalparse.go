package row

import (
	"math"
	"strconv"
	"strings"
)

// intervalUnit is one unit of interval input and how many months, days
// or micros one of it is.
type intervalUnit struct {
	months int64
	days   int64
	micros int64
	bit    uint16 // the field it sets, to refuse '1 day 2 days'
}

func lookupIntervalUnit(w string) (intervalUnit, bool) {
	switch strings.ToLower(w) {
	case "microsecond", "microseconds", "usec", "usecs", "us":
		return intervalUnit{micros: 1, bit: 1 << 0}, true
	case "millisecond", "milliseconds", "msec", "msecs", "ms":
		return intervalUnit{micros: 1000, bit: 1 << 1}, true
	case "second", "seconds", "sec", "secs", "s":
		return intervalUnit{micros: MicrosPerSecond, bit: 1 << 2}, true
	case "minute", "minutes", "min", "mins", "m":
		return intervalUnit{micros: MicrosPerMinute, bit: 1 << 3}, true
	case "hour", "hours", "hr", "hrs", "h":
		return intervalUnit{micros: MicrosPerHour, bit: 1 << 4}, true
	case "day", "days", "d":
		return intervalUnit{days: 1, bit: 1 << 5}, true
	case "week", "weeks", "w":
		return intervalUnit{days: 7, bit: 1 << 6}, true
	case "month", "months", "mon", "mons":
		return intervalUnit{months: 1, bit: 1 << 7}, true
	case "year", "years", "yr", "yrs", "y":
		return intervalUnit{months: 12, bit: 1 << 8}, true
	case "decade", "decades":
		return intervalUnit{months: 120, bit: 1 << 9}, true
	case "century", "centuries":
		return intervalUnit{months: 1200, bit: 1 << 10}, true
	case "millennium", "millennia", "millenniums":
		return intervalUnit{months: 12000, bit: 1 << 11}, true
	}
	return intervalUnit{}, false
}

// timeBits are the fields an HH:MM:SS token sets.
const timeBits = 1<<2 | 1<<3 | 1<<4

// intervalAcc accumulates an interval with overflow detection.
type intervalAcc struct {
	months, days, micros int64
	overflow             bool
}

func (a *intervalAcc) addMicros(v int64) {
	r, ok := addInt64(a.micros, v)
	a.micros, a.overflow = r, a.overflow || !ok
}

func (a *intervalAcc) addFloatMicros(f float64) {
	f = math.RoundToEven(f)
	if f != f || f >= math.MaxInt64 || f <= math.MinInt64 {
		a.overflow = true
		return
	}
	a.addMicros(int64(f))
}

// add adds count units, count = ip + fp (fp the fraction, same sign),
// cascading fractions down as Postgres does: a fraction of a year to
// months, of a month (30 days) or week to days and time, of a day to
// time.
func (a *intervalAcc) add(ip int64, fp float64, u intervalUnit) {
	mul := func(x, y int64) int64 {
		r, ok := mulInt64(x, y)
		a.overflow = a.overflow || !ok
		return r
	}
	add := func(p *int64, v int64) {
		r, ok := addInt64(*p, v)
		*p, a.overflow = r, a.overflow || !ok
	}
	switch {
	case u.months != 0:
		add(&a.months, mul(ip, u.months))
		if u.months >= 12 {
			add(&a.months, int64(math.RoundToEven(fp*float64(u.months))))
			return
		}
		fd := fp * daysPerMonth
		add(&a.days, int64(fd))
		a.addFloatMicros((fd - math.Trunc(fd)) * MicrosPerDay)
	case u.days != 0:
		add(&a.days, mul(ip, u.days))
		fd := fp * float64(u.days)
		add(&a.days, int64(fd))
		a.addFloatMicros((fd - math.Trunc(fd)) * MicrosPerDay)
	default:
		a.addMicros(mul(ip, u.micros))
		a.addFloatMicros(fp * float64(u.micros))
	}
}

func (a *intervalAcc) result() (Interval, bool) {
	if a.overflow || a.months != int64(int32(a.months)) || a.days != int64(int32(a.days)) {
		return Interval{}, false
	}
	return Interval{Months: int32(a.months), Days: int32(a.days), Micros: a.micros}, true
}

// splitNumber parses a signed decimal into its integer part and its
// fraction (with the same sign).
func splitNumber(s string) (int64, float64, bool) {
	neg := strings.HasPrefix(s, "-")
	t := strings.TrimLeft(s, "+-")
	if len(s)-len(t) > 1 || t == "" || t == "." {
		return 0, 0, false
	}
	intPart, fracPart, _ := strings.Cut(t, ".")
	var ip int64
	if intPart != "" {
		v, err := strconv.ParseInt(intPart, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		ip = v
	}
	var fp float64
	if fracPart != "" {
		v, err := strconv.ParseFloat("0."+fracPart, 64)
		if err != nil {
			return 0, 0, false
		}
		fp = v
	}
	if neg {
		ip, fp = -ip, -fp
	}
	return ip, fp, true
}

// ParseInterval parses interval input as Postgres does in its default
// style: "1 year 2 mons 3 days 04:05:06", "1.5 hours", "-2 days ago",
// "@ 1 minute", a bare number of seconds, "1 12:00" (days and a time),
// and ISO 8601 "P1Y2M3DT4H5M6S".
func ParseInterval(s string) (Interval, error) {
	syntax := &ParseError{Kind: ErrSyntax, Type: TypeInterval, Input: s}
	rangeErr := &ParseError{Kind: ErrIntervalField, Type: TypeInterval, Input: s}
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "P") || strings.HasPrefix(t, "p") {
		iv, ok, inRange := parseISOInterval(t[1:])
		switch {
		case !ok:
			return Interval{}, syntax
		case !inRange:
			return Interval{}, rangeErr
		}
		return iv, nil
	}
	t = strings.TrimPrefix(t, "@")
	toks := tokenizeInterval(t)
	if len(toks) == 0 {
		return Interval{}, syntax
	}
	var acc intervalAcc
	var mask uint16
	ago := false
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		switch {
		case strings.EqualFold(tok, "ago") && i == len(toks)-1 && i > 0:
			ago = true
		case strings.Contains(tok, ":"):
			if mask&timeBits != 0 {
				return Interval{}, syntax
			}
			mask |= timeBits
			us, ok := parseIntervalTime(tok)
			if !ok {
				return Interval{}, syntax
			}
			acc.addMicros(us)
		case isNumberStart(tok[0]):
			ip, fp, ok := splitNumber(tok)
			if !ok {
				return Interval{}, syntax
			}
			var u intervalUnit
			switch {
			case i+1 < len(toks) && isLetter(toks[i+1][0]) && !strings.EqualFold(toks[i+1], "ago"):
				u, ok = lookupIntervalUnit(toks[i+1])
				if !ok {
					return Interval{}, syntax
				}
				i++
			case i+1 < len(toks) && strings.Contains(toks[i+1], ":"):
				u = intervalUnit{days: 1, bit: 1 << 5} // "1 12:00" is a day and a time
			default:
				u = intervalUnit{micros: MicrosPerSecond, bit: 1 << 2}
			}
			if mask&u.bit != 0 {
				return Interval{}, syntax
			}
			mask |= u.bit
			acc.add(ip, fp, u)
		default:
			return Interval{}, syntax
		}
	}
	iv, ok := acc.result()
	if !ok {
		return Interval{}, rangeErr
	}
	if ago {
		if iv, ok = iv.Neg(); !ok {
			return Interval{}, rangeErr
		}
	}
	return iv, nil
}

func isNumberStart(c byte) bool { return isDigit(c) || c == '-' || c == '+' || c == '.' }

// tokenizeInterval splits interval input into numbers, words and time
// fields: "1day" gives "1", "day".
func tokenizeInterval(s string) []string {
	var out []string
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == ',':
			i++
		case isLetter(c):
			j := i
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		default:
			j := i + 1
			for j < len(s) && (isDigit(s[j]) || s[j] == '.' || s[j] == ':') {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out
}

// parseIntervalTime parses [-]H:MM[:SS[.frac]] (hours unbounded).
func parseIntervalTime(tok string) (int64, bool) {
	sign := int64(1)
	switch tok[0] {
	case '-':
		sign, tok = -1, tok[1:]
	case '+':
		tok = tok[1:]
	}
	parts := strings.Split(tok, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 64)
	m, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || m > 59 || h > math.MaxInt64/MicrosPerHour-1 {
		return 0, false
	}
	var secMicros int64
	if len(parts) == 3 {
		f, err := strconv.ParseFloat(parts[2], 64)
		if err != nil || f >= 60 || f < 0 || strings.ContainsAny(parts[2], "eE+-") {
			return 0, false
		}
		secMicros = int64(math.RoundToEven(f * MicrosPerSecond))
	}
	return sign * (h*MicrosPerHour + m*MicrosPerMinute + secMicros), true
}

// parseISOInterval parses the part after 'P' of an ISO 8601 duration.
func parseISOInterval(s string) (iv Interval, ok, inRange bool) {
	var acc intervalAcc
	inTime := false
	if s == "" {
		return Interval{}, false, true
	}
	for s != "" {
		if s[0] == 'T' || s[0] == 't' {
			if inTime {
				return Interval{}, false, true
			}
			inTime, s = true, s[1:]
			continue
		}
		j := 0
		for j < len(s) && isNumberStart(s[j]) {
			j++
		}
		if j == 0 || j == len(s) {
			return Interval{}, false, true
		}
		ip, fp, ok := splitNumber(s[:j])
		if !ok {
			return Interval{}, false, true
		}
		var u intervalUnit
		switch d := s[j] | 0x20; {
		case d == 'y' && !inTime:
			u, _ = lookupIntervalUnit("year")
		case d == 'm' && !inTime:
			u, _ = lookupIntervalUnit("month")
		case d == 'w' && !inTime:
			u, _ = lookupIntervalUnit("week")
		case d == 'd' && !inTime:
			u, _ = lookupIntervalUnit("day")
		case d == 'h' && inTime:
			u, _ = lookupIntervalUnit("hour")
		case d == 'm' && inTime:
			u, _ = lookupIntervalUnit("minute")
		case d == 's' && inTime:
			u, _ = lookupIntervalUnit("second")
		default:
			return Interval{}, false, true
		}
		acc.add(ip, fp, u)
		s = s[j+1:]
	}
	iv, inRange = acc.result()
	return iv, true, inRange
}

// Neg returns -iv; ok is false when a field is the minimum of its type.
func (iv Interval) Neg() (Interval, bool) {
	if iv.Months == math.MinInt32 || iv.Days == math.MinInt32 || iv.Micros == math.MinInt64 {
		return Interval{}, false
	}
	return Interval{Months: -iv.Months, Days: -iv.Days, Micros: -iv.Micros}, true
}

// mulInt64 returns x*y and whether it did not overflow.
func mulInt64(x, y int64) (int64, bool) {
	if x == 0 || y == 0 {
		return 0, true
	}
	r := x * y
	if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
		return 0, false
	}
	return r, true
}
