package row

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
)

// JSONKind is the kind of a jsonb value, in PostgreSQL's jsonb order of
// kinds within a container: null < string < number < boolean < array <
// object.
type JSONKind uint8

// The kinds of jsonb values.
const (
	JSONNull JSONKind = iota + 1
	JSONString
	JSONNumber
	JSONBool
	JSONArray
	JSONObject
)

// JSON is a decoded jsonb value. An object's keys are unique and held in
// jsonb's storage order (shorter keys first, then bytewise), which is
// also the order jsonb prints them in; Vals[i] is the value of Keys[i].
// A number is a numeric datum and the display scale it prints with
// (jsonb keeps the digits written: 2.50 prints as 2.50), at least the
// value's own scale (JSONNum).
type JSON struct {
	Kind  JSONKind
	Bool  bool
	Str   string
	Num   Datum
	Scale int
	Elems []JSON
	Keys  []string
	Vals  []JSON
}

// JSONNum returns a number with display scale scale (raised to the
// value's own scale).
func JSONNum(num Datum, scale int) JSON {
	return JSON{Kind: JSONNumber, Num: num.NumericKey(), Scale: max(scale, num.NumericScale(), 0)}
}

// JSONKeyLess is jsonb's storage order of object keys: by length, then
// bytewise.
func JSONKeyLess(a, b string) bool { return compareJSONKeys(a, b) < 0 }

func compareJSONKeys(a, b string) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// JSONObjectOf builds an object from pairs in any order; a repeated key
// keeps its last value, as jsonb input does.
func JSONObjectOf(keys []string, vals []JSON) JSON {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return compareJSONKeys(keys[a], keys[b]) })
	out := JSON{Kind: JSONObject}
	for _, i := range idx {
		if n := len(out.Keys); n > 0 && out.Keys[n-1] == keys[i] {
			out.Vals[n-1] = vals[i]
			continue
		}
		out.Keys = append(out.Keys, keys[i])
		out.Vals = append(out.Vals, vals[i])
	}
	return out
}

// Lookup returns the value of key in an object.
func (j JSON) Lookup(key string) (JSON, bool) {
	if j.Kind != JSONObject {
		return JSON{}, false
	}
	i, ok := slices.BinarySearchFunc(j.Keys, key, compareJSONKeys)
	if !ok {
		return JSON{}, false
	}
	return j.Vals[i], true
}

// The jsonb encoding (the datum's payload and, after tag 0x7A, its row
// encoding) is an order-preserving key: bytes.Compare of two keys is
// PostgreSQL's jsonb comparison (jsonb_cmp). A top-level value is
//
//	0x01 n(uint32) raw(0x00 scalar, 0x01 array) element*n
//	0x02 n(uint32) (string element)*n                       an object
//
// PostgreSQL stores a top-level scalar as a one-element "raw scalar"
// array and compares containers by kind, then by element (pair) count,
// then a raw scalar before an array, then element by element, so the
// empty array sorts before every scalar and every scalar before a
// non-empty array. Elements, tagged in jsonb's order of kinds:
//
//	0x01 null  0x02 string (escaped, 0x00 0x01 terminated)
//	0x03 number: numeric key, then the display scale (uint16)
//	0x04 false  0x05 true  0x06 n(uint32) element*n  0x07 n(uint32) (string element)*n
//
// Object pairs are in storage order with unique keys, so the encoding is
// canonical; strings compare bytewise (PostgreSQL compares them in the
// database collation: Tandem's is C). A number's display scale follows
// its value, so it only breaks ties between equal numbers (2.5, 2.50):
// like intervals ('1 mon', '30 days'), such values are distinct bytes
// that SQL's = and containment treat as equal (CompareJSONB), while
// GROUP BY, DISTINCT and join keys keep them apart.
const (
	jsonTopArray  = 0x01
	jsonTopObject = 0x02

	jsonElemNull   = 0x01
	jsonElemString = 0x02
	jsonElemNumber = 0x03
	jsonElemFalse  = 0x04
	jsonElemTrue   = 0x05
	jsonElemArray  = 0x06
	jsonElemObject = 0x07

	// MaxJSONDepth bounds the nesting of a jsonb value, so that decoding
	// and printing cannot exhaust the stack.
	MaxJSONDepth = 1000
)

// JSONB returns a jsonb datum holding j.
func JSONB(j JSON) Datum { return Datum{typ: TypeJSONB, str: string(appendJSONTop(nil, j, true))} }

