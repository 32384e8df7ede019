package row

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ParseErrorKind classifies a date/time input error; the SQL layer maps
// each to Postgres' SQLSTATE.
type ParseErrorKind uint8

// The kinds of input errors.
const (
	// ErrSyntax: not a date/time at all (22007).
	ErrSyntax ParseErrorKind = iota + 1
	// ErrFieldRange: a field out of its range, such as month 13 or
	// February 30 (22008).
	ErrFieldRange
	// ErrValueRange: a well-formed value outside the type's range (22008).
	ErrValueRange
	// ErrZone: an unknown time zone (22023).
	ErrZone
	// ErrIntervalField: an interval field that does not fit (22015).
	ErrIntervalField
	// ErrUnsupported: a form Postgres accepts that Tandem does not, such
	// as 'now' (0A000).
	ErrUnsupported
)

// ParseError is the error of the date/time parsers, with Postgres'
// message.
type ParseError struct {
	Kind  ParseErrorKind
	Type  Type
	Input string
	Zone  string
}

func (e *ParseError) Error() string {
	switch e.Kind {
	case ErrFieldRange:
		return fmt.Sprintf("date/time field value out of range: %q", e.Input)
	case ErrValueRange:
		name := e.Type.String()
		if e.Type == TypeTimestampTZ {
			name = "timestamp"
		}
		return fmt.Sprintf("%s out of range: %q", name, e.Input)
	case ErrZone:
		return fmt.Sprintf("time zone %q not recognized", e.Zone)
	case ErrIntervalField:
		return fmt.Sprintf("interval field value out of range: %q", e.Input)
	case ErrUnsupported:
		return fmt.Sprintf("special %s input %q is not supported (use now(), current_date or current_timestamp)", e.Type, e.Input)
	}
	return fmt.Sprintf("invalid input syntax for type %s: %q", pgTypeName(e.Type), e.Input)
}

func pgTypeName(t Type) string {
	switch t {
	case TypeTimestamp:
		return "timestamp"
	case TypeTimestampTZ:
		return "timestamp with time zone"
	case TypeTime:
		return "time without time zone"
	}
	return t.String()
}

// dtFields are the parts of a date/time literal.
type dtFields struct {
	year, month, day int64 // astronomical year after bc is applied
	hasDate          bool
	timeMicros       int64 // since midnight, up to 24:00:00
	hasTime          bool
	hasZone          bool
	offset           int64 // seconds east of UTC, when zone is nil
	zone             *time.Location
	special          int // +1 infinity, -1 -infinity
	epoch            bool
	isBC             bool
}

// LoadZone resolves a time zone name as Postgres does, case-insensitively
// for IANA names: UTC/GMT/Z, IANA names such as America/New_York, and
// POSIX-style fixed offsets are left to the caller. ok is false for an
// unknown name.
func LoadZone(name string) (*time.Location, bool) {
	switch strings.ToLower(name) {
	case "utc", "gmt", "z", "zulu", "etc/utc", "universal":
		return time.UTC, true
	case "", "local":
		return nil, false
	}
	if strings.ContainsAny(name, ".\\") || strings.HasPrefix(name, "/") {
		return nil, false
	}
	if loc, ok := zones.get(name); ok {
		return loc, loc != nil
	}
	for _, n := range []string{name, zoneTitle(name), strings.ToUpper(name)} {
		if loc, err := time.LoadLocation(n); err == nil {
			zones.put(name, loc)
			return loc, true
		}
	}
	zones.put(name, nil)
	return nil, false
}

// zoneMemo remembers resolved zone names. Loading a zone reads and parses
// its zoneinfo data (about 0.2 ms), and zone-aware functions resolve their
// zone argument for every row they evaluate. This is the package's one
// piece of shared mutable state, kept deliberately: it memoises a pure
// function of the zone database, which does not change while the process
// runs, so it can never change a result. It is bounded: when full it
// starts over.
type zoneMemo struct {
	mu sync.Mutex
	m  map[string]*time.Location
}

const zoneMemoMax = 256

var zones = &zoneMemo{m: map[string]*time.Location{}}

