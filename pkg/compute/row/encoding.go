package row

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"
)

// Row is an encoded tuple of datums. The encoding is:
//
//   - self-delimiting: each datum is a tag byte and a payload whose length
//     is known from the tag (fixed width) or from a terminator (text,
//     bytes), so the concatenation of two rows encodes the concatenated
//     tuple, and a prefix of columns can be cut without decoding the rest;
//   - order-preserving: bytes.Compare(Pack(x...), Pack(y...)) equals
//     CompareDatums(x, y) for all tuples x, y;
//   - canonical: every tuple has exactly one encoding and the decoder
//     rejects every other byte string, so Pack(Unpack(r)) == r whenever
//     Unpack succeeds, and equal rows are equal bytes (hashing is sound).
//
// Tags, in increasing order (so NULL sorts last):
//
//	0x10 false, 0x11 true                no payload
//	0x20 int64, 0x40 timestamp            8 bytes big endian, sign bit flipped
//	0x41 date, 0x42 time, 0x43 timestamptz  (the same; date and time are range-checked)
//	0x30 float64                          8 bytes: order-preserving float bits
//	0x44 interval                         24 bytes: length in whole days (8, sign
//	                                      flipped) and remainder micros (8), then
//	                                      months and days (4 each, sign flipped)
//	0x50 text, 0x58 json, 0x60 bytes      payload with 0x00 escaped as 0x00 0xFF,
//	                                      terminated by 0x00 0x01
//	0x70 numeric                          order-preserving decimal key (numeric.go)
//	0x78 uuid                             16 bytes
//	0x7A jsonb                            order-preserving jsonb key (jsonb.go)
//	0x80..0x8C arrays of int64, float64,  the elements' encodings, then 0x00
//	  numeric, text, bool, date,          (array.go)
//	  timestamp, uuid, bytea, jsonb,
//	  timestamptz, json, record
//	0x90 record                           the fields' encodings, then 0x00
//	                                      (record.go)
//	0xF0 NULL                             no payload
//
// Rows are immutable once built: batches and arrangements share them
// between goroutines, and UnpackInto hands out strings aliasing them.
type Row []byte

const (
	tagFalse       = 0x10
	tagTrue        = 0x11
	tagInt64       = 0x20
	tagFloat64     = 0x30
	tagTimestamp   = 0x40
	tagDate        = 0x41
	tagTime        = 0x42
	tagTimestampTZ = 0x43
	tagInterval    = 0x44
	tagText        = 0x50
	tagJSON        = 0x58
	tagBytes       = 0x60
	tagNumeric     = 0x70
	tagUUID        = 0x78
	tagJSONB       = 0x7A
	tagArrayBase   = 0x80              // + the array type's place in arrayTypes
	tagJSONArray   = tagArrayBase + 11 // arrayTypes' place
	tagNull        = 0xF0

	escByte  = 0x00
	escZero  = 0xFF // 0x00 0xFF encodes a literal 0x00
	escEnd   = 0x01 // 0x00 0x01 ends the payload
	fixedLen = 9    // tag + 8 payload bytes
)

// ErrCorrupt is wrapped by every decoding error: the bytes are not the
// canonical encoding of any tuple.
var ErrCorrupt = errors.New("corrupt row encoding")

func tagOf(d Datum) byte {
	switch d.typ {
	case TypeBool:
		if d.bits == 1 {
			return tagTrue
		}
		return tagFalse
	case TypeInt64:
		return tagInt64
	case TypeFloat64:
		return tagFloat64
	case TypeTimestamp:
		return tagTimestamp
	case TypeDate:
		return tagDate
	case TypeTime:
		return tagTime
	case TypeTimestampTZ:
		return tagTimestampTZ
	case TypeInterval:
		return tagInterval
	case TypeText:
		return tagText
	case TypeJSON:
		return tagJSON
	case TypeBytes:
		return tagBytes
	case TypeNumeric:
		return tagNumeric
	case TypeUUID:
		return tagUUID
	case TypeJSONB:
		return tagJSONB
	case TypeInt64Array, TypeFloat64Array, TypeNumericArray, TypeTextArray, TypeBoolArray,
		TypeDateArray, TypeTimestampArray, TypeUUIDArray, TypeBytesArray, TypeJSONBArray, TypeTimestampTZArray, TypeJSONArray, TypeRecordArray:
		return arrayTag(d.typ)
	case TypeRecord:
		return tagRecord
	default:
		return tagNull
	}
}

// Pack encodes datums into a new row.
func Pack(datums ...Datum) Row {
	n := 0
	for _, d := range datums {
		n += encodedLen(d)
	}
	return AppendDatums(make(Row, 0, n), datums...)
}