// CompareJSONB compares two jsonb datums as SQL's = and < do: numbers by
// value whatever their display scale.
func CompareJSONB(a, b Datum) int {
	if a.str == b.str {
		return 0
	}
	return bytes.Compare(appendJSONTop(nil, a.JSON(), false), appendJSONTop(nil, b.JSON(), false))
}

// JSONEqual reports whether two values are equal as jsonb's = says.
func JSONEqual(a, b JSON) bool {
	return bytes.Equal(appendJSONTop(nil, a, false), appendJSONTop(nil, b, false))
}

func appendJSONTop(dst []byte, j JSON, scale bool) []byte {
	switch j.Kind {
	case JSONObject:
		return appendJSONPairs(append(dst, jsonTopObject), j, scale)
	case JSONArray:
		dst = binary.BigEndian.AppendUint32(append(dst, jsonTopArray), uint32(len(j.Elems)))
		dst = append(dst, 0x01)
		for _, e := range j.Elems {
			dst = appendJSONElem(dst, e, scale)
		}
		return dst
	default:
		dst = binary.BigEndian.AppendUint32(append(dst, jsonTopArray), 1)
		return appendJSONElem(append(dst, 0x00), j, scale)
	}
}

func appendJSONPairs(dst []byte, j JSON, scale bool) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(j.Keys)))
	for i, k := range j.Keys {
		dst = appendJSONString(dst, k)
		dst = appendJSONElem(dst, j.Vals[i], scale)
	}
	return dst
}

func appendJSONString(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, escByte)
		if i < 0 {
			break
		}
		dst = append(append(dst, s[:i+1]...), escZero)
		s = s[i+1:]
	}
	return append(append(dst, s...), escByte, escEnd)
}

func appendJSONElem(dst []byte, j JSON, scale bool) []byte {
	switch j.Kind {
	case JSONString:
		return appendJSONString(append(dst, jsonElemString), j.Str)
	case JSONNumber:
		dst = append(append(dst, jsonElemNumber), j.Num.str...)
		s := 0
		if scale {
			s = max(j.Scale, j.Num.NumericScale(), 0)
		}
		return binary.BigEndian.AppendUint16(dst, uint16(s))
	case JSONBool:
		if j.Bool {
			return append(dst, jsonElemTrue)
		}
		return append(dst, jsonElemFalse)
	case JSONArray:
		dst = binary.BigEndian.AppendUint32(append(dst, jsonElemArray), uint32(len(j.Elems)))
		for _, e := range j.Elems {
			dst = appendJSONElem(dst, e, scale)
		}
		return dst
	case JSONObject:
		return appendJSONPairs(append(dst, jsonElemObject), j, scale)
	default:
		return append(dst, jsonElemNull)
	}
}

// JSON decodes a jsonb datum; the zero JSON for other types.
func (d Datum) JSON() JSON {
	if d.typ != TypeJSONB {
		return JSON{}
	}
	j, _, err := decodeJSONTop([]byte(d.str), 0)
	if err != nil {
		return JSON{} // datums are built canonical: unreachable
	}
	return j
}

// jsonbLen returns the length of the jsonb key at the start of b and
// checks that it is canonical.
func jsonbLen(b []byte, off int) (int, error) {
	_, n, err := decodeJSONTop(b, off)
	return n, err
}

func decodeJSONTop(b []byte, off int) (JSON, int, error) {
	if len(b) < 5 {
		return JSON{}, 0, corrupt(off, "truncated jsonb")
	}
	n := int(binary.BigEndian.Uint32(b[1:5]))
	switch b[0] {
	case jsonTopObject:
		j, l, err := decodeJSONPairs(b[5:], off+5, n, 1)
		return j, 5 + l, err
	case jsonTopArray:
		if len(b) < 6 {
			return JSON{}, 0, corrupt(off, "truncated jsonb")
		}
		switch {
		case b[5] == 0x00 && n == 1:
			j, l, err := decodeJSONElem(b[6:], off+6, 1)
			if err == nil && (j.Kind == JSONArray || j.Kind == JSONObject) {
				err = corrupt(off, "jsonb raw scalar holds a container")
			}
			return j, 6 + l, err
		case b[5] == 0x01:
			j, l, err := decodeJSONElems(b[6:], off+6, n, 1)
			return j, 6 + l, err
		}
		return JSON{}, 0, corrupt(off, "invalid jsonb array flag %#x for %d elements", b[5], n)
	}
	return JSON{}, 0, corrupt(off, "invalid jsonb kind %#x", b[0])
}