func (z *zoneMemo) get(name string) (*time.Location, bool) {
	z.mu.Lock()
	defer z.mu.Unlock()
	loc, ok := z.m[name]
	return loc, ok
}

func (z *zoneMemo) put(name string, loc *time.Location) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if len(z.m) >= zoneMemoMax {
		clear(z.m)
	}
	z.m[name] = loc
}

// zoneTitle capitalises each word of a zone name: america/new_york ->
// America/New_York.
func zoneTitle(s string) string {
	b := []byte(strings.ToLower(s))
	up := true
	for i, c := range b {
		if up && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		up = c == '/' || c == '_' || c == '-'
	}
	return string(b)
}

type dtScanner struct {
	s string
	i int
}

func (sc *dtScanner) eof() bool  { return sc.i >= len(sc.s) }
func (sc *dtScanner) peek() byte { return sc.s[sc.i] }
func (sc *dtScanner) skipSpace() {
	for !sc.eof() && (sc.peek() == ' ' || sc.peek() == '\t' || sc.peek() == '\n' || sc.peek() == '\r') {
		sc.i++
	}
}

// digits reads a run of digits; ok is false when there is none or it is
// absurdly long.
func (sc *dtScanner) digits() (v int64, n int, ok bool) {
	start := sc.i
	for !sc.eof() && sc.peek() >= '0' && sc.peek() <= '9' {
		sc.i++
	}
	n = sc.i - start
	if n == 0 || n > 15 {
		return 0, n, false
	}
	v, err := strconv.ParseInt(sc.s[start:sc.i], 10, 64)
	return v, n, err == nil
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// parseDateTime splits s into fields. It accepts ISO dates
// (YYYY-MM-DD, YYYYMMDD), times (HH:MM[:SS[.frac]]), a 'T' or spaces
// between them, an offset (Z, +HH, +HHMM, +HH:MM[:SS]) or zone name, and
// BC/AD; plus infinity, -infinity and epoch.
func parseDateTime(s string, typ Type) (dtFields, error) {
	var f dtFields
	syntax := func() (dtFields, error) { return f, &ParseError{Kind: ErrSyntax, Type: typ, Input: s} }
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "infinity", "+infinity":
		f.special = 1
		return f, nil
	case "-infinity":
		f.special = -1
		return f, nil
	case "epoch":
		f.epoch = true
		return f, nil
	case "now", "today", "tomorrow", "yesterday", "allballs":
		return f, &ParseError{Kind: ErrUnsupported, Type: typ, Input: s}
	}
	sc := &dtScanner{s: t}
	if sc.eof() || !isDigit(sc.peek()) {
		return syntax()
	}
	if err := f.scanDateOrTime(sc); err != nil {
		return syntax()
	}
	for {
		sc.skipSpace()
		if sc.eof() {
			break
		}
		c := sc.peek()
		switch {
		case isDigit(c) && f.hasDate && !f.hasTime:
			if err := f.scanTime(sc); err != nil {
				return syntax()
			}
		case (c == 'T' || c == 't') && f.hasDate && !f.hasTime && sc.i+1 < len(sc.s) && isDigit(sc.s[sc.i+1]):
			sc.i++
			if err := f.scanTime(sc); err != nil {
				return syntax()
			}
		case (c == '+' || c == '-') && f.hasTime && !f.hasZone:
			if err := f.scanOffset(sc); err != nil {
				return syntax()
			}
		case isLetter(c):
			start := sc.i
			for !sc.eof() && (isLetter(sc.peek()) || isDigit(sc.peek()) || strings.IndexByte("/_-+", sc.peek()) >= 0) {
				sc.i++
			}
			word := sc.s[start:sc.i]
			switch lw := strings.ToLower(word); {
			case lw == "bc":
				if f.isBC {
					return syntax()
				}
				f.isBC = true
			case lw == "ad":
			case f.hasZone:
				return syntax()
			default:
				loc, ok := LoadZone(word)
				if !ok && strings.Contains(word, "/") {
					return f, &ParseError{Kind: ErrZone, Type: typ, Input: s, Zone: strings.ToLower(word)}
				}
				if !ok {
					// Postgres reads an unknown plain word as a syntax
					// error, a name with a slash as an unknown zone.
					return syntax()
				}
				f.hasZone, f.zone = true, loc
			}
		default:
			return syntax()
		}
	}
	if f.hasDate {
		if f.year == 0 {
			return f, &ParseError{Kind: ErrFieldRange, Type: typ, Input: s}
		}
		if f.isBC {
			f.year = 1 - f.year
		}
		if f.month < 1 || f.month > 12 || f.day < 1 || f.day > DaysInMonth(f.year, f.month) {
			return f, &ParseError{Kind: ErrFieldRange, Type: typ, Input: s}
		}
	} else if f.isBC {
		return syntax()
	}
	return f, nil
}

