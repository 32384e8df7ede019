package row

import (
	"errors"
	"testing"
	"time"
)

func TestCivilRoundTrip(t *testing.T) {
	for days := int64(MinDateDays); days <= MaxDateDays; days += 9973 {
		y, m, d := CivilFromDays(days)
		if got := DaysFromCivil(y, m, d); got != days {
			t.Fatalf("days %d -> %d-%d-%d -> %d", days, y, m, d, got)
		}
		if d < 1 || d > DaysInMonth(y, m) {
			t.Fatalf("days %d -> invalid %d-%d-%d", days, y, m, d)
		}
	}
	if y, m, d := CivilFromDays(0); y != 1970 || m != 1 || d != 1 {
		t.Errorf("epoch = %d-%d-%d", y, m, d)
	}
}

func TestDateText(t *testing.T) {
	tests := []struct {
		in, out string
	}{
		{"2024-01-02", "2024-01-02"},
		{" 20240229 ", "2024-02-29"},
		{"1999-12-31 23:59:59", "1999-12-31"},
		{"0044-03-15 BC", "0044-03-15 BC"},
		{"4714-11-24 BC", "4714-11-24 BC"},
		{"5874897-12-31", "5874897-12-31"},
		{"infinity", "infinity"},
		{"-INFINITY", "-infinity"},
		{"epoch", "1970-01-01"},
	}
	for _, tt := range tests {
		d, err := ParseDate(tt.in)
		if err != nil {
			t.Errorf("ParseDate(%q): %v", tt.in, err)
			continue
		}
		if got := string(AppendDate(nil, d)); got != tt.out {
			t.Errorf("ParseDate(%q) prints %q, want %q", tt.in, got, tt.out)
		}
	}
}

func TestDateTimeErrors(t *testing.T) {
	tests := []struct {
		in   string
		typ  Type
		kind ParseErrorKind
	}{
		{"foo", TypeDate, ErrSyntax},
		{"2024-13-01", TypeDate, ErrFieldRange},
		{"2024-02-30", TypeDate, ErrFieldRange},
		{"0000-01-01", TypeDate, ErrFieldRange},
		{"5874898-01-01", TypeDate, ErrValueRange},
		{"4714-11-23 BC", TypeDate, ErrValueRange},
		{"294248-01-01", TypeTimestamp, ErrValueRange},
		{"25:00:00", TypeTime, ErrFieldRange},
		{"12:61", TypeTime, ErrFieldRange},
		{"2024-01-01 10:00 Mars/Base", TypeTimestampTZ, ErrZone},
		{"today", TypeDate, ErrUnsupported},
		{"2024-01-01 10:00 bc bc", TypeTimestamp, ErrSyntax},
		{"", TypeTimestamp, ErrSyntax},
	}
	for _, tt := range tests {
		var err error
		switch tt.typ {
		case TypeDate:
			_, err = ParseDate(tt.in)
		case TypeTime:
			_, err = ParseTime(tt.in)
		case TypeTimestamp:
			_, err = ParseTimestamp(tt.in)
		case TypeTimestampTZ:
			_, err = ParseTimestampTZ(tt.in, nil)
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Kind != tt.kind {
			t.Errorf("parse %s %q: err %v, want kind %d", tt.typ, tt.in, err, tt.kind)
		}
	}
}

func TestTimestampText(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in      string
		loc     *time.Location
		ts, tsz string // output of timestamp and of timestamptz shown in loc
	}{
		{"2024-01-02 03:04:05.678", time.UTC, "2024-01-02 03:04:05.678", "2024-01-02 03:04:05.678+00"},
		{"2024-01-02T03:04:05", ny, "2024-01-02 03:04:05", "2024-01-02 03:04:05-05"},
		{"2024-07-02 03:04:05+02", ny, "2024-07-02 03:04:05", "2024-07-01 21:04:05-04"},
		{"2024-07-02 03:04:05 Z", ny, "2024-07-02 03:04:05", "2024-07-01 23:04:05-04"},
		{"2024-07-02 03:04:05 europe/paris", time.UTC, "2024-07-02 03:04:05", "2024-07-02 01:04:05+00"},
		{"2024-07-02 03:04:05.0000005", time.UTC, "2024-07-02 03:04:05", "2024-07-02 03:04:05+00"},
		{"2024-07-02 03:04:05.0000015", time.UTC, "2024-07-02 03:04:05.000002", "2024-07-02 03:04:05.000002+00"},
		{"0001-01-01 00:00:00 BC", time.UTC, "0001-01-01 00:00:00 BC", "0001-01-01 00:00:00+00 BC"},
		{"1900-01-01 00:00 +05:30", time.UTC, "1900-01-01 00:00:00", "1899-12-31 18:30:00+00"},
	}
	for _, tt := range tests {
		ts, err := ParseTimestamp(tt.in)
		if err != nil {
			t.Errorf("ParseTimestamp(%q): %v", tt.in, err)
			continue
		}
		if got := string(AppendTimestamp(nil, ts)); got != tt.ts {
			t.Errorf("timestamp %q prints %q, want %q", tt.in, got, tt.ts)
		}
		tz, err := ParseTimestampTZ(tt.in, tt.loc)
		if err != nil {
			t.Errorf("ParseTimestampTZ(%q): %v", tt.in, err)
			continue
		}
		if got := string(AppendTimestampTZ(nil, tz, tt.loc)); got != tt.tsz {
			t.Errorf("timestamptz %q prints %q, want %q", tt.in, got, tt.tsz)
		}
	}
}

