package row

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// TestNumericOrder checks that values listed in increasing order encode
// in increasing byte order, and that Compare agrees (the encoding is the
// comparison for numerics).
func TestNumericOrder(t *testing.T) {
	vals := []string{"-Infinity", "-1e20", "-123.45", "-123.4", "-100", "-99.999", "-1", "-0.5", "-0.05",
		"-1e-16383", "0", "1e-16383", "0.05", "0.5", "0.50001", "1", "1.0000000001", "9.9", "10", "99.99", "100",
		"123.4", "123.45", "1e20", "Infinity", "NaN"}
	for i := 1; i < len(vals); i++ {
		a, b := MustNumeric(vals[i-1]), MustNumeric(vals[i])
		if Compare(a, b) >= 0 || bytes.Compare(Pack(a), Pack(b)) >= 0 {
			t.Errorf("%s should sort before %s", vals[i-1], vals[i])
		}
	}
}

// TestNumericCanonical checks that values equal as numbers are one datum
// whatever their scale, so they group, join and hash as equal.
func TestNumericCanonical(t *testing.T) {
	for _, pair := range [][2]string{{"1.0", "1.00"}, {"1", "1.000"}, {"-0", "0.000"}, {"100", "1e2"}, {"0.10", "0.1"}} {
		a, b := MustNumeric(pair[0]), MustNumeric(pair[1])
		if a != b || !bytes.Equal(Pack(a), Pack(b)) {
			t.Errorf("%s and %s are different datums", pair[0], pair[1])
		}
	}
}

func TestNumericText(t *testing.T) {
	tests := []struct {
		in    string
		scale int
		want  string
	}{
		{"1.50", 0, "1.5"}, {"1.5", 2, "1.50"}, {"100", 0, "100"}, {"1e2", 2, "100.00"}, {"-0.001", 0, "-0.001"},
		{"0", 3, "0.000"}, {"NaN", 2, "NaN"}, {"-Infinity", 0, "-Infinity"}, {"123456789012345678901234567890.5", 0, "123456789012345678901234567890.5"},
	}
	for _, tc := range tests {
		if got := string(AppendNumeric(nil, MustNumeric(tc.in), tc.scale)); got != tc.want {
			t.Errorf("AppendNumeric(%s, %d) = %s, want %s", tc.in, tc.scale, got, tc.want)
		}
	}
}

func TestNumericRange(t *testing.T) {
	if _, err := Numeric(apd.New(1, NumericMaxWeight-1)); err != nil {
		t.Errorf("1e131071: %v", err)
	}
	if _, err := Numeric(apd.New(1, NumericMaxWeight)); !errors.Is(err, ErrNumericOverflow) {
		t.Errorf("1e131072: %v, want overflow", err)
	}
	// Fractional digits beyond 16383 round half away from zero.
	d, err := Numeric(apd.New(5, -NumericMaxScale-1))
	if err != nil || d != MustNumeric("1e-16383") {
		t.Errorf("5e-16384 = %v, %v; want 1e-16383", d, err)
	}
}

func TestParseUUID(t *testing.T) {
	want := "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
	for _, in := range []string{want, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
		"a0eebc999c0b4ef8bb6d6bb9bd380a11", "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}"} {
		u, err := ParseUUID(in)
		if err != nil || UUID(u).String() != want {
			t.Errorf("ParseUUID(%q) = %v, %v", in, UUID(u), err)
		}
	}
	for _, in := range []string{"", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111",
		"-a0eebc999c0b4ef8bb6d6bb9bd380a11", "a0eebc999c0b4ef8bb6d6bb9bd380a11-", "a0e-ebc999c0b4ef8bb6d6bb9bd380a11", "g0eebc999c0b4ef8bb6d6bb9bd380a11"} {
		if _, err := ParseUUID(in); err == nil {
			t.Errorf("ParseUUID(%q) succeeded", in)
		}
	}
}

// mustScaled parses s as a numeric datum at display scale scale.
func mustScaled(s string, scale int) Datum {
	x, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	d, err := NumericScaled(x, scale)
	if err != nil {
		panic(err)
	}
	return d
}