// scanDateOrTime reads the leading date (or, for a time-only input, the
// time).
func (f *dtFields) scanDateOrTime(sc *dtScanner) error {
	start := sc.i
	v, n, ok := sc.digits()
	if !ok {
		return errBad
	}
	if !sc.eof() && sc.peek() == ':' {
		sc.i = start
		return f.scanTime(sc)
	}
	if n == 8 && (sc.eof() || sc.peek() == ' ' || sc.peek() == 'T' || sc.peek() == 't') {
		f.year, f.month, f.day, f.hasDate = v/10000, v/100%100, v%100, true
		return nil
	}
	if sc.eof() || sc.peek() != '-' {
		return errBad
	}
	sc.i++
	m, _, ok := sc.digits()
	if !ok || sc.eof() || sc.peek() != '-' {
		return errBad
	}
	sc.i++
	d, _, ok := sc.digits()
	if !ok {
		return errBad
	}
	f.year, f.month, f.day, f.hasDate = v, m, d, true
	return nil
}

var errBad = fmt.Errorf("bad date/time")

// scanTime reads HH:MM[:SS[.frac]].
func (f *dtFields) scanTime(sc *dtScanner) error {
	h, _, ok := sc.digits()
	if !ok || sc.eof() || sc.peek() != ':' {
		return errBad
	}
	sc.i++
	m, _, ok := sc.digits()
	if !ok {
		return errBad
	}
	var sec int64
	var frac float64
	if !sc.eof() && sc.peek() == ':' {
		sc.i++
		if sec, _, ok = sc.digits(); !ok {
			return errBad
		}
		if !sc.eof() && sc.peek() == '.' {
			start := sc.i
			sc.i++
			for !sc.eof() && isDigit(sc.peek()) {
				sc.i++
			}
			var err error
			if frac, err = strconv.ParseFloat("0"+sc.s[start:sc.i], 64); err != nil {
				return errBad
			}
		}
	}
	f.hasTime = true
	if h > 24 || m > 59 || sec > 60 {
		f.timeMicros = -1
		return nil
	}
	us := ((h*60+m)*60+sec)*MicrosPerSecond + int64(math.RoundToEven(frac*MicrosPerSecond))
	if us > MicrosPerDay {
		f.timeMicros = -1
		return nil
	}
	f.timeMicros = us
	return nil
}

// scanOffset reads +HH, +HHMM, +HH:MM or +HH:MM:SS.
func (f *dtFields) scanOffset(sc *dtScanner) error {
	sign := int64(1)
	if sc.peek() == '-' {
		sign = -1
	}
	sc.i++
	v, n, ok := sc.digits()
	if !ok {
		return errBad
	}
	var h, m, s int64
	switch n {
	case 1, 2:
		h = v
		if !sc.eof() && sc.peek() == ':' {
			sc.i++
			if m, _, ok = sc.digits(); !ok {
				return errBad
			}
			if !sc.eof() && sc.peek() == ':' {
				sc.i++
				if s, _, ok = sc.digits(); !ok {
					return errBad
				}
			}
		}
	case 4:
		h, m = v/100, v%100
	default:
		return errBad
	}
	if h > 15 || m > 59 || s > 59 {
		return errBad
	}
	f.hasZone, f.offset = true, sign*(h*3600+m*60+s)
	return nil
}

