package row

import (
	"bytes"
	"errors"
	"testing"

	"pgregory.net/rapid"
)

func mustRecord(fields ...Datum) Datum {
	d, err := Record(fields)
	if err != nil {
		panic(err)
	}
	return d
}

// pgRecordCmp is PostgreSQL's record_cmp for two records of one shape:
// field by field, NULL equal to NULL and after every value, which is
// array_cmp's rule for elements (pgArrayCmp) over equal lengths.
func pgRecordCmp(a, b []Datum) int { return pgArrayCmp(a, b) }

// TestRecordEncodingOrderIsPostgresRecordOrder checks that records of
// (int, text) and arrays of them order by their bytes as record_cmp and
// array_cmp over record_cmp order them: ORDER BY of a SEARCH column.
func TestRecordEncodingOrderIsPostgresRecordOrder(t *testing.T) {
	field := func(gen *rapid.Generator[Datum]) *rapid.Generator[Datum] {
		return rapid.OneOf(gen, rapid.Just(Null()))
	}
	ints := field(rapid.Custom(func(t *rapid.T) Datum { return Int64(rapid.Int64Range(-3, 3).Draw(t, "i")) }))
	texts := field(rapid.Custom(func(t *rapid.T) Datum { return Text(rapid.StringMatching(`[ab\x00]{0,2}`).Draw(t, "s")) }))
	fields := rapid.Custom(func(t *rapid.T) []Datum { return []Datum{ints.Draw(t, "a"), texts.Draw(t, "b")} })
	rapid.Check(t, func(t *rapid.T) {
		x, y := fields.Draw(t, "x"), fields.Draw(t, "y")
		rx, ry := mustRecord(x...), mustRecord(y...)
		if got, want := sign(bytes.Compare(Pack(rx), Pack(ry))), pgRecordCmp(x, y); got != want {
			t.Fatalf("bytes order %d, record_cmp %d: %v vs %v", got, want, rx, ry)
		}
		if got, want := sign(Compare(rx, ry)), pgRecordCmp(x, y); got != want {
			t.Fatalf("Compare %d, record_cmp %d: %v vs %v", got, want, rx, ry)
		}
		px := rapid.SliceOfN(fields, 0, 3).Draw(t, "px")
		py := rapid.SliceOfN(fields, 0, 3).Draw(t, "py")
		ax, ay := recordArray(px), recordArray(py)
		if got, want := sign(bytes.Compare(Pack(ax), Pack(ay))), pathCmp(px, py); got != want {
			t.Fatalf("record[] bytes order %d, array_cmp %d: %v vs %v", got, want, ax, ay)
		}
	})
}

func recordArray(rs [][]Datum) Datum {
	elems := make([]Datum, len(rs))
	for i, r := range rs {
		elems[i] = mustRecord(r...)
	}
	return mustArray(TypeRecordArray, elems...)
}

// pathCmp is array_cmp over record_cmp: elements, then length.
func pathCmp(a, b [][]Datum) int {
	for i := range min(len(a), len(b)) {
		if c := pgRecordCmp(a[i], b[i]); c != 0 {
			return c
		}
	}
	return sign(len(a) - len(b))
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

func TestRecordText(t *testing.T) {
	for _, tc := range []struct {
		d    Datum
		want string
	}{
		{mustRecord(Int64(1), Int64(2)), "(1,2)"},
		{mustRecord(Int64(1), Null()), "(1,)"},
		{mustRecord(Text(""), Text("a b"), Text(`q"b\`), Text("(x)"), Text("a,b")), `("","a b","q""b\\","(x)","a,b")`},
		{mustRecord(mustArray(TypeInt64Array, Int64(1), Int64(2))), `("{1,2}")`},
		{mustArray(TypeRecordArray, mustRecord(Int64(1), Int64(2)), mustRecord(Int64(3), Null())), `{"(1,2)","(3,)"}`},
		{mustArray(TypeRecordArray, mustRecord(Text("a b"))), `{"(\"a b\")"}`},
		{mustArray(TypeRecordArray, mustRecord(Int64(1)), Null()), `{(1),NULL}`},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.d.Type(), got, tc.want)
		}
	}
	if TypeRecord.PGName() != "record" || TypeRecordArray.PGName() != "record[]" {
		t.Errorf("PGName: %s, %s", TypeRecord.PGName(), TypeRecordArray.PGName())
	}
}

// TestRecordDecodingRejectsNesting: a record inside a record, or an
// array of records inside one, is not an encoding (decoding would
// otherwise recurse without bound).
func TestRecordDecodingRejectsNesting(t *testing.T) {
	if _, err := Record([]Datum{mustRecord(Int64(1))}); err == nil {
		t.Fatal("Record accepted a record field")
	}
	inner := Pack(mustRecord(Int64(1)))
	for _, b := range [][]byte{
		append(append([]byte{tagRecord}, inner...), arrayEnd),
		append(append([]byte{tagRecord}, Pack(mustArray(TypeRecordArray))...), arrayEnd),
		{tagRecord, tagInt64},
		{tagRecordArray, tagInt64, 0, 0, 0, 0, 0, 0, 0, 0, arrayEnd},
	} {
		if _, err := Row(b).Unpack(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%x decoded: %v", b, err)
		}
	}
}