func TestTimeText(t *testing.T) {
	for in, want := range map[string]string{
		"03:04":           "03:04:00",
		"03:04:05.5":      "03:04:05.5",
		"24:00:00":        "24:00:00",
		"2024-01-01 1:02": "01:02:00",
		"10:00:00+02":     "10:00:00",
	} {
		us, err := ParseTime(in)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", in, err)
			continue
		}
		if got := string(AppendTime(nil, us)); got != want {
			t.Errorf("time %q prints %q, want %q", in, got, want)
		}
	}
}

func TestIntervalText(t *testing.T) {
	tests := []struct{ in, out string }{
		{"1 year 2 mons 3 days 04:05:06", "1 year 2 mons 3 days 04:05:06"},
		{"1 day 2 hours", "1 day 02:00:00"},
		{"1 mon", "1 mon"},
		{"0", "00:00:00"},
		{"-1 days +02:00", "-1 days +02:00:00"},
		{"1.5 days", "1 day 12:00:00"},
		{"1.5 months", "1 mon 15 days"},
		{"1.5 years", "1 year 6 mons"},
		{"2 weeks", "14 days"},
		{"1 day ago", "-1 days"},
		{"@ 3 minutes 4.5 seconds", "00:03:04.5"},
		{"1 12:00", "1 day 12:00:00"},
		{"P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"},
		{"PT1.5S", "00:00:01.5"},
		{"-1 year -2 mons", "-1 years -2 mons"},
		{"100 hours", "100:00:00"},
		{"1 day -1 seconds", "1 day -00:00:01"},
		{"10min", "00:10:00"},
	}
	for _, tt := range tests {
		iv, err := ParseInterval(tt.in)
		if err != nil {
			t.Errorf("ParseInterval(%q): %v", tt.in, err)
			continue
		}
		if got := string(AppendInterval(nil, iv)); got != tt.out {
			t.Errorf("interval %q prints %q, want %q", tt.in, got, tt.out)
		}
	}
	for _, bad := range []string{"", "1 fortnight", "1 day 2 days", "P", "P1H", "day", "1 2"} {
		if _, err := ParseInterval(bad); err == nil {
			t.Errorf("ParseInterval(%q) succeeded", bad)
		}
	}
	var pe *ParseError
	if _, err := ParseInterval("2147483648 months"); !errors.As(err, &pe) || pe.Kind != ErrIntervalField {
		t.Errorf("overflowing months: %v", err)
	}
}

func TestIntervalOrder(t *testing.T) {
	mon := Interval{Months: 1}
	days30 := Interval{Days: 30}
	if mon.CompareLength(days30) != 0 {
		t.Error("1 mon and 30 days have different lengths")
	}
	if mon.Compare(days30) == 0 {
		t.Error("1 mon and 30 days compare identical")
	}
	if (Interval{Days: 1}).CompareLength(Interval{Micros: MicrosPerDay}) != 0 {
		t.Error("1 day != 24 hours")
	}
	if (Interval{Days: 1, Micros: -1}).CompareLength(Interval{Micros: MicrosPerDay}) >= 0 {
		t.Error("1 day - 1us >= 24 hours")
	}
}

// FuzzParseDateTime checks that the date/time and interval parsers never
// panic, and that what they accept prints as text that parses back to
// the same value.
func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{"2024-01-02", "2024-01-02 03:04:05.678+02", "infinity", "0044-03-15 BC",
		"24:00", "1 year 2 mons -3 days 04:05:06 ago", "P1Y2M3DT4H5M6.5S", "20240102T0304", "@ 1.5 weeks",
		"2024-07-02 03:04:05 america/new_york", "9999999-01-01", "-178000000 years"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseDate(s); err == nil {
			if back, err := ParseDate(string(AppendDate(nil, d))); err != nil || back != d {
				t.Fatalf("date %q -> %d -> %d, %v", s, d, back, err)
			}
		}
		if us, err := ParseTime(s); err == nil {
			if back, err := ParseTime(string(AppendTime(nil, us))); err != nil || back != us {
				t.Fatalf("time %q -> %d -> %d, %v", s, us, back, err)
			}
		}
		if us, err := ParseTimestamp(s); err == nil {
			if back, err := ParseTimestamp(string(AppendTimestamp(nil, us))); err != nil || back != us {
				t.Fatalf("timestamp %q -> %d -> %d, %v", s, us, back, err)
			}
		}
		if us, err := ParseTimestampTZ(s, time.UTC); err == nil {
			if back, err := ParseTimestampTZ(string(AppendTimestampTZ(nil, us, time.UTC)), time.UTC); err != nil || back != us {
				t.Fatalf("timestamptz %q -> %d -> %d, %v", s, us, back, err)
			}
		}
		if iv, err := ParseInterval(s); err == nil {
			txt := string(AppendInterval(nil, iv))
			if back, err := ParseInterval(txt); err != nil || back != iv {
				t.Fatalf("interval %q -> %+v -> %q -> %+v, %v", s, iv, txt, back, err)
			}
			if r := Pack(IntervalDatum(iv)); r.Validate() != nil {
				t.Fatalf("interval %+v does not encode: %v", iv, r.Validate())
			}
		}
	})
}
