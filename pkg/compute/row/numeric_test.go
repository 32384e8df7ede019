package row

import (
	"bytes"
	"errors"
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
