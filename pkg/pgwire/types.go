package pgwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Type OIDs of the Postgres types the row types are presented as.
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidFloat4      = 700
	oidFloat8      = 701
	oidUnknown     = 705
	oidBpchar      = 1042
	oidVarchar     = 1043
	oidTimestamp   = 1114
	oidDate        = 1082
	oidTime        = 1083
	oidTimestampTZ = 1184
	oidInterval    = 1186
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSON        = 114
	oidJSONB       = 3802
)

// typeOID returns the OID a row type is described with, and its size.
func typeOID(t row.Type) (uint32, int16) {
	switch t {
	case row.TypeBool:
		return oidBool, 1
	case row.TypeInt64:
		return oidInt8, 8
	case row.TypeFloat64:
		return oidFloat8, 8
	case row.TypeBytes:
		return oidBytea, -1
	case row.TypeTimestamp:
		return oidTimestamp, 8
	case row.TypeDate:
		return oidDate, 4
	case row.TypeTime:
		return oidTime, 8
	case row.TypeTimestampTZ:
		return oidTimestampTZ, 8
	case row.TypeInterval:
		return oidInterval, 16
	case row.TypeNumeric:
		return oidNumeric, -1
	case row.TypeUUID:
		return oidUUID, 16
	case row.TypeJSONB:
		return oidJSONB, -1
	case row.TypeJSON:
		return oidJSON, -1
	case row.TypeRecord:
		return oidRecord, -1
	}
	if t.IsArray() {
		oid, _ := planner.PGType(t, 0, planner.TypeMod{})
		return oid, -1
	}
	return oidText, -1
}

// columnType returns the OID, size and typmod a result column is
// described with: its SQL type where the planner knows it (int4,
// varchar(30), numeric(10,2)), else its row type's.
func columnType(col sql.Column) (oid uint32, size int16, typmod int32) {
	oid, typmod = planner.PGType(col.Type.Type, col.Width, col.Mod)
	switch oid {
	case oidInt2:
		size = 2
	case oidInt4:
		size = 4
	default:
		_, size = typeOID(col.Type.Type)
	}
	return oid, size, typmod
}

// oidType maps a parameter type OID sent by a client to a row type;
// row.TypeInvalid means "infer it".
func oidType(oid uint32) (row.Type, error) {
	switch oid {
	case 0, oidUnknown:
		return row.TypeInvalid, nil
	case oidBool:
		return row.TypeBool, nil
	case oidInt2, oidInt4, oidInt8:
		return row.TypeInt64, nil
	case oidFloat4, oidFloat8:
		return row.TypeFloat64, nil
	case oidText, oidVarchar, oidBpchar:
		return row.TypeText, nil
	case oidNumeric:
		return row.TypeNumeric, nil
	case oidUUID:
		return row.TypeUUID, nil
	case oidJSONB:
		return row.TypeJSONB, nil
	case oidJSON:
		return row.TypeJSON, nil
	case oidBytea:
		return row.TypeBytes, nil
	case oidTimestamp:
		return row.TypeTimestamp, nil
	case oidDate:
		return row.TypeDate, nil
	case oidTime:
		return row.TypeTime, nil
	case oidTimestampTZ:
		return row.TypeTimestampTZ, nil
	case oidInterval:
		return row.TypeInterval, nil
	}
	if t, _, ok := arrayOIDType(oid); ok {
		return t, nil
	}
	return row.TypeInvalid, sqlerr.Errorf(sqlerr.FeatureNotSupported, "parameter type with OID %d not supported", oid)
}

// postgresEpochMicros is 2000-01-01 in micros since the Unix epoch: the
// zero of Postgres' binary timestamps (and postgresEpochDays of its
// binary dates).
const (
	postgresEpochMicros = 946684800 * 1_000_000
	postgresEpochDays   = 10957
)

// encodeText appends the text format of d (d not NULL) as a value of
// column col: numerics with the column's scale, char(n) padded,
// timestamptz in loc.
func encodeText(dst []byte, d row.Datum, col sql.Column, loc *time.Location) []byte {
	return col.Mod.AppendText(dst, d, loc)
}