func decodeJSONElems(b []byte, off, n, depth int) (JSON, int, error) {
	if n > len(b) {
		return JSON{}, 0, corrupt(off, "jsonb array of %d elements in %d bytes", n, len(b))
	}
	j := JSON{Kind: JSONArray, Elems: make([]JSON, 0, n)}
	i := 0
	for range n {
		e, l, err := decodeJSONElem(b[i:], off+i, depth+1)
		if err != nil {
			return JSON{}, 0, err
		}
		j.Elems = append(j.Elems, e)
		i += l
	}
	return j, i, nil
}

func decodeJSONPairs(b []byte, off, n, depth int) (JSON, int, error) {
	if n > len(b) {
		return JSON{}, 0, corrupt(off, "jsonb object of %d pairs in %d bytes", n, len(b))
	}
	j := JSON{Kind: JSONObject, Keys: make([]string, 0, n), Vals: make([]JSON, 0, n)}
	i := 0
	for range n {
		k, l, err := decodeJSONString(b[i:], off+i)
		if err != nil {
			return JSON{}, 0, err
		}
		if m := len(j.Keys); m > 0 && compareJSONKeys(j.Keys[m-1], k) >= 0 {
			return JSON{}, 0, corrupt(off+i, "jsonb object keys out of order")
		}
		i += l
		v, l, err := decodeJSONElem(b[i:], off+i, depth+1)
		if err != nil {
			return JSON{}, 0, err
		}
		i += l
		j.Keys, j.Vals = append(j.Keys, k), append(j.Vals, v)
	}
	return j, i, nil
}

func decodeJSONString(b []byte, off int) (string, int, error) {
	escaped := false
	i := 0
	for {
		j := bytes.IndexByte(b[i:], escByte)
		if j < 0 || i+j+1 >= len(b) {
			return "", 0, corrupt(off, "unterminated jsonb string")
		}
		i += j + 1
		switch b[i] {
		case escEnd:
			p := b[:i-1]
			if escaped {
				return unescape(p), i + 1, nil
			}
			return string(p), i + 1, nil
		case escZero:
			escaped = true
			i++
		default:
			return "", 0, corrupt(off+i, "invalid escape 0x00 %#x", b[i])
		}
	}
}

func decodeJSONElem(b []byte, off, depth int) (JSON, int, error) {
	if depth > MaxJSONDepth {
		return JSON{}, 0, corrupt(off, "jsonb nested deeper than %d", MaxJSONDepth)
	}
	if len(b) == 0 {
		return JSON{}, 0, corrupt(off, "truncated jsonb element")
	}
	switch b[0] {
	case jsonElemNull:
		return JSON{Kind: JSONNull}, 1, nil
	case jsonElemFalse, jsonElemTrue:
		return JSON{Kind: JSONBool, Bool: b[0] == jsonElemTrue}, 1, nil
	case jsonElemString:
		s, l, err := decodeJSONString(b[1:], off+1)
		return JSON{Kind: JSONString, Str: s}, 1 + l, err
	case jsonElemNumber:
		l, err := numericLen(b[1:], off+1)
		if err != nil {
			return JSON{}, 0, err
		}
		if c := b[1]; c == numNaN || c == numNegInf || c == numPosInf {
			return JSON{}, 0, corrupt(off, "jsonb number is not finite")
		}
		if len(b) < 1+l+2 {
			return JSON{}, 0, corrupt(off, "truncated jsonb number")
		}
		num := Datum{typ: TypeNumeric, str: string(b[1 : 1+l])}
		scale := int(binary.BigEndian.Uint16(b[1+l:]))
		if scale > NumericMaxScale || scale < num.NumericScale() {
			return JSON{}, 0, corrupt(off, "jsonb number scale %d invalid", scale)
		}
		return JSON{Kind: JSONNumber, Num: num, Scale: scale}, 1 + l + 2, nil
	case jsonElemArray, jsonElemObject:
		if len(b) < 5 {
			return JSON{}, 0, corrupt(off, "truncated jsonb container")
		}
		n := int(binary.BigEndian.Uint32(b[1:5]))
		var j JSON
		var l int
		var err error
		if b[0] == jsonElemArray {
			j, l, err = decodeJSONElems(b[5:], off+5, n, depth)
		} else {
			j, l, err = decodeJSONPairs(b[5:], off+5, n, depth)
		}
		return j, 5 + l, err
	}
	return JSON{}, 0, corrupt(off, "invalid jsonb element tag %#x", b[0])
}
