package row

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"
)

// String returns d in Postgres' text output format: t/f for booleans,
// shortest round-trip floats with Postgres' exponent rule (Infinity,
// -Infinity, NaN), timestamps as "YYYY-MM-DD HH:MM:SS[.ffffff]"
// (timestamptz in UTC: AppendTextIn shows another zone), intervals in the
// "postgres" interval style, bytes in hex format ("\x0aff"), numerics
// without trailing fractional zeros, uuids as 8-4-4-4-12 lower-case hex.
// NULL, which has no text form in pgwire (it is a
// length of -1), renders as "NULL".
func (d Datum) String() string {
	return string(d.AppendText(nil))
}

// AppendText appends the Postgres text output form of d to dst.
func (d Datum) AppendText(dst []byte) []byte {
	switch d.Type() {
	case TypeNull:
		return append(dst, "NULL"...)
	case TypeBool:
		if d.Bool() {
			return append(dst, 't')
		}
		return append(dst, 'f')
	case TypeInt64:
		return strconv.AppendInt(dst, d.Int64(), 10)
	case TypeFloat64:
		return AppendFloat(dst, d.Float64())
	case TypeText:
		return append(dst, d.str...)
	case TypeBytes:
		dst = append(dst, '\\', 'x')
		return hex.AppendEncode(dst, []byte(d.str))
	case TypeTimestamp:
		return AppendTimestamp(dst, d.Timestamp())
	case TypeDate:
		return AppendDate(dst, d.Date())
	case TypeTime:
		return AppendTime(dst, d.Time())
	case TypeTimestampTZ:
		return AppendTimestampTZ(dst, d.TimestampTZ(), nil)
	case TypeInterval:
		return AppendInterval(dst, d.Interval())
	case TypeNumeric:
		return AppendNumeric(dst, d, 0)
	case TypeUUID:
		return appendUUID(dst, d.str)
	case TypeJSONB:
		return d.JSON().AppendText(dst)
	case TypeJSON:
		return append(dst, d.str...)
	default:
		if d.typ.IsArray() {
			return appendArrayText(dst, d)
		}
		if d.typ == TypeRecord {
			return appendRecordTextIn(dst, d, time.UTC)
		}
		return dst
	}
}

// AppendFloat formats f as Postgres' float8out does with the default
// extra_float_digits = 1: the shortest decimal that round-trips, in
// positional notation when the decimal exponent is in [-4, 15) and as
// d.ddde±XX otherwise.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		return append(dst, '0') // -0 is canonicalised to 0
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	i := strings.LastIndexByte(string(e), 'e')
	exp, err := strconv.Atoi(string(e[i+1:]))
	if err == nil && exp >= -4 && exp < 15 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	return append(dst, e...)
}

// Postgres represents timestamp 'infinity' and '-infinity' as the extreme
// int64 values.
const (
	TimestampInfinity    = math.MaxInt64
	TimestampNegInfinity = math.MinInt64
)

func appendPadded(dst []byte, v, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(v), 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// SQLLiteral renders d as a SQL literal for debugging and plan output:
// NULL, true/false, numbers, 'quoted text', '\x..'::bytea,
// '...'::timestamp.
func (d Datum) SQLLiteral() string {
	switch d.Type() {
	case TypeBool:
		return strconv.FormatBool(d.Bool())
	case TypeText:
		return "'" + strings.ReplaceAll(d.str, "'", "''") + "'"
	case TypeBytes:
		return "'" + d.String() + "'::bytea"
	case TypeTimestamp, TypeDate, TypeTime, TypeTimestampTZ, TypeInterval:
		return "'" + d.String() + "'::" + d.Type().String()
	case TypeUUID:
		return "'" + d.String() + "'::uuid"
	case TypeJSONB:
		return "'" + strings.ReplaceAll(d.String(), "'", "''") + "'::jsonb"
	case TypeJSON:
		return "'" + strings.ReplaceAll(d.str, "'", "''") + "'::json"
	case TypeInt64Array, TypeFloat64Array, TypeNumericArray, TypeTextArray, TypeBoolArray,
		TypeDateArray, TypeTimestampArray, TypeUUIDArray, TypeBytesArray, TypeJSONBArray, TypeTimestampTZArray, TypeJSONArray, TypeRecordArray:
		return "'" + strings.ReplaceAll(d.String(), "'", "''") + "'::" + d.Type().String()
	case TypeNumeric:
		return "'" + d.String() + "'::numeric"
	case TypeFloat64:
		f := d.Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "'" + d.String() + "'::float8"
		}
		return d.String()
	default:
		return d.String()
	}
}