// AppendDatums appends the encodings of datums to dst.
func AppendDatums(dst Row, datums ...Datum) Row {
	for _, d := range datums {
		dst = AppendDatum(dst, d)
	}
	return dst
}

func encodedLen(d Datum) int {
	switch d.typ {
	case TypeInt64, TypeFloat64, TypeTimestamp, TypeDate, TypeTime, TypeTimestampTZ:
		return fixedLen
	case TypeInterval:
		return 1 + intervalEncodedLen
	case TypeText, TypeBytes, TypeJSON:
		return 1 + len(d.str) + strings.Count(d.str, "\x00") + 2
	case TypeNumeric:
		if d.bits != 0 {
			return 1 + len(d.str) + 3
		}
		return 1 + len(d.str)
	case TypeUUID, TypeJSONB, TypeRecord, TypeInt64Array, TypeFloat64Array, TypeNumericArray, TypeTextArray, TypeBoolArray,
		TypeDateArray, TypeTimestampArray, TypeUUIDArray, TypeBytesArray, TypeJSONBArray, TypeTimestampTZArray, TypeJSONArray, TypeRecordArray:
		return 1 + len(d.str)
	default:
		return 1
	}
}

// AppendDatum appends the encoding of d to dst.
func AppendDatum(dst Row, d Datum) Row {
	tag := tagOf(d)
	dst = append(dst, tag)
	switch tag {
	case tagInt64, tagTimestamp, tagDate, tagTime, tagTimestampTZ:
		dst = binary.BigEndian.AppendUint64(dst, d.bits^(1<<63))
	case tagInterval:
		dst = appendInterval(dst, d.Interval())
	case tagFloat64:
		dst = binary.BigEndian.AppendUint64(dst, floatKey(d.bits))
	case tagText, tagBytes, tagJSON:
		s := d.str
		for {
			i := strings.IndexByte(s, escByte)
			if i < 0 {
				break
			}
			dst = append(dst, s[:i+1]...)
			dst = append(dst, escZero)
			s = s[i+1:]
		}
		dst = append(dst, s...)
		dst = append(dst, escByte, escEnd)
	case tagNumeric:
		// The numeric key is self-delimiting and order-preserving; an
		// excess display scale follows it as a suffix.
		dst = append(dst, d.str...)
		dst = appendNumericScale(dst, d)
	case tagUUID, tagJSONB:
		// The jsonb key is self-delimiting and order-preserving; a
		// uuid is fixed width.
		dst = append(dst, d.str...)
	default:
		if d.typ.IsArray() || d.typ == TypeRecord {
			dst = append(dst, d.str...) // terminated by arrayEnd
		}
	}
	return dst
}

func corrupt(off int, format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrCorrupt, off, fmt.Sprintf(format, args...))
}

// datumLen returns the encoded length of the datum at the start of b and
// whether its payload contains escapes.
func datumLen(b []byte, off int) (n int, escaped bool, err error) {
	if len(b) == 0 {
		return 0, false, corrupt(off, "empty datum")
	}
	switch b[0] {
	case tagFalse, tagTrue, tagNull:
		return 1, false, nil
	case tagInt64, tagFloat64, tagTimestamp, tagDate, tagTime, tagTimestampTZ:
		if len(b) < fixedLen {
			return 0, false, corrupt(off, "truncated fixed-width datum (tag %#x, %d bytes)", b[0], len(b))
		}
		v := binary.BigEndian.Uint64(b[1:fixedLen])
		switch b[0] {
		case tagFloat64:
			bits := floatBitsFromKey(v)
			if bits != canonicalFloatBits(math.Float64frombits(bits)) {
				return 0, false, corrupt(off, "non-canonical float64 %#x", bits)
			}
		case tagDate:
			if days := int64(v ^ (1 << 63)); !ValidDate(days) {
				return 0, false, corrupt(off, "date %d out of range", days)
			}
		case tagTime:
			if us := int64(v ^ (1 << 63)); us < 0 || us > MicrosPerDay {
				return 0, false, corrupt(off, "time %d out of range", us)
			}
		}
		return fixedLen, false, nil
	case tagInterval:
		if len(b) < 1+intervalEncodedLen {
			return 0, false, corrupt(off, "truncated interval (%d bytes)", len(b))
		}
		if _, ok := decodeInterval(b[1 : 1+intervalEncodedLen]); !ok {
			return 0, false, corrupt(off, "non-canonical interval")
		}
		return 1 + intervalEncodedLen, false, nil
	case tagNumeric:
		n, err := numericLen(b[1:], off+1)
		if err != nil {
			return 0, false, err
		}
		m, _, err := numericScaleLen(b[1+n:], off+1+n, b[1], keyMinScale(b[1:1+n]))
		return 1 + n + m, false, err
	case tagJSONB:
		n, err := jsonbLen(b[1:], off+1)
		return 1 + n, false, err
	case tagArrayBase, tagArrayBase + 1, tagArrayBase + 2, tagArrayBase + 3, tagArrayBase + 4,
		tagArrayBase + 5, tagArrayBase + 6, tagArrayBase + 7, tagArrayBase + 8, tagArrayBase + 9, tagArrayBase + 10, tagJSONArray, tagRecordArray:
		n, err := arrayLen(b[1:], off+1, arrayTypeOfTag(b[0]).ElemType())
		return 1 + n, false, err
	case tagRecord:
		n, err := recordLen(b[1:], off+1)
		return 1 + n, false, err
	case tagUUID:
		if len(b) < 1+uuidLen {
			return 0, false, corrupt(off, "truncated uuid (%d bytes)", len(b))
		}
		return 1 + uuidLen, false, nil
	case tagText, tagBytes, tagJSON:
		i := 1
		for {
			j := bytes.IndexByte(b[i:], escByte)
			if j < 0 || i+j+1 >= len(b) {
				return 0, false, corrupt(off, "unterminated string datum")
			}
			i += j + 1
			switch b[i] {
			case escEnd:
				return i + 1, escaped, nil
			case escZero:
				escaped = true
				i++
			default:
				return 0, false, corrupt(off+i, "invalid escape 0x00 %#x", b[i])
			}
		}
	default:
		return 0, false, corrupt(off, "unknown tag %#x", b[0])
	}
}