// timestampToPG converts micros since 1970 to Postgres' binary form,
// micros since 2000 with the infinities kept at the extremes.
func timestampToPG(us int64) int64 {
	if !row.TimestampIsFinite(us) {
		return us
	}
	return us - postgresEpochMicros
}

func timestampFromPG(us int64) (int64, bool) {
	if us == math.MaxInt64 || us == math.MinInt64 {
		return us, true
	}
	r := us + postgresEpochMicros
	if (r < us) || !row.ValidTimestamp(r) {
		return 0, false
	}
	return r, true
}

// encodeBinary appends the binary format of d (d not NULL) as a value of
// column col.
func encodeBinary(dst []byte, d row.Datum, col sql.Column) ([]byte, error) {
	switch d.Type() {
	case row.TypeBool:
		if d.Bool() {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case row.TypeInt64:
		switch col.Width {
		case planner.IntWidth2:
			return binary.BigEndian.AppendUint16(dst, uint16(d.Int64())), nil
		case planner.IntWidth4:
			return binary.BigEndian.AppendUint32(dst, uint32(d.Int64())), nil
		}
		return binary.BigEndian.AppendUint64(dst, uint64(d.Int64())), nil
	case row.TypeNumeric:
		return encodeNumericBinary(dst, d, col.Mod)
	case row.TypeUUID:
		u := d.UUID()
		return append(dst, u[:]...), nil
	case row.TypeJSONB:
		// Binary jsonb is a version byte (1) and the text form.
		return d.JSON().AppendText(append(dst, 1)), nil
	case row.TypeJSON:
		return append(dst, d.JSONText()...), nil // binary json is the text
	case row.TypeText:
		if col.Mod.Kind == planner.ModBpchar {
			return col.Mod.AppendText(dst, d, nil), nil
		}
		return append(dst, d.Text()...), nil
	case row.TypeFloat64:
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(d.Float64())), nil
	case row.TypeBytes:
		return append(dst, d.BytesString()...), nil
	case row.TypeTimestamp:
		return binary.BigEndian.AppendUint64(dst, uint64(timestampToPG(d.Timestamp()))), nil
	case row.TypeTimestampTZ:
		return binary.BigEndian.AppendUint64(dst, uint64(timestampToPG(d.TimestampTZ()))), nil
	case row.TypeDate:
		days := d.Date()
		if row.DateIsFinite(days) {
			days -= postgresEpochDays
		}
		return binary.BigEndian.AppendUint32(dst, uint32(days)), nil
	case row.TypeTime:
		return binary.BigEndian.AppendUint64(dst, uint64(d.Time())), nil
	case row.TypeInterval:
		iv := d.Interval()
		dst = binary.BigEndian.AppendUint64(dst, uint64(iv.Micros))
		dst = binary.BigEndian.AppendUint32(dst, uint32(iv.Days))
		return binary.BigEndian.AppendUint32(dst, uint32(iv.Months)), nil
	}
	if d.Type().IsArray() {
		return encodeArrayBinary(dst, d, col)
	}
	if d.Type() == row.TypeRecord {
		return encodeRecordBinary(dst, d)
	}
	return nil, fmt.Errorf("no binary format for %s", d.Type())
}