// checkTime reports a time field out of range.
func (f *dtFields) checkTime(typ Type, s string) error {
	if f.timeMicros < 0 {
		return &ParseError{Kind: ErrFieldRange, Type: typ, Input: s}
	}
	return nil
}

// localMicros is the fields' wall-clock time as micros since the epoch.
func (f *dtFields) localMicros() int64 {
	return DaysFromCivil(f.year, f.month, f.day)*MicrosPerDay + f.timeMicros
}

// ParseDate parses a date literal ('2024-01-02', '20240102', a timestamp
// whose time is ignored, infinity, -infinity, epoch, BC).
func ParseDate(s string) (int32, error) {
	f, err := parseDateTime(s, TypeDate)
	if err != nil {
		return 0, err
	}
	switch {
	case f.special > 0:
		return DateInfinity, nil
	case f.special < 0:
		return DateNegInfinity, nil
	case f.epoch:
		return 0, nil
	case !f.hasDate:
		return 0, &ParseError{Kind: ErrSyntax, Type: TypeDate, Input: s}
	}
	if err := f.checkTime(TypeDate, s); err != nil {
		return 0, err
	}
	days := DaysFromCivil(f.year, f.month, f.day)
	if days < MinDateDays || days > MaxDateDays {
		return 0, &ParseError{Kind: ErrValueRange, Type: TypeDate, Input: s}
	}
	return int32(days), nil
}

// ParseTime parses a time of day ('03:04:05.678'; a date or zone before
// or after it is ignored, as Postgres' time input does).
func ParseTime(s string) (int64, error) {
	f, err := parseDateTime(s, TypeTime)
	if err != nil {
		return 0, err
	}
	if !f.hasTime || f.special != 0 || f.epoch {
		return 0, &ParseError{Kind: ErrSyntax, Type: TypeTime, Input: s}
	}
	if err := f.checkTime(TypeTime, s); err != nil {
		return 0, err
	}
	return f.timeMicros, nil
}

// ParseTimestamp parses a timestamp without time zone: a date, optionally
// a time, BC; a zone in the input is ignored, as in Postgres.
func ParseTimestamp(s string) (int64, error) {
	return parseTimestamp(s, TypeTimestamp, nil)
}

// ParseTimestampTZ parses a timestamp with time zone; without a zone in
// the input the time is local time in loc (nil: UTC).
func ParseTimestampTZ(s string, loc *time.Location) (int64, error) {
	return parseTimestamp(s, TypeTimestampTZ, loc)
}

func parseTimestamp(s string, typ Type, loc *time.Location) (int64, error) {
	f, err := parseDateTime(s, typ)
	if err != nil {
		return 0, err
	}
	switch {
	case f.special > 0:
		return TimestampInfinity, nil
	case f.special < 0:
		return TimestampNegInfinity, nil
	case f.epoch:
		return 0, nil
	case !f.hasDate:
		return 0, &ParseError{Kind: ErrSyntax, Type: typ, Input: s}
	}
	if err := f.checkTime(typ, s); err != nil {
		return 0, err
	}
	days := DaysFromCivil(f.year, f.month, f.day)
	// Bound the day before multiplying so the micros cannot overflow.
	if days < MinDateDays || days > MaxTimestamp/MicrosPerDay+1 {
		return 0, &ParseError{Kind: ErrValueRange, Type: typ, Input: s}
	}
	local := days*MicrosPerDay + f.timeMicros
	if days == MaxTimestamp/MicrosPerDay+1 || local > MaxTimestamp || local < MinTimestamp {
		return 0, &ParseError{Kind: ErrValueRange, Type: typ, Input: s}
	}
	us := local
	if typ == TypeTimestampTZ {
		switch {
		case f.zone != nil:
			us = TimestampFromLocal(local, f.zone)
		case f.hasZone:
			us = local - f.offset*MicrosPerSecond
		default:
			us = TimestampFromLocal(local, loc)
		}
		if !ValidTimestamp(us) {
			return 0, &ParseError{Kind: ErrValueRange, Type: typ, Input: s}
		}
	}
	return us, nil
}
