package row

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// PostgreSQL's limits on a numeric value: up to 131072 digits before the
// decimal point and 16383 after it.
const (
	NumericMaxWeight = 131072
	NumericMaxScale  = 16383
)

// ErrNumericOverflow is returned for a numeric value outside PostgreSQL's
// numeric range; the SQL layer reports it as 22003.
var ErrNumericOverflow = errors.New("value overflows numeric format")

// The class byte that starts a numeric key, in value order. Infinities
// and NaN sort as in PostgreSQL: -Infinity < numbers < Infinity < NaN.
const (
	numNegInf = 0x01
	numNeg    = 0x02
	numZero   = 0x03
	numPos    = 0x04
	numPosInf = 0x05
	numNaN    = 0x06
)

// Numeric returns a numeric datum holding x's value. Trailing fractional
// zeros are dropped (1.50 and 1.5 are one datum, see doc.go), -0 is 0,
// and a scale beyond PostgreSQL's 16383 digits is rounded half away from
// zero; a value beyond PostgreSQL's range is ErrNumericOverflow.
func Numeric(x *apd.Decimal) (Datum, error) {
	switch x.Form {
	case apd.NaN, apd.NaNSignaling:
		return Datum{typ: TypeNumeric, str: string([]byte{numNaN})}, nil
	case apd.Infinite:
		if x.Negative {
			return Datum{typ: TypeNumeric, str: string([]byte{numNegInf})}, nil
		}
		return Datum{typ: TypeNumeric, str: string([]byte{numPosInf})}, nil
	}
	if x.IsZero() {
		return Datum{typ: TypeNumeric, str: string([]byte{numZero})}, nil
	}
	v := new(apd.Decimal)
	if -int64(x.Exponent) > NumericMaxScale {
		ctx := apd.BaseContext.WithPrecision(uint32(x.NumDigits()) + 1)
		ctx.Rounding = apd.RoundHalfUp
		if _, err := ctx.Quantize(v, x, -NumericMaxScale); err != nil {
			return Null(), fmt.Errorf("numeric: %w", err)
		}
		if v.IsZero() {
			return Datum{typ: TypeNumeric, str: string([]byte{numZero})}, nil
		}
	} else {
		v.Set(x)
	}
	v.Reduce(v)
	digits := v.Coeff.String()
	weight := int64(len(digits)) + int64(v.Exponent) // value = 0.digits × 10^weight
	if weight > NumericMaxWeight {
		return Null(), ErrNumericOverflow
	}
	return Datum{typ: TypeNumeric, str: numericKey(v.Negative, int32(weight), digits)}, nil
}

// numericKey builds the order-preserving key of a non-zero finite value
// 0.digits × 10^weight: the class byte, the weight as a big-endian int32
// with its sign bit flipped, one byte d+1 per digit and a 0x00
// terminator; for a negative value every byte after the class is
// complemented, which reverses the order of these prefix-free strings.
func numericKey(neg bool, weight int32, digits string) string {
	b := make([]byte, 0, 1+4+len(digits)+1)
	class := byte(numPos)
	if neg {
		class = numNeg
	}
	b = append(b, class)
	b = binary.BigEndian.AppendUint32(b, uint32(weight)^(1<<31))
	for i := 0; i < len(digits); i++ {
		b = append(b, digits[i]-'0'+1)
	}
	b = append(b, 0)
	if neg {
		for i := 1; i < len(b); i++ {
			b[i] = ^b[i]
		}
	}
	return string(b)
}

// MustNumeric parses s as a numeric datum and panics on error; for tests
// and constants.
func MustNumeric(s string) Datum {
	x, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	d, err := Numeric(x)
	if err != nil {
		panic(err)
	}
	return d
}

// NumericFromInt64 returns i as a numeric datum.
func NumericFromInt64(i int64) Datum {
	d, _ := Numeric(apd.New(i, 0)) // every int64 is in range
	return d
}

// IsNaN reports whether d is a float8 or numeric NaN (which sorts after
// every other number in PostgreSQL's order).
func (d Datum) IsNaN() bool {
	switch d.Type() {
	case TypeFloat64:
		return math.IsNaN(d.Float64())
	case TypeNumeric:
		return d.Decimal().Form == apd.NaN
	}
	return false
}