// decodeParam decodes one bound parameter value of type t in the given
// format (0 text, 1 binary); nil is NULL.
func decodeParam(v []byte, format int16, t row.Type, oid uint32, loc *time.Location) (row.Datum, error) {
	if v == nil {
		return row.Null(), nil
	}
	if format == 0 {
		if t == row.TypeText || t == row.TypeInvalid {
			return row.Text(string(v)), nil
		}
		if t.IsTemporal() {
			return expr.ParseTemporal(string(v), t, loc)
		}
		if t == row.TypeTimestampTZArray {
			return expr.ParseArrayIn(string(v), t, loc)
		}
		d, err := expr.CastDatum(row.Text(string(v)), t)
		if err != nil {
			return row.Null(), err
		}
		return d, nil
	}
	bad := func() (row.Datum, error) {
		return row.Null(), sqlerr.Errorf(sqlerr.ProtocolViolation, "invalid binary parameter of type OID %d (%d bytes)", oid, len(v))
	}
	if _, _, ok := arrayOIDType(oid); ok {
		return decodeArrayBinary(v, t, oid, loc)
	}
	switch oid {
	case oidBool:
		if len(v) != 1 {
			return bad()
		}
		return row.Bool(v[0] != 0), nil
	case oidInt2:
		if len(v) != 2 {
			return bad()
		}
		return row.Int64(int64(int16(binary.BigEndian.Uint16(v)))), nil
	case oidInt4:
		if len(v) != 4 {
			return bad()
		}
		return row.Int64(int64(int32(binary.BigEndian.Uint32(v)))), nil
	case oidInt8:
		if len(v) != 8 {
			return bad()
		}
		return row.Int64(int64(binary.BigEndian.Uint64(v))), nil
	case oidFloat4:
		if len(v) != 4 {
			return bad()
		}
		return row.Float64(float64(math.Float32frombits(binary.BigEndian.Uint32(v)))), nil
	case oidFloat8:
		if len(v) != 8 {
			return bad()
		}
		return row.Float64(math.Float64frombits(binary.BigEndian.Uint64(v))), nil
	case oidText, oidVarchar, oidBpchar, 0, oidUnknown:
		return row.Text(string(v)), nil
	case oidNumeric:
		return decodeNumericBinary(v)
	case oidUUID:
		if len(v) != 16 {
			return bad()
		}
		return row.UUID([16]byte(v)), nil
	case oidJSONB:
		// Binary jsonb is a version byte (1) and the text form.
		if len(v) == 0 || v[0] != 1 {
			return row.Null(), sqlerr.Errorf(sqlerr.ProtocolViolation, "unsupported jsonb version number %d", firstByte(v))
		}
		return expr.CastDatum(row.Text(string(v[1:])), row.TypeJSONB)
	case oidJSON:
		// Binary json is the text form.
		return expr.ParseJSONText(string(v))
	case oidBytea:
		return row.Bytes(v), nil
	case oidTimestamp, oidTimestampTZ:
		if len(v) != 8 {
			return bad()
		}
		us, ok := timestampFromPG(int64(binary.BigEndian.Uint64(v)))
		if !ok {
			return row.Null(), sqlerr.Errorf(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
		}
		if oid == oidTimestampTZ {
			return row.TimestampTZ(us), nil
		}
		return row.Timestamp(us), nil
	case oidDate:
		if len(v) != 4 {
			return bad()
		}
		days := int64(int32(binary.BigEndian.Uint32(v)))
		if days != math.MinInt32 && days != math.MaxInt32 {
			days += postgresEpochDays
		}
		if !row.ValidDate(days) {
			return row.Null(), sqlerr.Errorf(sqlerr.DatetimeFieldOverflow, "date out of range")
		}
		return row.Date(int32(days)), nil
	case oidTime:
		if len(v) != 8 {
			return bad()
		}
		us := int64(binary.BigEndian.Uint64(v))
		if us < 0 || us > row.MicrosPerDay {
			return row.Null(), sqlerr.Errorf(sqlerr.DatetimeFieldOverflow, "time out of range")
		}
		return row.Time(us), nil
	case oidInterval:
		if len(v) != 16 {
			return bad()
		}
		return row.IntervalDatum(row.Interval{Micros: int64(binary.BigEndian.Uint64(v[:8])),
			Days: int32(binary.BigEndian.Uint32(v[8:12])), Months: int32(binary.BigEndian.Uint32(v[12:]))}), nil
	}
	return row.Null(), sqlerr.Errorf(sqlerr.FeatureNotSupported, "binary parameters of type OID %s not supported", strconv.Itoa(int(oid)))
}

// encodeNumericBinary appends PostgreSQL's binary numeric format, with
// the datum's display scale or the column modifier's if larger, using
// pgtype's encoder.
func encodeNumericBinary(dst []byte, d row.Datum, m planner.TypeMod) ([]byte, error) {
	x := d.DecimalDisplay()
	var n pgtype.Numeric
	switch x.Form {
	case apd.NaN, apd.NaNSignaling:
		n = pgtype.Numeric{NaN: true, Valid: true}
	case apd.Infinite:
		n = pgtype.Numeric{InfinityModifier: pgtype.Infinity, Valid: true}
		if x.Negative {
			n.InfinityModifier = pgtype.NegativeInfinity
		}
	default:
		c := x.Coeff.MathBigInt()
		if x.Negative {
			c.Neg(c)
		}
		exp := x.Exponent
		if m.Kind == planner.ModNumeric && -exp < m.Scale {
			// Pad to the display scale: c × 10^(exp+scale) × 10^-scale.
			c.Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp+m.Scale)), nil))
			exp = -m.Scale
		}
		n = pgtype.Numeric{Int: c, Exp: exp, Valid: true}
	}
	plan := pgtype.NumericCodec{}.PlanEncode(nil, oidNumeric, pgtype.BinaryFormatCode, n)
	if plan == nil {
		return nil, fmt.Errorf("no binary numeric encoder")
	}
	out, err := plan.Encode(n, dst)
	if err != nil {
		return nil, fmt.Errorf("encode numeric: %w", err)
	}
	return out, nil
}

