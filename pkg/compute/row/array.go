package row

import (
	"fmt"
	"strings"
	"time"
)

// The one-dimensional array types, one per element type. An array datum
// holds its elements' row encodings followed by a 0x00 terminator, so
// its bytes order as PostgreSQL orders arrays: element by element (NULL
// elements after every value, since tagNull is the largest tag), then a
// shorter array before a longer one with the same prefix (0x00 is below
// every tag). Arrays of integers of every width hold int64 elements.
const (
	TypeInt64Array     Type = 15
	TypeFloat64Array   Type = 16
	TypeNumericArray   Type = 17
	TypeTextArray      Type = 18
	TypeBoolArray      Type = 19
	TypeDateArray      Type = 20
	TypeTimestampArray Type = 21
	TypeUUIDArray      Type = 22
	TypeBytesArray     Type = 23
	TypeJSONBArray     Type = 24
	// TypeTimestampTZArray holds timestamptz elements, shown in the
	// session's time zone (AppendTextIn).
	TypeTimestampTZArray Type = 25
	// TypeJSONArray holds json elements (their text as written). Like
	// json it has no equality or order in SQL.
	TypeJSONArray Type = 29
)

// arrayTypes are the array types in type order (their tags follow it).
var arrayTypes = [...]Type{TypeInt64Array, TypeFloat64Array, TypeNumericArray, TypeTextArray, TypeBoolArray,
	TypeDateArray, TypeTimestampArray, TypeUUIDArray, TypeBytesArray, TypeJSONBArray, TypeTimestampTZArray, TypeJSONArray, TypeRecordArray}

const arrayEnd = 0x00

// ElemType returns the element type of an array type and TypeInvalid for
// every other type.
func (t Type) ElemType() Type {
	switch t {
	case TypeInt64Array:
		return TypeInt64
	case TypeFloat64Array:
		return TypeFloat64
	case TypeNumericArray:
		return TypeNumeric
	case TypeTextArray:
		return TypeText
	case TypeBoolArray:
		return TypeBool
	case TypeDateArray:
		return TypeDate
	case TypeTimestampArray:
		return TypeTimestamp
	case TypeUUIDArray:
		return TypeUUID
	case TypeBytesArray:
		return TypeBytes
	case TypeJSONBArray:
		return TypeJSONB
	case TypeTimestampTZArray:
		return TypeTimestampTZ
	case TypeRecordArray:
		return TypeRecord
	case TypeJSONArray:
		return TypeJSON
	}
	return TypeInvalid
}

// IsArray reports whether t is an array type.
func (t Type) IsArray() bool { return t.ElemType() != TypeInvalid }

// ArrayOf returns the array type whose elements have type elem; false
// when arrays of elem are not supported.
func ArrayOf(elem Type) (Type, bool) {
	for _, t := range arrayTypes {
		if t.ElemType() == elem {
			return t, true
		}
	}
	return TypeInvalid, false
}

// Array returns an array datum of type t holding elems, each NULL or of
// t's element type.
func Array(t Type, elems []Datum) (Datum, error) {
	et := t.ElemType()
	if et == TypeInvalid {
		return Null(), fmt.Errorf("array of type %s: not an array type", t)
	}
	n := 1
	for i, e := range elems {
		if !e.IsNull() && e.Type() != et {
			return Null(), fmt.Errorf("array of type %s: element %d has type %s", t, i+1, e.Type())
		}
		n += encodedLen(e)
	}
	b := AppendDatums(make(Row, 0, n), elems...)
	b = append(b, arrayEnd)
	return Datum{typ: t, str: string(b)}, nil
}

// ArrayElems decodes the elements of an array datum; nil for other
// types.
func (d Datum) ArrayElems() []Datum {
	if !d.typ.IsArray() || len(d.str) == 0 {
		return nil
	}
	elems, _ := Row(d.str[:len(d.str)-1]).Unpack() // validated when built or decoded
	return elems
}

