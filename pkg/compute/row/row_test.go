package row

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

var sampleDatums = []Datum{
	Null(), Bool(false), Bool(true),
	Int64(math.MinInt64), Int64(-1), Int64(0), Int64(1), Int64(math.MaxInt64),
	Float64(math.Inf(-1)), Float64(-1.5), Float64(math.Copysign(0, -1)), Float64(0),
	Float64(5e-324), Float64(2.5), Float64(math.Inf(1)), Float64(math.NaN()),
	Text(""), Text("\x00"), Text("\x00\x00"), Text("a"), Text("a\x00"), Text("a\x00b"), Text("ab"), Text("\xff"),
	Bytes(nil), Bytes([]byte{0}), Bytes([]byte{0, 1}), Bytes([]byte{1}), Bytes([]byte{0xff}),
	Timestamp(math.MinInt64), Timestamp(-1), Timestamp(0), Timestamp(1_700_000_000_000_000),
	Date(DateNegInfinity), Date(MinDateDays), Date(-1), Date(0), Date(19000), Date(MaxDateDays), Date(DateInfinity),
	Time(0), Time(1), Time(MicrosPerDay),
	TimestampTZ(math.MinInt64), TimestampTZ(-1), TimestampTZ(0), TimestampTZ(math.MaxInt64),
	IntervalDatum(Interval{Months: math.MinInt32, Days: math.MinInt32, Micros: math.MinInt64}),
	IntervalDatum(Interval{Days: -1}), IntervalDatum(Interval{Micros: -1}), IntervalDatum(Interval{}),
	IntervalDatum(Interval{Micros: 1}), IntervalDatum(Interval{Days: 30}), IntervalDatum(Interval{Months: 1}),
	IntervalDatum(Interval{Days: 1, Micros: -MicrosPerDay}), IntervalDatum(Interval{Micros: MicrosPerDay}),
	IntervalDatum(Interval{Days: 1}),
	IntervalDatum(Interval{Months: math.MaxInt32, Days: math.MaxInt32, Micros: math.MaxInt64}),
	MustNumeric("-Infinity"), MustNumeric("-12.5"), mustScaled("-12.5", 2), MustNumeric("-1"), mustScaled("-1", 1),
	MustNumeric("-0.001"), MustNumeric("0"), mustScaled("0", 2), MustNumeric("0.001"), MustNumeric("1"),
	MustNumeric("1.5"), mustScaled("1.5", 2), mustScaled("1.5", NumericMaxScale), MustNumeric("10"), MustNumeric("1e100"),
	MustNumeric("Infinity"), MustNumeric("NaN"),
	UUID([16]byte{}), UUID([16]byte{0: 1, 15: 0xff}), UUID([16]byte{0: 0xff}),
	JSONB(JSON{Kind: JSONArray}), JSONB(JSON{Kind: JSONNull}), JSONB(JSON{Kind: JSONString, Str: "a\x00"}),
	JSONB(JSON{Kind: JSONArray, Elems: []JSON{{Kind: JSONNumber, Num: MustNumeric("-1.5")}}}),
	JSONB(JSONObjectOf([]string{"b", "a"}, []JSON{{Kind: JSONBool, Bool: true}, {Kind: JSONObject}})),
	JSONText(""), JSONText(" {\"a\" : 1, \"a\":2} "), JSONText("[1,\x00]"), JSONText("null"),
	mustArray(TypeInt64Array), mustArray(TypeInt64Array, Int64(-1)), mustArray(TypeInt64Array, Int64(-1), Null()),
	mustArray(TypeInt64Array, Int64(2)), mustArray(TypeInt64Array, Null()),
	mustArray(TypeFloat64Array, Float64(1.5)), mustArray(TypeNumericArray, MustNumeric("1.5")),
	mustArray(TypeNumericArray, MustNumeric("1.5"), Null()), mustArray(TypeNumericArray, mustScaled("1.5", 2)),
	mustArray(TypeTextArray, Text("a\x00"), Text("")), mustArray(TypeTextArray, Text("b")),
	mustArray(TypeBoolArray, False, Null()),
	mustRecord(), mustRecord(Int64(1), Text("a b")), mustRecord(Int64(1), Null()), mustRecord(Null(), mustArray(TypeInt64Array, Int64(2))),
	mustArray(TypeRecordArray), mustArray(TypeRecordArray, mustRecord(Int64(1)), Null(), mustRecord(Text("\x00"), MustNumeric("1.5"))),
}