// decodeNumericBinary decodes a binary numeric parameter with pgtype.
func decodeNumericBinary(v []byte) (row.Datum, error) {
	var n pgtype.Numeric
	plan := pgtype.NumericCodec{}.PlanScan(nil, oidNumeric, pgtype.BinaryFormatCode, &n)
	if plan == nil {
		return row.Null(), fmt.Errorf("no binary numeric decoder")
	}
	if err := plan.Scan(v, &n); err != nil {
		return row.Null(), sqlerr.Errorf(sqlerr.ProtocolViolation, "invalid binary numeric parameter: %v", err)
	}
	x := new(apd.Decimal)
	switch {
	case !n.Valid:
		return row.Null(), nil
	case n.NaN:
		x.Form = apd.NaN
	case n.InfinityModifier == pgtype.Infinity:
		x.Form = apd.Infinite
	case n.InfinityModifier == pgtype.NegativeInfinity:
		x.Form, x.Negative = apd.Infinite, true
	default:
		c := new(big.Int).Set(n.Int)
		x.Negative = c.Sign() < 0
		x.Coeff.SetMathBigInt(c.Abs(c))
		x.Exponent = n.Exp
	}
	d, err := row.NumericExact(x)
	if err != nil {
		return row.Null(), sqlerr.Errorf(sqlerr.NumericValueOutOfRange, "%v", err)
	}
	return d, nil
}

func firstByte(v []byte) int {
	if len(v) == 0 {
		return -1
	}
	return int(v[0])
}

// binaryDecodable is a binary COPY FROM that takes the wire's decoder for
// the types it does not decode itself.
type binaryDecodable interface {
	SetBinaryDecoder(f sql.BinaryDecoder)
}

// decodeCopyField decodes a field of binary COPY data as a value of row
// type t, as a binary parameter of t's type is (array elements by the
// element OID the array names); a malformed field is 22P03.
func (c *conn) decodeCopyField(v []byte, t row.Type) (row.Datum, error) {
	oid, _ := planner.PGType(t, 0, planner.TypeMod{})
	d, err := decodeParam(v, 1, t, oid, c.location())
	if err != nil && sqlerr.Code(err) == sqlerr.ProtocolViolation {
		return row.Null(), sqlerr.Errorf(sqlerr.InvalidBinaryRepresentation, "incorrect binary data format in COPY field of type %s", t.PGName())
	}
	return d, err
}