// ArrayLen returns the number of elements of an array datum.
func (d Datum) ArrayLen() int {
	if !d.typ.IsArray() || len(d.str) == 0 {
		return 0
	}
	return Row(d.str[:len(d.str)-1]).Arity()
}

// arrayLen returns the length of an array payload (after its tag) whose
// elements must be NULL or of type et.
func arrayLen(b []byte, off int, et Type) (int, error) {
	i := 0
	for {
		if i >= len(b) {
			return 0, corrupt(off+i, "unterminated array")
		}
		if b[i] == arrayEnd {
			return i + 1, nil
		}
		// The tag first: an element is never an array, so decoding
		// does not recurse.
		if t := b[i]; !elemTagOK(t, et) {
			return 0, corrupt(off+i, "array element tag %#x is not of type %s", t, et)
		}
		n, _, err := datumLen(b[i:], off+i)
		if err != nil {
			return 0, err
		}
		i += n
	}
}

// arrayTag returns the encoding tag of array type t: tagArrayBase plus
// its place in arrayTypes (json[] and record[], numbered after the
// scalar types, come last).
func arrayTag(t Type) byte {
	switch t {
	case TypeJSONArray:
		return tagJSONArray
	case TypeRecordArray:
		return tagRecordArray
	}
	return tagArrayBase + byte(t-TypeInt64Array)
}

// arrayTypeOfTag returns the array type of tag.
func arrayTypeOfTag(tag byte) Type { return arrayTypes[tag-tagArrayBase] }

// appendArrayText appends array_out's form: {1,NULL,"a b"}
// (timestamptz elements in UTC).
func appendArrayText(dst []byte, d Datum) []byte { return appendArrayTextIn(dst, d, time.UTC) }

// appendArrayTextIn appends array_out's form with timestamptz elements
// shown in loc.
func appendArrayTextIn(dst []byte, d Datum, loc *time.Location) []byte {
	dst = append(dst, '{')
	for i, e := range d.ArrayElems() {
		if i > 0 {
			dst = append(dst, ',')
		}
		if e.IsNull() {
			dst = append(dst, "NULL"...)
			continue
		}
		s := string(AppendTextIn(nil, e, loc))
		if !arrayNeedsQuotes(s) {
			dst = append(dst, s...)
			continue
		}
		dst = append(dst, '"')
		for j := 0; j < len(s); j++ {
			if s[j] == '"' || s[j] == '\\' {
				dst = append(dst, '\\')
			}
			dst = append(dst, s[j])
		}
		dst = append(dst, '"')
	}
	return append(dst, '}')
}

func arrayNeedsQuotes(s string) bool {
	if s == "" || strings.EqualFold(s, "NULL") {
		return true
	}
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			return true
		}
	}
	return false
}

// ErrArrayMultiDim is returned by ParseArrayText for a nested array.
var ErrArrayMultiDim = fmt.Errorf("multidimensional arrays are not supported")

// ArrayTextElem is one element of an array's text form: its text, or
// NULL.
type ArrayTextElem struct {
	Text string
	Null bool
}

// ParseArrayText splits the text form of a one-dimensional array
// ("{1,NULL,\"a b\"}") into its elements as array_in does: whitespace
// around unquoted elements is dropped, backslash escapes one character,
// an unquoted NULL (any case) is NULL. The error describes the first
// malformation; a nested array gives ErrArrayMultiDim.
func ParseArrayText(s string) ([]ArrayTextElem, error) {
	p := arrayParser{s: s}
	p.space()
	if !p.eat('{') {
		if p.i < len(s) && s[p.i] == '[' {
			return nil, ErrArrayMultiDim
		}
		return nil, fmt.Errorf("Array value must start with \"{\" or dimension information.")
	}
	var out []ArrayTextElem
	p.space()
	if !p.eat('}') {
		for {
			e, err := p.elem()
			if err != nil {
				return nil, err
			}
			out = append(out, e)
			if p.eat('}') {
				break
			}
			if !p.eat(',') {
				return nil, fmt.Errorf("Unexpected array element.")
			}
		}
	}
	p.space()
	if p.i != len(s) {
		return nil, fmt.Errorf("Junk after closing right brace.")
	}
	return out, nil
}

