package row

import (
	"cmp"
	"math"
	"strings"
)

// Datum is one SQL value: NULL, or a value of one of the supported types.
// It is a small comparable value type (no pointers but the string header);
// the zero Datum is NULL. Text and bytes payloads are held as an immutable
// string.
type Datum struct {
	typ  Type   // TypeNull for NULL (and the zero value, see Type).
	bits uint64 // bool (0/1), int64, float64 bits, date days, time/timestamp/interval micros.
	str  string // text or bytes payload; an interval's months and days.
}

// Null returns the SQL NULL.
func Null() Datum { return Datum{} }

// Bool returns a boolean datum.
func Bool(b bool) Datum {
	if b {
		return Datum{typ: TypeBool, bits: 1}
	}
	return Datum{typ: TypeBool}
}

// True and False are the boolean datums.
var (
	True  = Bool(true)
	False = Bool(false)
)

// Int64 returns an int64 datum.
func Int64(i int64) Datum { return Datum{typ: TypeInt64, bits: uint64(i)} }

// Float64 returns a float64 datum. -0 is canonicalised to 0 and every NaN
// to one NaN, so equal values have equal encodings.
func Float64(f float64) Datum { return Datum{typ: TypeFloat64, bits: canonicalFloatBits(f)} }

// Text returns a text datum.
func Text(s string) Datum { return Datum{typ: TypeText, str: s} }

// JSONText returns a json datum holding the document s as written. The
// caller has validated s (expr.CastDatum does, with PostgreSQL's error).
func JSONText(s string) Datum { return Datum{typ: TypeJSON, str: s} }

// Bytes returns a bytes datum holding a copy of b.
func Bytes(b []byte) Datum { return Datum{typ: TypeBytes, str: string(b)} }

// BytesString returns a bytes datum whose payload is s, without copying.
func BytesString(s string) Datum { return Datum{typ: TypeBytes, str: s} }

// Timestamp returns a timestamp datum, micros since the Unix epoch.
func Timestamp(micros int64) Datum { return Datum{typ: TypeTimestamp, bits: uint64(micros)} }

// Date returns a date datum, days since 1970-01-01 (DateNegInfinity and
// DateInfinity are -infinity and infinity).
func Date(days int32) Datum { return Datum{typ: TypeDate, bits: uint64(int64(days))} }

// Time returns a time-of-day datum, micros since midnight in [0, 24h].
func Time(micros int64) Datum { return Datum{typ: TypeTime, bits: uint64(micros)} }

// TimestampTZ returns a timestamp with time zone datum, micros since the
// Unix epoch in UTC.
func TimestampTZ(micros int64) Datum { return Datum{typ: TypeTimestampTZ, bits: uint64(micros)} }

// IntervalDatum returns an interval datum. The months and days travel in
// the string payload so that Datum stays a small comparable value.
func IntervalDatum(iv Interval) Datum {
	return Datum{typ: TypeInterval, bits: uint64(iv.Micros), str: iv.packMonthsDays()}
}

const canonicalNaN = 0x7FF8000000000000

func canonicalFloatBits(f float64) uint64 {
	switch {
	case f != f:
		return canonicalNaN
	case f == 0:
		return 0
	default:
		return math.Float64bits(f)
	}
}

// Type returns the datum's type; TypeNull for NULL. The zero Datum has typ
// 0 (TypeInvalid) which also reads as NULL, so that Datum{} is NULL.
func (d Datum) Type() Type {
	if d.typ == TypeInvalid {
		return TypeNull
	}
	return d.typ
}

// IsNull reports whether d is NULL.
func (d Datum) IsNull() bool { return d.typ == TypeInvalid || d.typ == TypeNull }

// Bool returns the boolean payload; false unless d is a true boolean.
func (d Datum) Bool() bool { return d.typ == TypeBool && d.bits == 1 }

// Int64 returns the int64 payload; 0 for other types.
func (d Datum) Int64() int64 {
	if d.typ != TypeInt64 {
		return 0
	}
	return int64(d.bits)
}

// Float64 returns the float64 payload; 0 for other types.
func (d Datum) Float64() float64 {
	if d.typ != TypeFloat64 {
		return 0
	}
	return math.Float64frombits(d.bits)
}

// Timestamp returns the timestamp payload in micros; 0 for other types.
func (d Datum) Timestamp() int64 {
	if d.typ != TypeTimestamp {
		return 0
	}
	return int64(d.bits)
}

