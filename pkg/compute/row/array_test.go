package row

import (
	"bytes"
	"cmp"
	"encoding/json"
	"testing"

	"pgregory.net/rapid"
)

func mustArray(t Type, elems ...Datum) Datum {
	d, err := Array(t, elems)
	if err != nil {
		panic(err)
	}
	return d
}

// pgArrayCmp is PostgreSQL's array_cmp for one-dimensional arrays:
// element by element with NULL after every value and equal to NULL, then
// the shorter array first (an empty array has no dimensions, so it sorts
// before every other array).
func pgArrayCmp(a, b []Datum) int {
	for i := range min(len(a), len(b)) {
		an, bn := a[i].IsNull(), b[i].IsNull()
		switch {
		case an && bn:
			continue
		case an:
			return 1
		case bn:
			return -1
		}
		if c := Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func TestArrayEncodingOrderIsPostgresArrayOrder(t *testing.T) {
	gens := map[Type]*rapid.Generator[Datum]{
		TypeInt64Array: rapid.Custom(func(t *rapid.T) Datum { return Int64(rapid.Int64Range(-3, 3).Draw(t, "i")) }),
		TypeTextArray: rapid.Custom(func(t *rapid.T) Datum {
			return Text(rapid.StringOfN(rapid.RuneFrom([]rune{'a', 'b', 0}), 0, 3, -1).Draw(t, "s"))
		}),
		TypeFloat64Array: rapid.Custom(func(t *rapid.T) Datum {
			return Float64(rapid.SampledFrom([]float64{-1, 0, 0.5, 1e300}).Draw(t, "f"))
		}),
		TypeBoolArray: rapid.Custom(func(t *rapid.T) Datum { return Bool(rapid.Bool().Draw(t, "b")) }),
		TypeDateArray: rapid.Custom(func(t *rapid.T) Datum { return Date(rapid.Int32Range(-2, 2).Draw(t, "d")) }),
		TypeBytesArray: rapid.Custom(func(t *rapid.T) Datum {
			return BytesString(rapid.StringOfN(rapid.RuneFrom([]rune{'a', 0, 0xff}), 0, 3, -1).Draw(t, "b"))
		}),
	}
	for typ, g := range gens {
		t.Run(typ.String(), func(t *testing.T) {
			elems := rapid.SliceOfN(rapid.OneOf(g, rapid.Just(Null())), 0, 4)
			rapid.Check(t, func(rt *rapid.T) {
				a, b := elems.Draw(rt, "a"), elems.Draw(rt, "b")
				da, db := mustArray(typ, a...), mustArray(typ, b...)
				want := pgArrayCmp(a, b)
				if got := bytes.Compare(Pack(da), Pack(db)); got != want {
					rt.Fatalf("bytes order of %v, %v = %d, PostgreSQL's %d", da, db, got, want)
				}
				if got := Compare(da, db); got != want {
					rt.Fatalf("Compare(%v, %v) = %d, PostgreSQL's %d", da, db, got, want)
				}
				// Concatenation stays ordered: an array followed by
				// another column.
				if got := bytes.Compare(Pack(da, Int64(9)), Pack(db, Int64(0))); want != 0 && got != want {
					rt.Fatalf("tuple order of (%v, 9), (%v, 0) = %d, want %d", da, db, got, want)
				}
				back, err := Pack(da).Unpack()
				if err != nil || len(back) != 1 || back[0] != da || len(back[0].ArrayElems()) != len(a) {
					rt.Fatalf("round trip of %v: %v, %v", da, back, err)
				}
			})
		})
	}
}

func TestArrayText(t *testing.T) {
	for _, tc := range []struct {
		d    Datum
		want string
	}{
		{mustArray(TypeInt64Array), "{}"},
		{mustArray(TypeInt64Array, Int64(1), Null(), Int64(-3)), "{1,NULL,-3}"},
		{mustArray(TypeTextArray, Text("a b"), Text(""), Text("null"), Text(`q"\`), Text("x{}"), Text("é")), `{"a b","","null","q\"\\","x{}",é}`},
		{mustArray(TypeBoolArray, True, False), "{t,f}"},
		{mustArray(TypeFloat64Array, Float64(1.5), Float64(-0.0)), "{1.5,0}"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.d.ArrayElems(), got, tc.want)
		}
	}
}

func TestParseArrayText(t *testing.T) {
	n := ArrayTextElem{Null: true}
	e := func(s string) ArrayTextElem { return ArrayTextElem{Text: s} }
	for _, tc := range []struct {
		in   string
		want []ArrayTextElem
		err  bool
	}{
		{in: "{}", want: nil},
		{in: " { } ", want: nil},
		{in: "{1,2,NULL}", want: []ArrayTextElem{e("1"), e("2"), n}},
		{in: "{ a b , null ,\"NULL\", \\NULL}", want: []ArrayTextElem{e("a b"), n, e("NULL"), e("NULL")}},
		{in: `{"a\"b","c,d",""}`, want: []ArrayTextElem{e(`a"b`), e("c,d"), e("")}},
		{in: `{a\ }`, want: []ArrayTextElem{e("a ")}},
		{in: "", err: true},
		{in: "1,2", err: true},
		{in: "{1,2", err: true},
		{in: "{1,,2}", err: true},
		{in: "{1}x", err: true},
		{in: "{,}", err: true},
		{in: `{"a}`, err: true},
		{in: `{a"b"}`, err: true},
		{in: "{{1},{2}}", err: true},
	} {
		got, err := ParseArrayText(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("%q: parsed as %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: got %v, %v; want %v", tc.in, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: element %d = %v, want %v", tc.in, i, got[i], tc.want[i])
			}
		}
	}
}

func TestArrayRejects(t *testing.T) {
	if _, err := Array(TypeInt64Array, []Datum{Text("a")}); err == nil {
		t.Error("an int64[] with a text element was built")
	}
	if _, err := Array(TypeInt64, nil); err == nil {
		t.Error("an array of a non-array type was built")
	}
	// A text element inside an int64[] encoding is corrupt.
	bad := Row{tagArrayBase, tagText, 'a', escByte, escEnd, arrayEnd}
	if err := bad.Validate(); err == nil {
		t.Error("an int64[] holding text validated")
	}
	if err := (Row{tagArrayBase, tagInt64}).Validate(); err == nil {
		t.Error("an unterminated array validated")
	}
	d := mustArray(TypeTextArray, Text("x"), Null())
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back Datum
	if err := json.Unmarshal(b, &back); err != nil || back != d {
		t.Errorf("json round trip of %v: %v, %v", d, back, err)
	}
}

// TestArrayConcat checks that concatenating encodings is the array of the
// concatenated elements, and that a mistyped or NULL operand is refused.
func TestArrayConcat(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		elem := rapid.OneOf(rapid.Just(Null()), rapid.Custom(func(t *rapid.T) Datum { return Int64(rapid.Int64Range(-3, 3).Draw(t, "i")) }))
		parts := rapid.SliceOfN(rapid.SliceOfN(elem, 0, 3), 0, 4).Draw(rt, "parts")
		var all []Datum
		arrays := make([]Datum, len(parts))
		for i, p := range parts {
			arrays[i] = mustArray(TypeInt64Array, p...)
			all = append(all, p...)
		}
		got, err := ArrayConcat(TypeInt64Array, arrays...)
		if want := mustArray(TypeInt64Array, all...); err != nil || got != want {
			rt.Fatalf("ArrayConcat(%v) = %v, %v; want %v", arrays, got, err, want)
		}
	})
	for _, bad := range [][]Datum{{Null()}, {mustArray(TypeTextArray, Text("a"))}, {Int64(1)}} {
		if d, err := ArrayConcat(TypeInt64Array, bad...); err == nil {
			t.Errorf("ArrayConcat(int64[], %v) = %v, want an error", bad, d)
		}
	}
	if _, err := ArrayConcat(TypeInt64, mustArray(TypeInt64Array)); err == nil {
		t.Error("ArrayConcat over a non-array type: want an error")
	}
}

// TestJSONArrayEncoding: json[] holds its elements' texts as written,
// under the last array tag (its type number follows json's, so the tag
// is not the type's offset), and decodes back to the same datum; an
// element of another type under its tag is corrupt.
func TestJSONArrayEncoding(t *testing.T) {
	a := mustArray(TypeJSONArray, JSONText(` {"a" : 1, "a": 2} `), Null(), JSONText(`"x"`))
	r := Pack(a, Int64(7))
	if r[0] != tagJSONArray || arrayTypeOfTag(r[0]) != TypeJSONArray {
		t.Fatalf("json[] tag %#x (type %v), want %#x", r[0], arrayTypeOfTag(r[0]), tagJSONArray)
	}
	ds, err := r.Unpack()
	if err != nil || len(ds) != 2 || ds[0] != a || ds[0].Type() != TypeJSONArray {
		t.Fatalf("round trip: %v, %v", ds, err)
	}
	if got, want := a.String(), `{" {\"a\" : 1, \"a\": 2} ",NULL,"\"x\""}`; got != want {
		t.Errorf("text %s, want %s", got, want)
	}
	if got := a.ArrayElems(); len(got) != 3 || got[0].JSONText() != ` {"a" : 1, "a": 2} ` || !got[1].IsNull() {
		t.Errorf("elements %v", got)
	}
	one, err := ParseJSON(`1`)
	if err != nil {
		t.Fatal(err)
	}
	jsonb := Pack(mustArray(TypeJSONBArray, JSONB(one)))
	bad := append([]byte{tagJSONArray}, jsonb[1:]...)
	if _, err := Row(bad).Unpack(); err == nil {
		t.Errorf("json[] holding a jsonb element decoded")
	}
}