func floatBitsFromKey(k uint64) uint64 {
	if k>>63 == 1 {
		return k &^ (1 << 63)
	}
	return ^k
}

// decodeDatum decodes the datum occupying b[:n]. With alias set, text
// and bytes without escapes share b's memory.
func decodeDatum(b []byte, escaped, alias bool) Datum {
	switch b[0] {
	case tagFalse:
		return False
	case tagTrue:
		return True
	case tagInt64:
		return Datum{typ: TypeInt64, bits: binary.BigEndian.Uint64(b[1:]) ^ (1 << 63)}
	case tagTimestamp:
		return Datum{typ: TypeTimestamp, bits: binary.BigEndian.Uint64(b[1:]) ^ (1 << 63)}
	case tagDate:
		return Datum{typ: TypeDate, bits: binary.BigEndian.Uint64(b[1:]) ^ (1 << 63)}
	case tagTime:
		return Datum{typ: TypeTime, bits: binary.BigEndian.Uint64(b[1:]) ^ (1 << 63)}
	case tagTimestampTZ:
		return Datum{typ: TypeTimestampTZ, bits: binary.BigEndian.Uint64(b[1:]) ^ (1 << 63)}
	case tagInterval:
		iv, _ := decodeInterval(b[1:]) // datumLen verified it
		return IntervalDatum(iv)
	case tagFloat64:
		return Datum{typ: TypeFloat64, bits: floatBitsFromKey(binary.BigEndian.Uint64(b[1:]))}
	case tagNumeric:
		return decodeNumeric(b[1:])
	case tagUUID:
		return Datum{typ: TypeUUID, str: string(b[1:])}
	case tagJSONB:
		return Datum{typ: TypeJSONB, str: string(b[1:])}
	case tagArrayBase, tagArrayBase + 1, tagArrayBase + 2, tagArrayBase + 3, tagArrayBase + 4,
		tagArrayBase + 5, tagArrayBase + 6, tagArrayBase + 7, tagArrayBase + 8, tagArrayBase + 9, tagArrayBase + 10, tagJSONArray, tagRecordArray:
		return Datum{typ: arrayTypeOfTag(b[0]), str: string(b[1:])}
	case tagRecord:
		return Datum{typ: TypeRecord, str: string(b[1:])}
	case tagText, tagBytes, tagJSON:
		typ := TypeText
		switch b[0] {
		case tagBytes:
			typ = TypeBytes
		case tagJSON:
			typ = TypeJSON
		}
		p := b[1 : len(b)-2]
		var s string
		switch {
		case escaped:
			s = unescape(p)
		case alias && len(p) > 0:
			s = unsafe.String(&p[0], len(p))
		default:
			s = string(p)
		}
		return Datum{typ: typ, str: s}
	default:
		return Null()
	}
}