type arrayParser struct {
	s string
	i int
}

func (p *arrayParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func isArraySpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

func (p *arrayParser) space() {
	for p.i < len(p.s) && isArraySpace(p.s[p.i]) {
		p.i++
	}
}

// elem reads one element and the whitespace after it.
func (p *arrayParser) elem() (ArrayTextElem, error) {
	p.space()
	if p.i >= len(p.s) {
		return ArrayTextElem{}, fmt.Errorf("Unexpected end of input.")
	}
	switch p.s[p.i] {
	case '{':
		return ArrayTextElem{}, ErrArrayMultiDim
	case '"':
		p.i++
		var sb strings.Builder
		for {
			if p.i >= len(p.s) {
				return ArrayTextElem{}, fmt.Errorf("Unexpected end of input.")
			}
			c := p.s[p.i]
			p.i++
			if c == '"' {
				break
			}
			if c == '\\' {
				if p.i >= len(p.s) {
					return ArrayTextElem{}, fmt.Errorf("Unexpected end of input.")
				}
				c = p.s[p.i]
				p.i++
			}
			sb.WriteByte(c)
		}
		p.space()
		return ArrayTextElem{Text: sb.String()}, nil
	case ',', '}':
		return ArrayTextElem{}, fmt.Errorf("Unexpected %q character.", p.s[p.i])
	}
	var sb strings.Builder
	escaped, keep := false, 0 // keep: length without trailing unescaped space
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == ',' || c == '}' {
			break
		}
		switch {
		case c == '"' || c == '{':
			return ArrayTextElem{}, fmt.Errorf("Unexpected %q character.", c)
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return ArrayTextElem{}, fmt.Errorf("Unexpected end of input.")
			}
			escaped = true
			sb.WriteByte(p.s[p.i+1])
			p.i += 2
			keep = sb.Len()
			continue
		}
		sb.WriteByte(c)
		p.i++
		if !isArraySpace(c) {
			keep = sb.Len()
		}
	}
	if p.i >= len(p.s) {
		return ArrayTextElem{}, fmt.Errorf("Unexpected end of input.")
	}
	t := sb.String()[:keep]
	if !escaped && strings.EqualFold(t, "NULL") {
		return ArrayTextElem{Null: true}, nil
	}
	return ArrayTextElem{Text: t}, nil
}

// elemTagOK reports whether tag may start an element of an array of et.
func elemTagOK(tag byte, et Type) bool {
	if tag == tagNull {
		return true
	}
	if et == TypeBool {
		return tag == tagFalse || tag == tagTrue
	}
	return tag == tagOf(Datum{typ: et})
}

// ArrayConcat returns the array of type t holding the elements of arrays
// in order (array_cat, and the array aggregates' concatenation): the
// element encodings are copied, not decoded. Every array must have type
// t; a NULL among them is an error (callers skip NULLs with their own
// rules).
func ArrayConcat(t Type, arrays ...Datum) (Datum, error) {
	if !t.IsArray() {
		return Null(), fmt.Errorf("array concatenation: %s is not an array type", t)
	}
	n := 1
	for i, a := range arrays {
		if a.typ != t || len(a.str) == 0 {
			return Null(), fmt.Errorf("array concatenation: operand %d has type %s, want %s", i+1, a.typ, t)
		}
		n += len(a.str) - 1
	}
	b := make([]byte, 0, n)
	for _, a := range arrays {
		b = append(b, a.str[:len(a.str)-1]...)
	}
	b = append(b, arrayEnd)
	return Datum{typ: t, str: string(b)}, nil
}
