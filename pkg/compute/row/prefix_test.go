package row

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// maskedUnpack is the reference for UnpackUsed: every column decoded,
// then the unused ones replaced by NULL.
func maskedUnpack(t interface{ Fatalf(string, ...any) }, r Row, used []bool) []Datum {
	ds, err := r.Unpack()
	if err != nil {
		t.Fatalf("unpack %x: %v", []byte(r), err)
	}
	for i := range ds {
		if i >= len(used) || !used[i] {
			ds[i] = Null()
		}
	}
	return ds
}

// TestUnpackUsedMatchesUnpack: over random rows of every kind of datum and
// random sets of used columns, UnpackUsed gives what a full decode gives
// with the unused columns NULL, and ColumnSpan finds the spans Spans finds.
func TestUnpackUsedMatchesUnpack(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ds := rapid.SliceOfN(rapid.SampledFrom(sampleDatums), 0, 6).Draw(rt, "datums")
		used := rapid.SliceOfN(rapid.Bool(), 0, 8).Draw(rt, "used")
		r := Pack(ds...)
		got, err := r.UnpackUsed(nil, used, len(ds))
		if err != nil {
			rt.Fatalf("UnpackUsed(%v): %v", r, err)
		}
		if want := maskedUnpack(rt, r, used); !slices.Equal(got, want) {
			rt.Fatalf("UnpackUsed(%v, %v) = %v, want %v", r, used, got, want)
		}
		ends, _ := r.Spans(nil)
		for i := range ds {
			start, end, err := r.ColumnSpan(i)
			if err != nil || end != ends[i] || (i > 0 && start != ends[i-1]) {
				rt.Fatalf("ColumnSpan(%d) of %v = %d, %d, %v; ends %v", i, r, start, end, err, ends)
			}
		}
		if _, _, err := r.ColumnSpan(len(ds)); !errors.Is(err, ErrArity) {
			rt.Fatalf("ColumnSpan past the end: %v", err)
		}
	})
}

func TestUnpackUsedStopsAtTheLastUsedColumn(t *testing.T) {
	r := Pack(Int64(1), Float64(2), Text("x\x00y"), Int64(4))
	// A corrupt tail after the last used column is not read.
	corrupt := append(Pack(Int64(1), Float64(2)), 0xEE)
	got, err := corrupt.UnpackUsed(nil, []bool{true, true}, 4)
	if err != nil || !slices.Equal(got, []Datum{Int64(1), Float64(2), Null(), Null()}) {
		t.Errorf("UnpackUsed of a corrupt tail = %v, %v", got, err)
	}
	// A row shorter than the last used column.
	if _, err := Pack(Int64(1)).UnpackUsed(nil, []bool{false, true}, 2); !errors.Is(err, ErrArity) {
		t.Errorf("short row: %v", err)
	}
	// Used columns at or past the arity are ignored.
	got, err = r.UnpackUsed(nil, []bool{true, false, false, false, true}, 4)
	if err != nil || !slices.Equal(got, []Datum{Int64(1), Null(), Null(), Null()}) {
		t.Errorf("UnpackUsed beyond arity = %v, %v", got, err)
	}
	// The escaped text between is stepped over, not copied.
	var buf []Datum
	if n := testing.AllocsPerRun(100, func() { buf, _ = r.UnpackUsed(buf, []bool{true, false, false, true}, 4) }); n != 0 {
		t.Errorf("UnpackUsed allocated %v times", n)
	}
}

// TestCompareEncoded: for two datums of one type, comparing their
// encodings is Compare; for two types it says nothing.
func TestCompareEncoded(t *testing.T) {
	for _, a := range sampleDatums {
		for _, b := range sampleDatums {
			c, ok := CompareEncoded(Pack(a), Pack(b))
			if same := a.Type() == b.Type(); ok != same {
				t.Fatalf("CompareEncoded(%v, %v) ok = %v, same type %v", a, b, ok, same)
			}
			if ok && c != Compare(a, b) {
				t.Fatalf("CompareEncoded(%v, %v) = %d, Compare %d", a, b, c, Compare(a, b))
			}
		}
		if EncodedIsNull(Pack(a)) != a.IsNull() {
			t.Fatalf("EncodedIsNull(%v)", a)
		}
	}
}

// FuzzUnpackUsed checks that the prefix readers never panic on arbitrary
// bytes, fail only with ErrCorrupt or ErrArity, and agree with a full
// decode wherever the row is valid.
func FuzzUnpackUsed(f *testing.F) {
	for _, d := range sampleDatums {
		f.Add([]byte(Pack(Int64(1), d, Text("x\x00y"), Null())), uint8(0b1010), uint8(4))
	}
	f.Add([]byte{tagInt64, 1, 2}, uint8(1), uint8(1))
	f.Add([]byte{tagText, 'a', 0, 0x02}, uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, mask, arity uint8) {
		r := Row(b)
		used := make([]bool, 8)
		for i := range used {
			used[i] = mask&(1<<i) != 0
		}
		n := int(arity % 10)
		got, err := r.UnpackUsed(nil, used, n)
		for i := 0; i < 10; i++ {
			if _, _, err := r.ColumnSpan(i); err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrArity) {
				t.Fatalf("ColumnSpan(%d): %v", i, err)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrArity) {
				t.Fatalf("UnpackUsed: %v", err)
			}
			return
		}
		if len(got) != n {
			t.Fatalf("UnpackUsed gave %d datums, want %d", len(got), n)
		}
		for i, d := range got {
			if i >= len(used) || !used[i] {
				if !d.IsNull() {
					t.Fatalf("unused column %d = %v", i, d)
				}
				continue
			}
			start, end, err := r.ColumnSpan(i)
			if err != nil {
				t.Fatalf("column %d decoded but has no span: %v", i, err)
			}
			if re := Pack(d); !bytes.Equal(re, r[start:end]) {
				t.Fatalf("column %d = %v, encoded %x, span %x", i, d, re, r[start:end])
			}
		}
		if r.Validate() == nil && r.Arity() == n {
			if want := maskedUnpack(t, r, used); !slices.Equal(got, want) {
				t.Fatalf("UnpackUsed = %v, full decode %v", got, want)
			}
		}
	})
}
