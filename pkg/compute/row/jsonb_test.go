package row

import (
	"bytes"
	"cmp"
	"errors"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestParseJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`null`, `null`},
		{` true `, `true`},
		{`"a\"b\\c\/\n\u00e9\ud83d\ude00\u001f"`, `"a\"b\\c/\né😀\u001f"`},
		{`-0`, `0`},
		{`1.50`, `1.50`},
		{`-0.0`, `0.0`},
		{`1.5e-3`, `0.0015`},
		{`2.500e1`, `25.00`},
		{`1e3`, `1000`},
		{`-12.5E-1`, `-1.25`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{`[1,[2,{"a":null}], "x"]`, `[1, [2, {"a": null}], "x"]`},
		{`{"bb": 1, "a": 2, "c": {"z": [], "y": {}}}`, `{"a": 2, "c": {"y": {}, "z": []}, "bb": 1}`},
		{`{"a": 1, "a": 2}`, `{"a": 2}`},
	}
	for _, tt := range tests {
		j, err := ParseJSON(tt.in)
		if err != nil {
			t.Errorf("ParseJSON(%q): %v", tt.in, err)
			continue
		}
		d := JSONB(j)
		if got := d.String(); got != tt.want {
			t.Errorf("ParseJSON(%q) prints %q, want %q", tt.in, got, tt.want)
		}
		back, err := ParseJSON(d.String())
		if err != nil || JSONB(back) != d {
			t.Errorf("%q does not parse back: %v", d.String(), err)
		}
	}
	for _, in := range []string{``, ` `, `nul`, `nullx`, `01`, `1.`, `.5`, `+1`, `1e`, `-`, `[1,]`, `{"a"}`, `{"a":1,}`,
		`{1: 2}`, `"a`, "\"a\tb\"", `"\x"`, `"\u12"`, `"\ud800"`, `"\udc00"`, `[1] 2`, `NaN`, `Infinity`, `'a'`,
		strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1)} {
		var se *JSONSyntaxError
		if _, err := ParseJSON(in); !errors.As(err, &se) || se.Unicode {
			t.Errorf("ParseJSON(%q) = %v, want a syntax error", in, err)
		}
	}
	var se *JSONSyntaxError
	if _, err := ParseJSON(`"\u0000"`); !errors.As(err, &se) || !se.Unicode {
		t.Errorf(`ParseJSON("\u0000") = %v, want an unsupported escape`, err)
	}
}

// TestJSONBOrderFixed is PostgreSQL 15's order of these values (SELECT
// ... ORDER BY j): the empty array first, scalars (null < string <
// number < boolean), arrays by length then elements, objects by pair
// count then pairs in storage order.
func TestJSONBOrderFixed(t *testing.T) {
	sorted := []string{`[]`, `null`, `""`, `"a"`, `"b"`, `-1`, `0`, `2.5`, `10`, `false`, `true`,
		`[null]`, `["a"]`, `[1]`, `[true]`, `[[]]`, `[{}]`, `[1, 2]`, `[2, 1]`, `[1, 2, 3]`,
		`{}`, `{"a": 1}`, `{"a": 2}`, `{"aa": 0}`, `{"b": 0}`, `{"a": 1, "b": 1}`, `{"b": 1, "aa": 1}`}
	var prev Row
	for i, s := range sorted {
		j, err := ParseJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		r := Pack(JSONB(j))
		if i > 0 && bytes.Compare(prev, r) >= 0 {
			t.Errorf("%s does not sort before %s", sorted[i-1], s)
		}
		prev = r
	}
}

// genJSON draws small jsonb values biased towards ties (few distinct
// keys, strings and numbers), so comparisons reach deep into values.
func genJSON(depth int) *rapid.Generator[JSON] {
	return rapid.Custom(func(t *rapid.T) JSON {
		k := rapid.IntRange(0, 5).Draw(t, "kind")
		if depth <= 0 && k >= 4 {
			k = 0
		}
		switch k {
		case 0:
			return JSON{Kind: JSONNull}
		case 1:
			return JSON{Kind: JSONString, Str: rapid.SampledFrom([]string{"", "a", "b", "ab", "a\x00"}).Draw(t, "s")}
		case 2:
			return JSON{Kind: JSONNumber, Num: MustNumeric(rapid.SampledFrom([]string{"-2", "0", "0.5", "1", "10"}).Draw(t, "n"))}
		case 3:
			return JSON{Kind: JSONBool, Bool: rapid.Bool().Draw(t, "b")}
		case 4:
			return JSON{Kind: JSONArray, Elems: rapid.SliceOfN(genJSON(depth-1), 0, 3).Draw(t, "elems")}
		default:
			n := rapid.IntRange(0, 3).Draw(t, "pairs")
			keys := make([]string, n)
			vals := make([]JSON, n)
			for i := range keys {
				keys[i] = rapid.SampledFrom([]string{"a", "b", "aa"}).Draw(t, "key")
				vals[i] = genJSON(depth-1).Draw(t, "val")
			}
			return JSONObjectOf(keys, vals)
		}
	})
}