func unescape(p []byte) string {
	out := make([]byte, 0, len(p))
	for {
		i := bytes.IndexByte(p, escByte)
		if i < 0 {
			break
		}
		out = append(out, p[:i+1]...)
		p = p[i+2:] // skip the 0xFF that datumLen verified
	}
	out = append(out, p...)
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// Unpack decodes every datum of r. Text and bytes payloads are copied, so
// the result does not alias r.
func (r Row) Unpack() ([]Datum, error) {
	return r.unpack(nil, false)
}

// UnpackInto decodes r into dst[:0], reusing its capacity, and returns the
// extended slice. It does not allocate when dst is large enough and no
// string payload contains a 0x00 byte: text and bytes datums then ALIAS
// r's memory, which is sound because rows are immutable; a caller that
// reuses r's buffer must copy the datums (or use Unpack) first.
func (r Row) UnpackInto(dst []Datum) ([]Datum, error) {
	return r.unpack(dst[:0], true)
}

func (r Row) unpack(dst []Datum, alias bool) ([]Datum, error) {
	off := 0
	for off < len(r) {
		n, esc, err := datumLen(r[off:], off)
		if err != nil {
			return dst, fmt.Errorf("unpack column %d: %w", len(dst), err)
		}
		dst = append(dst, decodeDatum(r[off:off+n], esc, alias))
		off += n
	}
	return dst, nil
}

// Validate reports whether r is a canonical encoding.
func (r Row) Validate() error {
	off := 0
	for col := 0; off < len(r); col++ {
		n, _, err := datumLen(r[off:], off)
		if err != nil {
			return fmt.Errorf("column %d: %w", col, err)
		}
		off += n
	}
	return nil
}

// Arity returns the number of datums in r. For a corrupt row it returns
// the number of well-formed datums before the corruption; use Validate to
// tell the two apart.
func (r Row) Arity() int {
	off, n := 0, 0
	for off < len(r) {
		l, _, err := datumLen(r[off:], off)
		if err != nil {
			return n
		}
		off += l
		n++
	}
	return n
}

// Column decodes datum i of r, skipping the ones before it without
// decoding them. The result aliases r as in UnpackInto.
func (r Row) Column(i int) (Datum, error) {
	off, err := r.columnOffset(i)
	if err != nil {
		return Null(), err
	}
	n, esc, err := datumLen(r[off:], off)
	if err != nil {
		return Null(), fmt.Errorf("column %d: %w", i, err)
	}
	return decodeDatum(r[off:off+n], esc, true), nil
}

func (r Row) columnOffset(i int) (int, error) {
	if i < 0 {
		return 0, fmt.Errorf("column %d: negative index", i)
	}
	off := 0
	for c := 0; c < i; c++ {
		if off >= len(r) {
			return 0, fmt.Errorf("column %d: %w: row has %d columns", i, ErrArity, c)
		}
		n, _, err := datumLen(r[off:], off)
		if err != nil {
			return 0, fmt.Errorf("column %d: %w", c, err)
		}
		off += n
	}
	if off >= len(r) {
		return 0, fmt.Errorf("column %d: %w: row has %d columns", i, ErrArity, i)
	}
	return off, nil
}

// Spans appends to dst the end offset of every datum of r (datum i spans
// [ends[i-1], ends[i])) so that callers can cut columns without decoding.
func (r Row) Spans(dst []int) ([]int, error) {
	off := 0
	for off < len(r) {
		n, _, err := datumLen(r[off:], off)
		if err != nil {
			return dst, fmt.Errorf("column %d: %w", len(dst), err)
		}
		off += n
		dst = append(dst, off)
	}
	return dst, nil
}

// Project returns a new row holding columns cols of r, in that order
// (columns may repeat). It copies encoded bytes without decoding them.
func Project(r Row, cols []int) (Row, error) {
	return AppendProject(nil, r, cols)
}

// AppendProject appends columns cols of r to dst.
func AppendProject(dst Row, r Row, cols []int) (Row, error) {
	var buf [16]int
	ends, err := r.Spans(buf[:0])
	if err != nil {
		return dst, fmt.Errorf("project: %w", err)
	}
	for _, c := range cols {
		if c < 0 || c >= len(ends) {
			return dst, fmt.Errorf("project column %d: %w: row has %d columns", c, ErrArity, len(ends))
		}
		start := 0
		if c > 0 {
			start = ends[c-1]
		}
		dst = append(dst, r[start:ends[c]]...)
	}
	return dst, nil
}

// String renders r for debugging as "(1, 'a', NULL)"; a corrupt row
// renders its valid prefix followed by the error.
func (r Row) String() string {
	ds, err := r.Unpack()
	var sb strings.Builder
	sb.WriteByte('(')
	for i, d := range ds {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(d.SQLLiteral())
	}
	if err != nil {
		if len(ds) > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("!" + err.Error())
	}
	sb.WriteByte(')')
	return sb.String()
}