func TestRoundTrip(t *testing.T) {
	for _, d := range sampleDatums {
		r := Pack(d, Int64(7), d)
		got, err := r.Unpack()
		if err != nil {
			t.Fatalf("unpack %v: %v", d, err)
		}
		want := []Datum{d, Int64(7), d}
		if CompareDatums(got, want) != 0 || !slices.Equal(got, want) {
			t.Errorf("round trip %v: got %v", want, got)
		}
		if r.Arity() != 3 {
			t.Errorf("arity of %v = %d", r, r.Arity())
		}
		c, err := r.Column(2)
		if err != nil || c != d {
			t.Errorf("column 2 of %v = %v, %v", r, c, err)
		}
		if len(r) != encodedLen(d)*2+fixedLen {
			t.Errorf("encodedLen(%v) disagrees with the encoding", d)
		}
	}
}

func TestCompareTable(t *testing.T) {
	tests := []struct {
		a, b Datum
		want int
	}{
		{Null(), Null(), 0},
		{Int64(1), Null(), -1},
		{Null(), Text("z"), 1},
		{Bool(false), Bool(true), -1},
		{Int64(-5), Int64(3), -1},
		{Float64(0), Float64(math.Copysign(0, -1)), 0},
		{Float64(math.NaN()), Float64(math.Inf(1)), 1},
		{Float64(math.NaN()), Float64(math.NaN()), 0},
		{Float64(-2), Float64(-1), -1},
		{Text("a"), Text("a\x00"), -1},
		{Text("ab"), Text("a\x00"), 1},
		{Timestamp(-1), Timestamp(0), -1},
	}
	for _, tt := range tests {
		if got := Compare(tt.a, tt.b); got != tt.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := bytes.Compare(Pack(tt.a), Pack(tt.b)); got != tt.want {
			t.Errorf("bytes.Compare(Pack(%v), Pack(%v)) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSampleOrderAgreesWithEncoding(t *testing.T) {
	for _, a := range sampleDatums {
		for _, b := range sampleDatums {
			if got, want := bytes.Compare(Pack(a), Pack(b)), Compare(a, b); got != want {
				t.Errorf("%v vs %v: encoding says %d, Compare says %d", a, b, got, want)
			}
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		d    Datum
		want string
	}{
		{Null(), "NULL"},
		{Bool(true), "t"},
		{Bool(false), "f"},
		{Int64(-42), "-42"},
		{Float64(1.5), "1.5"},
		{Float64(100), "100"},
		{Float64(1e14), "100000000000000"},
		{Float64(1e15), "1e+15"},
		{Float64(1.25e20), "1.25e+20"},
		{Float64(0.0001), "0.0001"},
		{Float64(0.00001), "1e-05"},
		{Float64(1.0 / 3), "0.3333333333333333"},
		{Float64(math.Copysign(0, -1)), "0"},
		{Float64(math.Inf(1)), "Infinity"},
		{Float64(math.Inf(-1)), "-Infinity"},
		{Float64(math.NaN()), "NaN"},
		{Text("it's"), "it's"},
		{Bytes([]byte{0xde, 0xad}), `\xdead`},
		{Timestamp(0), "1970-01-01 00:00:00"},
		{Timestamp(1_500_000), "1970-01-01 00:00:01.5"},
		{Timestamp(1_700_000_000_123_456), "2023-11-14 22:13:20.123456"},
		{Timestamp(-62135596800_000_000 - 86400_000_000), "0001-12-31 00:00:00 BC"},
		{Timestamp(TimestampInfinity), "infinity"},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String(%#v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	for _, d := range []int64{0, 1_500_000, 1_700_000_000_123_456, -1} {
		s := Timestamp(d).String()
		got, err := ParseTimestamp(s)
		if err != nil || got != d {
			t.Errorf("ParseTimestamp(%q) = %d, %v; want %d", s, got, err, d)
		}
	}
	if _, err := ParseTimestamp("yesterday"); err == nil {
		t.Error("ParseTimestamp(yesterday) succeeded")
	}
}

func TestCorruptRows(t *testing.T) {
	tests := map[string][]byte{
		"unknown tag":       {0x01},
		"truncated int":     {tagInt64, 1, 2},
		"unterminated text": {tagText, 'a', 'b'},
		"dangling escape":   {tagText, 'a', 0x00},
		"bad escape":        {tagText, 0x00, 0x02},
		"negative zero":     append([]byte{tagFloat64}, be(floatKey(math.Float64bits(math.Copysign(0, -1))))...),
		"odd NaN":           append([]byte{tagFloat64}, be(floatKey(0x7FF8000000000001))...),
		"trailing garbage":  append(Pack(Int64(1)), 0x77),
		// A numeric's scale suffix: never a zero excess, never above
		// 16383 in all, never on NaN or an infinity, never truncated.
		"numeric zero excess":      append(Pack(MustNumeric("1.5")), numericScaleMark, 0, 0),
		"numeric scale too large":  append(Pack(MustNumeric("1.5")), numericScaleMark, 0x3F, 0xFF),
		"numeric scale on NaN":     append(Pack(MustNumeric("NaN")), numericScaleMark, 0, 1),
		"numeric truncated scale":  append(Pack(MustNumeric("1.5")), numericScaleMark, 0),
		"numeric scale in array":   {arrayTag(TypeNumericArray), tagNumeric, numPosInf, numericScaleMark, 0, 1, arrayEnd},
		"numeric twice the suffix": append(Pack(mustScaled("1.5", 2)), numericScaleMark, 0, 1),
	}
	for name, b := range tests {
		if _, err := Row(b).Unpack(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Unpack error = %v, want ErrCorrupt", name, err)
		}
		if err := Row(b).Validate(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Validate error = %v, want ErrCorrupt", name, err)
		}
	}
}

func be(u uint64) []byte {
	var b [8]byte
	for i := range b {
		b[i] = byte(u >> (56 - 8*i))
	}
	return b[:]
}

func TestProjectAndColumn(t *testing.T) {
	r := Pack(Int64(1), Text("a\x00b"), Null(), Float64(2))
	p, err := Project(r, []int{3, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := Pack(Float64(2), Text("a\x00b"), Text("a\x00b")); !bytes.Equal(p, want) {
		t.Errorf("Project = %v, want %v", p, want)
	}
	if _, err := Project(r, []int{4}); !errors.Is(err, ErrArity) {
		t.Errorf("Project out of range: err = %v", err)
	}
	if _, err := r.Column(4); !errors.Is(err, ErrArity) {
		t.Errorf("Column out of range: err = %v", err)
	}
	if _, err := r.Column(-1); err == nil {
		t.Error("Column(-1) succeeded")
	}
}

func TestUnpackIntoDoesNotAllocate(t *testing.T) {
	r := Pack(Int64(1), Text("hello"), Float64(2), Null(), Bytes([]byte("xy")))
	dst := make([]Datum, 0, 8)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		dst, err = r.UnpackInto(dst)
		if err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("UnpackInto allocated %v times", allocs)
	}
	if dst[1].Text() != "hello" || len(dst) != 5 {
		t.Errorf("UnpackInto = %v", dst)
	}
}

func TestHashIsFNV1a(t *testing.T) {
	// Known FNV-1a 64 test vectors: the hash must match other processes
	// and other implementations exactly.
	if got := Hash(nil); got != 0xcbf29ce484222325 {
		t.Errorf("Hash(\"\") = %#x", got)
	}
	if got := Hash([]byte("a")); got != 0xaf63dc4c8601ec8c {
		t.Errorf("Hash(\"a\") = %#x", got)
	}
	if got := Hash([]byte("foobar")); got != 0x85944171f73967e8 {
		t.Errorf("Hash(\"foobar\") = %#x", got)
	}
}

func TestDatumJSON(t *testing.T) {
	for _, d := range sampleDatums {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("marshal %v: %v", d, err)
		}
		var got Datum
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if got != d {
			t.Errorf("JSON round trip %v via %s = %v", d, b, got)
		}
	}
	for _, bad := range []string{`{}`, `{"int64":1,"bool":true}`, `{"float64":"x"}`, `{"nope":1}`, `{"bytes":"!!"}`} {
		var d Datum
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("unmarshal %s succeeded: %v", bad, d)
		}
	}
}

func TestRelationDesc(t *testing.T) {
	d := NewRelationDesc([]string{"a", "b"}, []ColumnType{{TypeInt64, false}, {TypeText, true}})
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := d.Check([]Datum{Int64(1), Null()}); err != nil {
		t.Error(err)
	}
	if err := d.Check([]Datum{Null(), Null()}); err == nil {
		t.Error("NULL accepted by a non-nullable column")
	}
	if err := d.Check([]Datum{Int64(1)}); !errors.Is(err, ErrArity) {
		t.Errorf("short row: %v", err)
	}
	if err := d.Check([]Datum{Text("x"), Null()}); err == nil {
		t.Error("text accepted by an int64 column")
	}
	if err := (RelationDesc{Names: []string{"a"}}).Validate(); err == nil {
		t.Error("names without types validated")
	}
	if err := (RelationDesc{Names: []string{"a"}, Types: []ColumnType{{}}}).Validate(); err == nil {
		t.Error("invalid type validated")
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"names":["a","b"],"types":[{"type":"int64","nullable":false},{"type":"text","nullable":true}]}` {
		t.Errorf("desc JSON = %s", b)
	}
	var back RelationDesc
	if err := json.Unmarshal(b, &back); err != nil || !back.Equal(d) {
		t.Errorf("desc JSON round trip: %v, %v", back, err)
	}
}

// genDatum draws datums biased towards the edge cases of the encoding.
func genDatum() *rapid.Generator[Datum] {
	return rapid.Custom(func(t *rapid.T) Datum {
		switch rapid.IntRange(0, 8).Draw(t, "kind") {
		case 0:
			return Null()
		case 1:
			return Bool(rapid.Bool().Draw(t, "b"))
		case 2:
			return Int64(rapid.Int64().Draw(t, "i"))
		case 3:
			return Float64(rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1}).Draw(t, "special"))
		case 4:
			return Float64(rapid.Float64().Draw(t, "f"))
		case 5:
			return Text(string(rapid.SliceOfN(rapid.SampledFrom([]byte{0, 1, 'a', 0xff}), 0, 4).Draw(t, "s")))
		case 6:
			return Bytes(rapid.SliceOfN(rapid.SampledFrom([]byte{0, 1, 0xfe, 0xff}), 0, 4).Draw(t, "bs"))
		case 8:
			v := rapid.SampledFrom([]string{"-1.5", "-1", "0", "0.05", "1", "1.5", "NaN"}).Draw(t, "num")
			return mustScaled(v, rapid.IntRange(0, 3).Draw(t, "scale"))
		default:
			return Timestamp(rapid.Int64().Draw(t, "ts"))
		}
	})
}

func TestOrderProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.SliceOfN(genDatum(), 0, 4).Draw(t, "x")
		y := rapid.SliceOfN(genDatum(), 0, 4).Draw(t, "y")
		px, py := Pack(x...), Pack(y...)
		if got, want := bytes.Compare(px, py), CompareDatums(x, y); got != want {
			t.Fatalf("bytes.Compare = %d, CompareDatums = %d for %v vs %v", got, want, x, y)
		}
		// Concatenation of encodings is the encoding of the concatenation.
		if cat := append(slices.Clone(px), py...); !bytes.Equal(cat, Pack(append(slices.Clone(x), y...)...)) {
			t.Fatalf("append(Pack(x), Pack(y)) != Pack(x ++ y)")
		}
		// Round trip, via both decoders.
		back, err := px.Unpack()
		if err != nil || CompareDatums(back, x) != 0 {
			t.Fatalf("Unpack(%v) = %v, %v", x, back, err)
		}
		if (CompareDatums(x, y) == 0) != (Hash(px) == Hash(py) && bytes.Equal(px, py)) {
			t.Fatalf("equal tuples must have equal bytes: %v %v", x, y)
		}
	})
}