// Decimal returns the value of a numeric datum (NaN for other types).
func (d Datum) Decimal() *apd.Decimal {
	out := new(apd.Decimal)
	if d.typ != TypeNumeric || len(d.str) == 0 {
		out.Form = apd.NaN
		return out
	}
	switch d.str[0] {
	case numNaN:
		out.Form = apd.NaN
	case numPosInf, numNegInf:
		out.Form = apd.Infinite
		out.Negative = d.str[0] == numNegInf
	case numZero:
	default:
		neg := d.str[0] == numNeg
		b := []byte(d.str[1:])
		if neg {
			for i := range b {
				b[i] = ^b[i]
			}
		}
		weight := int32(binary.BigEndian.Uint32(b[:4]) ^ (1 << 31))
		digits := b[4 : len(b)-1]
		for i := range digits {
			digits[i] = digits[i] - 1 + '0'
		}
		out.Coeff.SetString(string(digits), 10)
		out.Exponent = weight - int32(len(digits))
		out.Negative = neg
	}
	return out
}

// NumericScale returns the display scale of a numeric datum (PostgreSQL's
// dscale): its key's fractional digits plus the excess it carries; 0 for
// NaN, infinities and other types.
func (d Datum) NumericScale() int {
	if d.typ != TypeNumeric {
		return 0
	}
	return d.numericMinScale() + int(d.bits)
}

// numericMinScale is the number of fractional digits of the key (the
// value without trailing zeros); 0 for NaN and infinities.
func (d Datum) numericMinScale() int { return keyMinScale(d.str) }

// keyMinScale is the number of fractional digits of a whole numeric key.
func keyMinScale[S ~string | ~[]byte](key S) int {
	if len(key) < 6 || (key[0] != numNeg && key[0] != numPos) {
		return 0
	}
	flip := byte(0)
	if key[0] == numNeg {
		flip = 0xFF
	}
	var wb [4]byte
	for j := range wb {
		wb[j] = key[1+j] ^ flip
	}
	weight := int(int32(binary.BigEndian.Uint32(wb[:]) ^ (1 << 31)))
	digits := len(key) - 6 // class, weight, terminator
	return max(digits-weight, 0)
}

// decodeNumeric decodes a validated numeric payload: its key and the
// scale suffix if one follows.
func decodeNumeric(b []byte) Datum {
	n := 1
	if b[0] == numNeg || b[0] == numPos {
		term := byte(0)
		if b[0] == numNeg {
			term = 0xFF
		}
		n = 5 + bytes.IndexByte(b[5:], term) + 1
	}
	d := Datum{typ: TypeNumeric, str: string(b[:n])}
	if len(b) >= n+3 {
		d.bits = uint64(binary.BigEndian.Uint16(b[n+1 : n+3]))
	}
	return d
}

// NumericScaled returns a numeric datum holding x at display scale scale,
// as PostgreSQL's numeric_in and apply_typmod give it: x rounded half away
// from zero to scale fractional digits, or padded with zeros. A negative
// scale is 0 and a scale above NumericMaxScale is NumericMaxScale. NaN and
// infinities have no scale.
func NumericScaled(x *apd.Decimal, scale int) (Datum, error) {
	scale = min(max(scale, 0), NumericMaxScale)
	if x.Form == apd.Finite && -int64(x.Exponent) > int64(scale) {
		v := new(apd.Decimal)
		ctx := apd.BaseContext.WithPrecision(uint32(x.NumDigits()) + 1)
		ctx.Rounding = apd.RoundHalfUp
		if _, err := ctx.Quantize(v, x, int32(-scale)); err != nil {
			return Null(), fmt.Errorf("numeric: %w", err)
		}
		x = v
	}
	d, err := Numeric(x)
	if err != nil || x.Form != apd.Finite {
		return d, err
	}
	d.bits = uint64(scale - d.numericMinScale())
	return d, nil
}

// NumericExact returns a numeric datum holding x at the scale its exponent
// gives (1.50 has scale 2, 1E+2 scale 0): apd's + - and * results carry
// PostgreSQL's result scales this way.
func NumericExact(x *apd.Decimal) (Datum, error) {
	return NumericScaled(x, int(max(-int64(x.Exponent), 0)))
}

