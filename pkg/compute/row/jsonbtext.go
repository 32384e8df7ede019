package row

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
)

// JSONSyntaxError is malformed jsonb text input. Unicode is set for an
// escape jsonb cannot hold (\u0000), which PostgreSQL reports as 22P05
// rather than 22P02.
type JSONSyntaxError struct {
	Detail  string
	Unicode bool
}

func (e *JSONSyntaxError) Error() string {
	if e.Unicode {
		return "unsupported Unicode escape sequence"
	}
	return "invalid input syntax for type json"
}

// ParseJSON parses jsonb text input as PostgreSQL does: RFC 8259 JSON,
// numbers as numeric, a repeated object key keeping its last value, and
// nesting at most MaxJSONDepth deep.
func ParseJSON(s string) (JSON, error) { return parseJSON(s, false) }

// parseJSON is ParseJSON; with allowNUL, \u0000 is accepted (the wire
// form of a datum, which must carry any value a datum holds).
func parseJSON(s string, allowNUL bool) (JSON, error) {
	p := jsonParser{s: s, allowNUL: allowNUL}
	p.space()
	j, err := p.value(1)
	if err != nil {
		return JSON{}, err
	}
	p.space()
	if p.i != len(p.s) {
		return JSON{}, p.fail("Expected end of input, but found trailing characters.")
	}
	return j, nil
}

type jsonParser struct {
	s        string
	i        int
	allowNUL bool
}

func (p *jsonParser) fail(detail string) error { return &JSONSyntaxError{Detail: detail} }

func (p *jsonParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (JSON, error) {
	if depth > MaxJSONDepth {
		return JSON{}, p.fail("nested too deeply")
	}
	if p.i >= len(p.s) {
		return JSON{}, p.fail("The input string ended unexpectedly.")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		return JSON{Kind: JSONString, Str: s}, err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range []struct {
		word string
		j    JSON
	}{{"true", JSON{Kind: JSONBool, Bool: true}}, {"false", JSON{Kind: JSONBool}}, {"null", JSON{Kind: JSONNull}}} {
		if len(p.s)-p.i >= len(lit.word) && p.s[p.i:p.i+len(lit.word)] == lit.word {
			end := p.i + len(lit.word)
			if end == len(p.s) || !isJSONWordByte(p.s[end]) {
				p.i = end
				return lit.j, nil
			}
		}
	}
	return JSON{}, p.fail("Token is invalid.")
}

func isJSONWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

func (p *jsonParser) array(depth int) (JSON, error) {
	p.i++ // [
	j := JSON{Kind: JSONArray}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return j, nil
	}
	for {
		p.space()
		e, err := p.value(depth + 1)
		if err != nil {
			return JSON{}, err
		}
		j.Elems = append(j.Elems, e)
		if done, err := p.afterItem(']'); err != nil {
			return JSON{}, err
		} else if done {
			return j, nil
		}
	}
}

// afterItem reads what follows an array element or object member: a
// comma (more follow) or the container's closing bracket (done).
func (p *jsonParser) afterItem(closer byte) (done bool, err error) {
	p.space()
	if p.i >= len(p.s) {
		return false, p.fail("The input string ended unexpectedly.")
	}
	switch p.s[p.i] {
	case ',':
		p.i++
		return false, nil
	case closer:
		p.i++
		return true, nil
	}
	return false, p.fail(`Expected "," or "` + string(closer) + `".`)
}

func (p *jsonParser) object(depth int) (JSON, error) {
	p.i++ // {
	var keys []string
	var vals []JSON
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return JSON{Kind: JSONObject}, nil
	}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return JSON{}, p.fail("Expected string.")
		}
		k, err := p.str()
		if err != nil {
			return JSON{}, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return JSON{}, p.fail(`Expected ":".`)
		}
		p.i++
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return JSON{}, err
		}
		keys, vals = append(keys, k), append(vals, v)
		if done, err := p.afterItem('}'); err != nil {
			return JSON{}, err
		} else if done {
			return JSONObjectOf(keys, vals), nil
		}
	}
}