// TestNumericScaled checks that a numeric datum carries PostgreSQL's
// display scale: rounded half away from zero or padded, printed with it,
// and NumericExact taking it from the exponent.
func TestNumericScaled(t *testing.T) {
	tests := []struct {
		in    string
		scale int
		want  string
	}{
		{"1.5", 2, "1.50"}, {"1.50", 0, "2"}, {"1.455", 2, "1.46"}, {"-1.455", 2, "-1.46"}, {"0", 2, "0.00"},
		{"-0.001", 2, "0.00"}, {"100", 0, "100"}, {"1e2", 3, "100.000"}, {"2.5", -3, "3"},
		{"NaN", 2, "NaN"}, {"-Infinity", 2, "-Infinity"}, {"0.1", NumericMaxScale + 5, "0.1" + strings.Repeat("0", NumericMaxScale-1)},
	}
	for _, tc := range tests {
		d := mustScaled(tc.in, tc.scale)
		if got := d.String(); got != tc.want {
			t.Errorf("NumericScaled(%s, %d) = %s, want %s", tc.in, tc.scale, got, tc.want)
		}
		if got := string(AppendNumeric(nil, d, 0)); got != tc.want {
			t.Errorf("AppendNumeric(%s at %d) = %s, want %s", tc.in, tc.scale, got, tc.want)
		}
	}
	exact := map[string]string{"1.50": "1.50", "1e2": "100", "0.000": "0.000", "-2.10": "-2.10", "12": "12"}
	for in, want := range exact {
		x, _, _ := apd.NewFromString(in)
		d, err := NumericExact(x)
		if err != nil || d.String() != want {
			t.Errorf("NumericExact(%s) = %v, %v; want %s", in, d, err, want)
		}
		if back := d.DecimalDisplay().Text('f'); back != want {
			t.Errorf("DecimalDisplay(%s) = %s, want %s", in, back, want)
		}
	}
}

// TestNumericScaleIdentity checks that datums differing only in scale are
// different datums and rows (storage reads back what was written) that
// sort by value, then scale, and that NumericKey makes them one.
func TestNumericScaleIdentity(t *testing.T) {
	a, b := mustScaled("1.5", 1), mustScaled("1.5", 2)
	if a == b || bytes.Equal(Pack(a), Pack(b)) {
		t.Fatalf("1.5 and 1.50 are one datum")
	}
	if a.NumericKey() != b.NumericKey() || a.NumericKey() != MustNumeric("1.5") {
		t.Errorf("NumericKey(1.50) = %v, want 1.5", b.NumericKey())
	}
	order := []Datum{mustScaled("-1.5", 3), mustScaled("-1.5", 1), mustScaled("-1.5", 2), mustScaled("1.49", 3),
		a, b, mustScaled("1.5", 300), mustScaled("1.51", 2)}
	// -1.5 at any scale is one value: they sort by scale.
	order[0], order[1], order[2] = order[1], order[2], order[0]
	for i := 1; i < len(order); i++ {
		x, y := order[i-1], order[i]
		if Compare(x, y) >= 0 || bytes.Compare(Pack(x, Int64(9)), Pack(y, Int64(0))) >= 0 {
			t.Errorf("%v (scale %d) should sort before %v (scale %d)", x, x.NumericScale(), y, y.NumericScale())
		}
	}
	got, err := Pack(b, a).Unpack()
	if err != nil || got[0] != b || got[1] != a || got[0].NumericScale() != 2 {
		t.Errorf("round trip of 1.50, 1.5 = %v, %v", got, err)
	}
}

// TestNumericOldRowsDecode checks that a row written before numerics
// carried a scale (tag and key, no suffix) decodes as the value at its
// minimal scale, and that such a value still encodes to those bytes.
func TestNumericOldRowsDecode(t *testing.T) {
	old := []byte{tagNumeric, numPos, 0x80, 0, 0, 1, 2, 6, 0, tagInt64} // 1.5, then an int64
	old = append(old, be(1<<63|7)...)
	ds, err := Row(old).Unpack()
	if err != nil || len(ds) != 2 || ds[0] != MustNumeric("1.5") || ds[0].NumericScale() != 1 || ds[0].String() != "1.5" {
		t.Fatalf("old row decodes as %v, %v", ds, err)
	}
	if !bytes.Equal(Pack(ds...), old) {
		t.Errorf("old row re-encodes as %x, want %x", Pack(ds...), old)
	}
}