// NumericKey returns d at its minimal display scale (the value alone), so
// that equal values are equal datums and equal bytes: GROUP BY, DISTINCT,
// joins and unique keys compare numerics through it. Other datums are
// returned as they are.
func (d Datum) NumericKey() Datum {
	switch {
	case d.typ == TypeNumeric:
		d.bits = 0
	case d.typ == TypeNumericArray && strings.IndexByte(d.str, numericScaleMark) >= 0:
		elems := d.ArrayElems()
		for i := range elems {
			elems[i] = elems[i].NumericKey()
		}
		if a, err := Array(TypeNumericArray, elems); err == nil {
			return a
		}
	}
	return d
}

// NumericKeyRow returns r with every numeric (and numeric array element)
// at its minimal display scale: the row as a key under SQL equality. It
// is r itself when no byte of r is the scale suffix's mark, found without
// decoding; a corrupt row is returned as it is.
func NumericKeyRow(r Row) Row {
	if bytes.IndexByte(r, numericScaleMark) < 0 {
		return r
	}
	ds, err := r.Unpack()
	if err != nil {
		return r
	}
	changed := false
	for i, d := range ds {
		if k := d.NumericKey(); k != d {
			ds[i], changed = k, true
		}
	}
	if !changed {
		return r
	}
	return Pack(ds...)
}

// NumericKeys replaces each datum of ds by its NumericKey, in place.
func NumericKeys(ds []Datum) []Datum {
	for i := range ds {
		ds[i] = ds[i].NumericKey()
	}
	return ds
}

// WithNumericScale returns a numeric datum at display scale s (rounded
// or padded as NumericScaled does); other datums are returned as they
// are.
func (d Datum) WithNumericScale(s int) (Datum, error) {
	if d.typ != TypeNumeric {
		return d, nil
	}
	return NumericScaled(d.Decimal(), s)
}

// DecimalDisplay returns the value of a numeric datum with its exponent
// at minus its display scale (1.50 as 150E-2, 100 as 100E0), so that apd's addition,
// subtraction and multiplication give PostgreSQL's result scales.
func (d Datum) DecimalDisplay() *apd.Decimal {
	x := d.Decimal()
	s := int32(d.NumericScale())
	if x.Form != apd.Finite || x.Exponent == -s {
		return x
	}
	if x.Coeff.Sign() != 0 { // 1E+2 at scale 0 is 100E0
		x.Coeff.Mul(&x.Coeff, new(apd.BigInt).Exp(apd.NewBigInt(10), apd.NewBigInt(int64(x.Exponent+s)), nil))
	}
	x.Exponent = -s
	return x
}

// numericLen returns the length of the numeric key at the start of b
// (after the tag) and checks that it is canonical.
func numericLen(b []byte, off int) (int, error) {
	if len(b) == 0 {
		return 0, corrupt(off, "truncated numeric")
	}
	switch b[0] {
	case numNegInf, numZero, numPosInf, numNaN:
		return 1, nil
	case numNeg, numPos:
	default:
		return 0, corrupt(off, "invalid numeric class %#x", b[0])
	}
	flip := byte(0)
	if b[0] == numNeg {
		flip = 0xFF
	}
	if len(b) < 5 {
		return 0, corrupt(off, "truncated numeric weight")
	}
	var wb [4]byte
	for j := range wb {
		wb[j] = b[1+j] ^ flip
	}
	weight := int64(int32(binary.BigEndian.Uint32(wb[:]) ^ (1 << 31)))
	i := 5
	for ; i < len(b) && b[i]^flip != 0; i++ {
		if c := b[i] ^ flip; c > 10 {
			return 0, corrupt(off+i, "invalid numeric digit %#x", c)
		}
	}
	if i >= len(b) {
		return 0, corrupt(off, "unterminated numeric")
	}
	n := i - 5
	switch {
	case n == 0:
		return 0, corrupt(off, "numeric without digits")
	case b[5]^flip == 1:
		return 0, corrupt(off, "numeric with a leading zero digit")
	case b[i-1]^flip == 1:
		return 0, corrupt(off, "numeric with a trailing zero digit")
	case weight > NumericMaxWeight || weight-int64(n) < -NumericMaxScale:
		return 0, corrupt(off, "numeric out of range (weight %d, %d digits)", weight, n)
	}
	return i + 1, nil
}