// Date returns the date payload in days; 0 for other types.
func (d Datum) Date() int32 {
	if d.typ != TypeDate {
		return 0
	}
	return int32(int64(d.bits))
}

// Time returns the time payload in micros since midnight; 0 for other
// types.
func (d Datum) Time() int64 {
	if d.typ != TypeTime {
		return 0
	}
	return int64(d.bits)
}

// TimestampTZ returns the timestamptz payload in micros (UTC); 0 for
// other types.
func (d Datum) TimestampTZ() int64 {
	if d.typ != TypeTimestampTZ {
		return 0
	}
	return int64(d.bits)
}

// Interval returns the interval payload; the zero Interval for other
// types.
func (d Datum) Interval() Interval {
	if d.typ != TypeInterval {
		return Interval{}
	}
	return unpackMonthsDays(d.str, int64(d.bits))
}

// JSONText returns a json datum's document text; "" for other types.
func (d Datum) JSONText() string {
	if d.typ != TypeJSON {
		return ""
	}
	return d.str
}

// Text returns the text payload; "" for other types.
func (d Datum) Text() string {
	if d.typ != TypeText {
		return ""
	}
	return d.str
}

// Bytes returns a copy of the bytes payload; nil for other types.
func (d Datum) Bytes() []byte {
	if d.typ != TypeBytes {
		return nil
	}
	return []byte(d.str)
}

// BytesString returns the bytes payload as a string without copying; ""
// for other types.
func (d Datum) BytesString() string {
	if d.typ != TypeBytes {
		return ""
	}
	return d.str
}

// rank orders types in the order of their encoding tags, which is the
// order Compare uses between datums of different types. SQL never compares
// values of different types (the expression layer casts first); the order
// only needs to be total and agree with the encoding.
func (d Datum) rank() byte { return tagOf(d) }

// Compare returns -1, 0 or +1 comparing a and b in SQL order: NULL sorts
// after every value (Postgres' ascending default), false < true, integers
// and date/time values numerically, intervals by Interval.Compare (their
// length with a month as 30 days, then months, then days), floats numerically with -0 == 0 and NaN equal
// to itself and greater than +Inf (as Postgres does), text and bytes
// bytewise. Datums of different types order by type.
func Compare(a, b Datum) int {
	ra, rb := a.rank(), b.rank()
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch a.Type() {
	case TypeNull:
		return 0
	case TypeBool:
		return cmp.Compare(a.bits, b.bits)
	case TypeInt64, TypeTimestamp, TypeDate, TypeTime, TypeTimestampTZ:
		return cmp.Compare(int64(a.bits), int64(b.bits))
	case TypeInterval:
		return a.Interval().Compare(b.Interval())
	case TypeFloat64:
		// Bits are canonical, so the order-preserving transform gives the
		// total order including NaN.
		return cmp.Compare(floatKey(a.bits), floatKey(b.bits))
	case TypeNumeric:
		// By value, then by display scale (1.5 before 1.50), the
		// order of the encoding's scale suffix.
		if c := strings.Compare(a.str, b.str); c != 0 {
			return c
		}
		return cmp.Compare(a.bits, b.bits)
	default:
		return strings.Compare(a.str, b.str)
	}
}

// Equal reports whether Compare(a, b) == 0. Note this is not SQL `=`:
// NULL equals NULL here, as in GROUP BY and DISTINCT.
func Equal(a, b Datum) bool { return Compare(a, b) == 0 }

// CompareDatums compares two tuples lexicographically with Compare; a
// proper prefix sorts first.
func CompareDatums(a, b []Datum) int {
	for i := range min(len(a), len(b)) {
		if c := Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// floatKey maps canonical float bits to an unsigned key whose order is the
// float order: flip every bit of negatives, only the sign bit of the rest.
func floatKey(bits uint64) uint64 {
	if bits>>63 == 1 {
		return ^bits
	}
	return bits | 1<<63
}

// CompareOrder is Compare as ORDER BY sees it: intervals of the same
// length ('1 mon', '30 days') tie, as in Postgres, and so do numerics of
// one value at different display scales, so that later sort keys
// decide between them. Compare itself breaks that tie, because the row
// encoding must give distinct values distinct bytes.
func CompareOrder(a, b Datum) int {
	if a.typ == TypeInterval && b.typ == TypeInterval {
		return a.Interval().CompareLength(b.Interval())
	}
	// Numerics of one value tie whatever their scales (1.5 and 1.50 are
	// peers for ORDER BY, ranks and window frames, as in PostgreSQL).
	return Compare(a.NumericKey(), b.NumericKey())
}