// pgToken is one token of PostgreSQL's jsonb iterator.
type pgToken struct {
	r    int // 1 begin array, 2 begin object, 3 key, 4 value, 5 elem, 6 end array, 7 end object
	kind JSONKind
	v    JSON
	n    int
	raw  bool
}

func pgTokens(j JSON, top bool, r int, out []pgToken) []pgToken {
	switch {
	case top && j.Kind != JSONArray && j.Kind != JSONObject:
		out = append(out, pgToken{r: 1, kind: JSONArray, n: 1, raw: true})
		out = append(out, pgToken{r: 5, kind: j.Kind, v: j})
		return append(out, pgToken{r: 6})
	case j.Kind == JSONArray:
		out = append(out, pgToken{r: 1, kind: JSONArray, n: len(j.Elems)})
		for _, e := range j.Elems {
			out = pgTokens(e, false, 5, out)
		}
		return append(out, pgToken{r: 6})
	case j.Kind == JSONObject:
		out = append(out, pgToken{r: 2, kind: JSONObject, n: len(j.Keys)})
		for i, k := range j.Keys {
			out = append(out, pgToken{r: 3, kind: JSONString, v: JSON{Kind: JSONString, Str: k}})
			out = pgTokens(j.Vals[i], false, 4, out)
		}
		return append(out, pgToken{r: 7})
	}
	return append(out, pgToken{r: r, kind: j.Kind, v: j})
}

// pgCompare is PostgreSQL's compareJsonbContainers, transcribed over
// token streams as an independent reference for the encoding's order.
func pgCompare(a, b JSON) int {
	return pgCompareTokens(pgTokens(a, true, 0, nil), pgTokens(b, true, 0, nil))
}

func pgCompareTokens(ta, tb []pgToken) int {
	for i := range min(len(ta), len(tb)) {
		x, y := ta[i], tb[i]
		res := 0
		switch {
		case x.r != y.r:
			res = cmp.Compare(x.kind, y.kind)
		case x.r == 6 || x.r == 7:
			continue
		case x.kind != y.kind:
			res = cmp.Compare(x.kind, y.kind)
		case x.kind == JSONArray:
			if x.raw != y.raw {
				res = 1
				if x.raw {
					res = -1
				}
			}
			if x.n != y.n {
				res = cmp.Compare(x.n, y.n)
			}
		case x.kind == JSONObject:
			res = cmp.Compare(x.n, y.n)
		case x.kind == JSONString:
			res = strings.Compare(x.v.Str, y.v.Str)
		case x.kind == JSONNumber:
			res = x.v.Num.Decimal().Cmp(y.v.Num.Decimal())
		case x.kind == JSONBool:
			res = cmp.Compare(b2i(x.v.Bool), b2i(y.v.Bool))
		}
		if res != 0 {
			return res
		}
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestJSONBOrderProperty: the encoding's byte order is PostgreSQL's jsonb
// order, equal values have equal bytes, and values round trip through
// the row encoding and through text.
func TestJSONBOrderProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		vs := rapid.SliceOfN(genJSON(3), 2, 8).Draw(t, "values")
		for _, a := range vs {
			for _, b := range vs {
				pa, pb := Pack(JSONB(a), Int64(1)), Pack(JSONB(b), Int64(0))
				want := pgCompare(a, b)
				if want == 0 {
					want = 1 // the second column breaks the tie
				}
				if got := bytes.Compare(pa, pb); got != want {
					t.Fatalf("bytes order %d, PostgreSQL's %d: %s vs %s", got, want, a, b)
				}
			}
			ds, err := Pack(JSONB(a)).Unpack()
			if err != nil || ds[0] != JSONB(a) {
				t.Fatalf("row round trip of %s: %v", a, err)
			}
			back, err := parseJSON(a.String(), true)
			if err != nil || JSONB(back) != JSONB(a) {
				t.Fatalf("text round trip of %s: %v", a, err)
			}
		}
	})
}

// TestJSONBNumberScale: a number keeps the digits written, which only
// break ties: SQL's = (CompareJSONB) sees 2.5 and 2.50 as equal.
func TestJSONBNumberScale(t *testing.T) {
	a, _ := ParseJSON(`{"p": [2.5]}`)
	b, _ := ParseJSON(`{"p": [2.50]}`)
	c, _ := ParseJSON(`{"p": [2.51]}`)
	da, db, dc := JSONB(a), JSONB(b), JSONB(c)
	if da == db || CompareJSONB(da, db) != 0 || !JSONEqual(a, b) {
		t.Fatalf("2.5 and 2.50: distinct bytes, equal values wanted")
	}
	if Compare(da, db) >= 0 || Compare(db, dc) >= 0 || CompareJSONB(db, dc) >= 0 {
		t.Fatalf("order 2.5 < 2.50 < 2.51 wanted")
	}
	if db.String() != `{"p": [2.50]}` {
		t.Fatalf("prints %s", db)
	}
}