// numericScaleMark starts the suffix that carries a numeric's excess
// display scale in the row encoding: the mark and the excess as 2 bytes
// big endian, never zero (docs/design/numeric-scale.md). Every datum tag
// and an array's end are below it, so a key without the suffix sorts
// before the same key with one.
const numericScaleMark = 0xF8

// numericScaleLen returns the length of the scale suffix at the start of
// b (0 when there is none) and the excess it carries, checking that it is
// canonical for a key of minScale fractional digits.
func numericScaleLen(b []byte, off int, class byte, minScale int) (int, uint64, error) {
	if len(b) == 0 || b[0] != numericScaleMark {
		return 0, 0, nil
	}
	if len(b) < 3 {
		return 0, 0, corrupt(off, "truncated numeric scale")
	}
	excess := int(binary.BigEndian.Uint16(b[1:3]))
	switch {
	case class == numNaN || class == numPosInf || class == numNegInf:
		return 0, 0, corrupt(off, "numeric scale on a non-finite value")
	case excess == 0:
		return 0, 0, corrupt(off, "numeric scale suffix without excess")
	case minScale+excess > NumericMaxScale:
		return 0, 0, corrupt(off, "numeric scale %d above %d", minScale+excess, NumericMaxScale)
	}
	return 3, uint64(excess), nil
}

// appendNumericScale appends the scale suffix of d, if it has one.
func appendNumericScale(dst []byte, d Datum) []byte {
	if d.bits == 0 {
		return dst
	}
	dst = append(dst, numericScaleMark)
	return binary.BigEndian.AppendUint16(dst, uint16(d.bits))
}

// AppendNumeric formats a numeric datum as PostgreSQL's numeric_out does
// at display scale max(scale, the datum's own): NaN, Infinity,
// -Infinity, or positional notation.
func AppendNumeric(dst []byte, d Datum, scale int) []byte {
	scale = max(scale, d.NumericScale())
	x := d.Decimal()
	switch x.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(dst, "NaN"...)
	case apd.Infinite:
		if x.Negative {
			return append(dst, "-Infinity"...)
		}
		return append(dst, "Infinity"...)
	}
	dst = append(dst, x.Text('f')...)
	if have := int(max(-x.Exponent, 0)); have < scale {
		if have == 0 {
			dst = append(dst, '.')
		}
		for range scale - have {
			dst = append(dst, '0')
		}
	}
	return dst
}

// uuidLen is the payload size of a uuid.
const uuidLen = 16

// UUID returns a uuid datum.
func UUID(u [16]byte) Datum { return Datum{typ: TypeUUID, str: string(u[:])} }

// UUID returns the payload of a uuid datum; zero for other types.
func (d Datum) UUID() [16]byte {
	var u [16]byte
	if d.typ == TypeUUID {
		copy(u[:], d.str)
	}
	return u
}

// appendUUID formats u as PostgreSQL does: lower-case hex in 8-4-4-4-12
// groups.
func appendUUID(dst []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexd[s[i]>>4], hexd[s[i]&0xF])
	}
	return dst
}

// ParseUUID parses a uuid in PostgreSQL's accepted input forms: 32 hex
// digits, optionally in braces, optionally with a hyphen after any group
// of four digits.
func ParseUUID(s string) ([16]byte, error) {
	var u [16]byte
	bad := fmt.Errorf("invalid uuid %s", strconv.Quote(s))
	t := s
	if len(t) >= 2 && t[0] == '{' && t[len(t)-1] == '}' {
		t = t[1 : len(t)-1]
	}
	n := 0
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == '-' {
			// PostgreSQL allows a hyphen after each group of four digits.
			if n == 0 || n%4 != 0 || n == 32 || i+1 == len(t) || t[i+1] == '-' {
				return u, bad
			}
			continue
		}
		v, ok := hexVal(c)
		if !ok || n >= 32 {
			return u, bad
		}
		u[n/2] |= v << (4 * (1 - n%2))
		n++
	}
	if n != 32 {
		return u, bad
	}
	return u, nil
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
