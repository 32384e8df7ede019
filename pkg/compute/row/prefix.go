package row

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
)

// Reading a prefix of a row. A reader that needs a few columns of rows it
// trusts to be well formed (an index's rows, built by this package's
// encoder) need not walk a row to its end: UnpackUsed and ColumnSpan stop
// at the last column asked for and step over the columns before it by
// their length. Stepping checks only what finding the next column needs:
// a fixed-width datum's payload (a float's canonical form, a date's range)
// is not looked at, and nothing after the last column read is. A row
// corrupt there is reported by Unpack or Validate, not by these. Like
// every decoder here, they never panic: arbitrary bytes give an error
// wrapping ErrCorrupt (or ErrArity when the row is too short).

// skipLen returns the encoded length of the datum at the start of b
// without checking a fixed-width payload.
func skipLen(b []byte, off int) (int, error) {
	if len(b) > 0 {
		switch b[0] {
		case tagFalse, tagTrue, tagNull:
			return 1, nil
		case tagInt64, tagFloat64, tagTimestamp, tagDate, tagTime, tagTimestampTZ:
			if len(b) >= fixedLen {
				return fixedLen, nil
			}
		case tagUUID:
			if len(b) >= 1+uuidLen {
				return 1 + uuidLen, nil
			}
		case tagInterval:
			if len(b) >= 1+intervalEncodedLen {
				return 1 + intervalEncodedLen, nil
			}
		}
	}
	n, _, err := datumLen(b, off) // variable width, or truncated: the full check reports it
	return n, err
}

// UnpackUsed decodes into dst[:0] a row of arity columns, of which only
// those with used[i] set are decoded; the others are NULL, so positions
// (and the arity) are kept. The row is read only up to the end of the
// last used column below arity (see the comment above); used entries at
// or past arity are ignored. Decoded text and bytes datums alias r as in
// UnpackInto, and nothing is allocated when dst has room for arity datums.
func (r Row) UnpackUsed(dst []Datum, used []bool, arity int) ([]Datum, error) {
	dst = dst[:0]
	last := min(arity, len(used)) - 1
	for last >= 0 && !used[last] {
		last--
	}
	off := 0
	for i := 0; i <= last; i++ {
		if off >= len(r) {
			return dst, fmt.Errorf("unpack column %d: %w: row has %d columns", last, ErrArity, i)
		}
		if !used[i] {
			n, err := skipLen(r[off:], off)
			if err != nil {
				return dst, fmt.Errorf("unpack column %d: %w", i, err)
			}
			dst = append(dst, Null())
			off += n
			continue
		}
		n, esc, err := datumLen(r[off:], off)
		if err != nil {
			return dst, fmt.Errorf("unpack column %d: %w", i, err)
		}
		dst = append(dst, decodeDatum(r[off:off+n], esc, true))
		off += n
	}
	for len(dst) < arity {
		dst = append(dst, Null())
	}
	return dst, nil
}

// ColumnSpan returns where column i of r lies, r[start:end], stepping over
// the columns before it as UnpackUsed does; column i itself is checked.
func (r Row) ColumnSpan(i int) (start, end int, err error) {
	if i < 0 {
		return 0, 0, fmt.Errorf("column %d: negative index", i)
	}
	off := 0
	for c := 0; c < i; c++ {
		if off >= len(r) {
			return 0, 0, fmt.Errorf("column %d: %w: row has %d columns", i, ErrArity, c)
		}
		n, err := skipLen(r[off:], off)
		if err != nil {
			return 0, 0, fmt.Errorf("column %d: %w", c, err)
		}
		off += n
	}
	if off >= len(r) {
		return 0, 0, fmt.Errorf("column %d: %w: row has %d columns", i, ErrArity, i)
	}
	if r[off] == tagInt64 && len(r)-off >= fixedLen {
		return off, off + fixedLen, nil // every payload is a valid int64
	}
	n, _, err := datumLen(r[off:], off)
	if err != nil {
		return 0, 0, fmt.Errorf("column %d: %w", i, err)
	}
	return off, off + n, nil
}

// EncodedIsNull reports whether the encoded datum d is NULL.
func EncodedIsNull(d []byte) bool { return len(d) == 1 && d[0] == tagNull }

// CompareEncoded compares two encoded datums of one type without decoding
// them: the result is Compare's on the decoded datums, since the encoding
// preserves order. ok is false when a and b are not of one type (or not
// datums at all), and the bytes then say nothing about SQL's comparison.
func CompareEncoded(a, b []byte) (c int, ok bool) {
	if len(a) == fixedLen && len(b) == fixedLen && a[0] == tagInt64 && b[0] == tagInt64 {
		// The common case, without a call: big-endian payloads compare
		// as their bytes do.
		return cmp.Compare(binary.BigEndian.Uint64(a[1:]), binary.BigEndian.Uint64(b[1:])), true
	}
	if len(a) == 0 || len(b) == 0 || (a[0] != b[0] && !(isBoolTag(a[0]) && isBoolTag(b[0]))) {
		return 0, false
	}
	return bytes.Compare(a, b), true
}

func isBoolTag(t byte) bool { return t == tagFalse || t == tagTrue }