func TestJSONBCorrupt(t *testing.T) {
	good := []byte(Pack(JSONB(JSONObjectOf([]string{"a", "bb"}, []JSON{{Kind: JSONNull}, {Kind: JSONBool, Bool: true}}))))
	for name, b := range map[string][]byte{
		"truncated":         good[:len(good)-1],
		"bad kind":          {tagJSONB, 0x09, 0, 0, 0, 0},
		"raw array flag":    {tagJSONB, jsonTopArray, 0, 0, 0, 2, 0x00, jsonElemNull, jsonElemNull},
		"raw container":     {tagJSONB, jsonTopArray, 0, 0, 0, 1, 0x00, jsonElemArray, 0, 0, 0, 0},
		"huge count":        {tagJSONB, jsonTopArray, 0xff, 0xff, 0xff, 0xff, 0x01},
		"keys out of order": append([]byte{tagJSONB, jsonTopObject, 0, 0, 0, 2}, append(appendJSONString(append(appendJSONString(nil, "b"), jsonElemNull), "a"), jsonElemNull)...),
		"duplicate keys":    append([]byte{tagJSONB, jsonTopObject, 0, 0, 0, 2}, append(appendJSONString(append(appendJSONString(nil, "a"), jsonElemNull), "a"), jsonElemNull)...),
		"number NaN":        {tagJSONB, jsonTopArray, 0, 0, 0, 1, 0x00, jsonElemNumber, numNaN},
	} {
		if err := Row(b).Validate(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Validate = %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzParseJSON: parsing never panics, and what parses prints as text
// that parses back to the same value.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, "x", null, true]}`, `"\ud83d\ude00"`, `-1.5e-3`, `[[[]]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		j, err := ParseJSON(s)
		if err != nil {
			var se *JSONSyntaxError
			if !errors.As(err, &se) && !errors.Is(err, ErrNumericOverflow) {
				t.Fatalf("ParseJSON(%q): unexpected error type %T %v", s, err, err)
			}
			return
		}
		back, err := ParseJSON(j.String())
		if err != nil || JSONB(back) != JSONB(j) {
			t.Fatalf("%q prints %q which does not parse back: %v", s, j.String(), err)
		}
	})
}

// jsonCorpus is every small value over a few atoms: scalars, arrays of
// up to two of them, arrays and objects nesting those, so that every
// pair of kinds meets at the top level and inside containers.
func jsonCorpus() []JSON {
	var atoms []JSON
	for _, s := range []string{`null`, `""`, `"a"`, `"b"`, `"ab"`, `-1`, `0`, `0.5`, `1`, `false`, `true`} {
		j, _ := ParseJSON(s)
		atoms = append(atoms, j)
	}
	level := append([]JSON{{Kind: JSONArray}, {Kind: JSONObject}}, atoms...)
	out := slices.Clone(level)
	for _, a := range level {
		out = append(out, JSON{Kind: JSONArray, Elems: []JSON{a}})
		out = append(out, JSONObjectOf([]string{"a"}, []JSON{a}), JSONObjectOf([]string{"aa"}, []JSON{a}))
		for _, b := range atoms[:4] {
			out = append(out, JSON{Kind: JSONArray, Elems: []JSON{a, b}}, JSONObjectOf([]string{"a", "b"}, []JSON{a, b}))
		}
	}
	n := len(out)
	for _, a := range out[:n:n] {
		if a.Kind == JSONArray || a.Kind == JSONObject {
			out = append(out, JSON{Kind: JSONArray, Elems: []JSON{a}}, JSONObjectOf([]string{"b"}, []JSON{a}))
		}
	}
	return out
}

// TestJSONBOrderExhaustive compares every pair of the corpus.
func TestJSONBOrderExhaustive(t *testing.T) {
	vs := jsonCorpus()
	keys := make([]Row, len(vs))
	toks := make([][]pgToken, len(vs))
	for i, v := range vs {
		keys[i], toks[i] = Pack(JSONB(v)), pgTokens(v, true, 0, nil)
	}
	t.Logf("%d values", len(vs))
	for i, a := range vs {
		for j, b := range vs {
			if got, want := bytes.Compare(keys[i], keys[j]), pgCompareTokens(toks[i], toks[j]); got != want {
				t.Fatalf("bytes order %d, PostgreSQL's %d: %s vs %s", got, want, a, b)
			}
		}
	}
}
