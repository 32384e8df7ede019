package row

import (
	"fmt"
	"strings"
	"time"
)

// Records (PostgreSQL's anonymous record, OID 2249, and record[], OID
// 2287): the values ROW(a, b) builds, which WITH RECURSIVE's SEARCH and
// CYCLE clauses keep in their sequence and path columns.
//
// A record datum holds its fields' row encodings followed by a 0x00
// terminator, as an array holds its elements, so its bytes order as
// PostgreSQL's record_cmp orders records of one shape: field by field,
// a NULL field after every value (tagNull is the largest tag). Two
// records are equal bytes exactly when record_eq calls them equal, NULL
// fields matching NULL fields (numeric fields compare with their display
// scale, as everywhere in the encoding). A field is never a record or an
// array of records, so decoding recurses at most record[] → record →
// array → scalar. The field types are not part of the type: a record
// column's values carry them in their fields' tags.
const (
	TypeRecord      Type = 27
	TypeRecordArray Type = 28
)

// tagRecord is a record's tag; an array of records has arrayTag's
// tagRecordArray.
const (
	tagRecord      = 0x90
	tagRecordArray = tagArrayBase + 12 // arrayTypes' place
)

// Record returns the record datum whose fields are fields (NULLs
// allowed); a field may not itself be a record or an array of records.
func Record(fields []Datum) (Datum, error) {
	n := 1
	for i, f := range fields {
		if f.typ == TypeRecord || f.typ == TypeRecordArray {
			return Null(), fmt.Errorf("record field %d: nested records are not supported", i+1)
		}
		n += encodedLen(f)
	}
	b := AppendDatums(make(Row, 0, n), fields...)
	b = append(b, arrayEnd)
	return Datum{typ: TypeRecord, str: string(b)}, nil
}

// RecordFields decodes the fields of a record datum; nil for other
// types.
func (d Datum) RecordFields() []Datum {
	if d.typ != TypeRecord || len(d.str) == 0 {
		return nil
	}
	fields, _ := Row(d.str[:len(d.str)-1]).Unpack() // validated when built or decoded
	return fields
}

// recordLen returns the length of a record payload (after its tag).
func recordLen(b []byte, off int) (int, error) {
	i := 0
	for {
		if i >= len(b) {
			return 0, corrupt(off+i, "unterminated record")
		}
		if b[i] == arrayEnd {
			return i + 1, nil
		}
		// Checked before datumLen, so decoding never nests records.
		if b[i] == tagRecord || b[i] == tagRecordArray {
			return 0, corrupt(off+i, "record field is a record")
		}
		n, _, err := datumLen(b[i:], off+i)
		if err != nil {
			return 0, err
		}
		i += n
	}
}

// appendRecordTextIn appends record_out's form, (1,,"a b"): a NULL field
// is empty, a field that is empty or holds a quote, backslash,
// parenthesis, comma or white space is quoted with quotes and
// backslashes doubled.
func appendRecordTextIn(dst []byte, d Datum, loc *time.Location) []byte {
	dst = append(dst, '(')
	for i, f := range d.RecordFields() {
		if i > 0 {
			dst = append(dst, ',')
		}
		if f.IsNull() {
			continue
		}
		s := string(AppendTextIn(nil, f, loc))
		if !recordNeedsQuotes(s) {
			dst = append(dst, s...)
			continue
		}
		dst = append(dst, '"')
		for j := 0; j < len(s); j++ {
			if s[j] == '"' || s[j] == '\\' {
				dst = append(dst, s[j])
			}
			dst = append(dst, s[j])
		}
		dst = append(dst, '"')
	}
	return append(dst, ')')
}

func recordNeedsQuotes(s string) bool {
	return s == "" || strings.ContainsAny(s, "\"\\(),") || strings.ContainsAny(s, " \t\n\r\v\f")
}