// number scans RFC 8259's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonParser) number() (JSON, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return JSON{}, p.fail("Token is invalid.")
	}
	frac, exp := 0, int64(0)
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if frac = digits(); frac == 0 {
			return JSON{}, p.fail("Token is invalid.")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		es := p.i
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return JSON{}, p.fail("Token is invalid.")
		}
		exp, _ = strconv.ParseInt(p.s[es:p.i], 10, 64) // a huge exponent overflows numeric below
	}
	if p.i < len(p.s) && isJSONWordByte(p.s[p.i]) {
		return JSON{}, p.fail("Token is invalid.")
	}
	x, _, err := apd.NewFromString(p.s[start:p.i])
	if err != nil {
		return JSON{}, p.fail("Token is invalid.")
	}
	d, err := Numeric(x)
	if err != nil {
		return JSON{}, err
	}
	// The display scale numeric input gives: the fraction digits less
	// the exponent.
	return JSONNum(d, int(min(max(int64(frac)-exp, 0), NumericMaxScale))), nil
}

func (p *jsonParser) str() (string, error) {
	p.i++ // "
	var out []byte
	for {
		if p.i >= len(p.s) {
			return "", p.fail("The input string ended unexpectedly.")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), nil
		case c < 0x20:
			return "", p.fail("Character with value 0x" + strconv.FormatInt(int64(c), 16) + " must be escaped.")
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", p.fail("The input string ended unexpectedly.")
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := p.unicodeEscape()
			if err != nil {
				return "", err
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", p.fail("Escape sequence is invalid.")
		}
	}
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

func (p *jsonParser) unicodeEscape() (rune, error) {
	r, ok := p.hex4()
	if !ok {
		return 0, p.fail(`"\u" must be followed by four hexadecimal digits.`)
	}
	switch {
	case r == 0 && !p.allowNUL:
		return 0, &JSONSyntaxError{Detail: `\u0000 cannot be converted to text.`, Unicode: true}
	case utf16.IsSurrogate(r) && r < 0xDC00:
		if p.i+2 > len(p.s) || p.s[p.i:p.i+2] != `\u` {
			return 0, p.fail("Unicode high surrogate must not follow a high surrogate.")
		}
		p.i += 2
		lo, ok := p.hex4()
		if !ok {
			return 0, p.fail(`"\u" must be followed by four hexadecimal digits.`)
		}
		if lo < 0xDC00 || lo > 0xDFFF {
			return 0, p.fail("Unicode low surrogate must follow a high surrogate.")
		}
		return utf16.DecodeRune(r, lo), nil
	case utf16.IsSurrogate(r):
		return 0, p.fail("Unicode low surrogate must follow a high surrogate.")
	}
	return r, nil
}

// AppendText appends jsonb's text output: `{"a": 1, "b": [true, null]}`,
// keys in storage order.
func (j JSON) AppendText(dst []byte) []byte {
	switch j.Kind {
	case JSONString:
		return AppendJSONString(dst, j.Str)
	case JSONNumber:
		return AppendNumeric(dst, j.Num, j.Scale)
	case JSONBool:
		return strconv.AppendBool(dst, j.Bool)
	case JSONArray:
		dst = append(dst, '[')
		for i, e := range j.Elems {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = e.AppendText(dst)
		}
		return append(dst, ']')
	case JSONObject:
		dst = append(dst, '{')
		for i, k := range j.Keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(AppendJSONString(dst, k), ": "...)
			dst = j.Vals[i].AppendText(dst)
		}
		return append(dst, '}')
	default:
		return append(dst, "null"...)
	}
}

// String is AppendText as a string.
func (j JSON) String() string { return string(j.AppendText(nil)) }

// AppendJSONString appends s as a JSON string literal, escaped as
// PostgreSQL's escape_json does.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			dst = append(dst, `\"`...)
		case '\\':
			dst = append(dst, `\\`...)
		case '\b':
			dst = append(dst, `\b`...)
		case '\f':
			dst = append(dst, `\f`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default:
			if c < 0x20 {
				dst = append(dst, `\u00`...)
				dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
				continue
			}
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
