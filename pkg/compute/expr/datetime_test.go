package expr

import (
	"math"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func lit(t *testing.T, typ row.Type, s string) Expr {
	t.Helper()
	d, err := ParseTemporal(s, typ, nil)
	if err != nil {
		t.Fatalf("parse %s %q: %v", typ, s, err)
	}
	return Literal(d)
}

func text(s string) Expr { return Literal(row.Text(s)) }

// TestDatetimeEval checks date/time operators and functions, and the
// SQLSTATE of their failures, value by value.
func TestDatetimeEval(t *testing.T) {
	ts := func(s string) Expr { return lit(t, row.TypeTimestamp, s) }
	tz := func(s string) Expr { return lit(t, row.TypeTimestampTZ, s) }
	date := func(s string) Expr { return lit(t, row.TypeDate, s) }
	iv := func(s string) Expr { return lit(t, row.TypeInterval, s) }
	tm := func(s string) Expr { return lit(t, row.TypeTime, s) }
	i64 := func(v int64) Expr { return Literal(row.Int64(v)) }
	tests := []struct {
		name string
		e    Expr
		want string // text output, or the SQLSTATE of the error
	}{
		{"month end clamps", Call(FuncAdd, ts("2024-01-31 10:00"), iv("1 mon")), "2024-02-29 10:00:00"},
		{"leap year back", Call(FuncSub, date("2024-02-29"), iv("1 year")), "2023-02-28 00:00:00"},
		{"months then days", Call(FuncAdd, ts("2024-01-31"), iv("1 mon 1 day")), "2024-03-01 00:00:00"},
		{"negative months", Call(FuncAdd, ts("2024-03-31"), iv("-1 mon")), "2024-02-29 00:00:00"},
		{"date plus int", Call(FuncAdd, i64(1), date("2024-12-31")), "2025-01-01"},
		{"date minus date", Call(FuncSub, date("2024-03-01"), date("2024-02-01")), "29"},
		{"date plus time", Call(FuncAdd, tm("10:30"), date("2024-01-01")), "2024-01-01 10:30:00"},
		{"date out of range", Call(FuncAdd, date("5874897-12-31"), i64(1)), CodeDatetimeFieldOverflow},
		{"timestamp out of range", Call(FuncSub, ts("4714-11-24 BC"), iv("1 usec")), CodeDatetimeFieldOverflow},
		{"infinite minus", Call(FuncSub, ts("infinity"), ts("2024-01-01")), CodeDatetimeFieldOverflow},
		{"timestamp difference", Call(FuncSub, ts("2024-01-02 10:00"), ts("2024-01-01 09:00")), "1 day 01:00:00"},
		{"negative difference", Call(FuncSub, ts("2024-01-01"), ts("2024-01-02 10:00")), "-1 days -10:00:00"},
		{"time wraps", Call(FuncAdd, tm("23:00"), iv("2 hours")), "01:00:00"},
		{"time minus time", Call(FuncSub, tm("01:00"), tm("23:00")), "-22:00:00"},
		{"interval times float", Call(FuncMul, iv("1 mon"), Literal(row.Float64(1.5))), "1 mon 15 days"},
		{"interval divided", Call(FuncDiv, iv("1 day"), i64(3)), "08:00:00"},
		{"interval by zero", Call(FuncDiv, iv("1 day"), i64(0)), CodeDivisionByZero},
		{"interval overflow", Call(FuncMul, iv("2000000000 days"), i64(2)), CodeDatetimeFieldOverflow},
		{"interval length equality", Call(FuncEq, iv("1 mon"), iv("30 days")), "t"},
		{"interval length order", Call(FuncLt, iv("1 day"), iv("25 hours")), "t"},
		{"at time zone to tz", Call(FuncTimezone, text("America/New_York"), ts("2024-07-01 12:00")), "2024-07-01 16:00:00+00"},
		{"at time zone from tz", Call(FuncTimezone, text("Asia/Kolkata"), tz("2024-07-01 12:00+00")), "2024-07-01 17:30:00"},
		{"posix zone is west", Call(FuncTimezone, text("+05"), tz("2024-07-01 12:00+00")), "2024-07-01 07:00:00"},
		{"unknown zone", Call(FuncTimezone, text("Nowhere/Land"), ts("2024-07-01")), CodeInvalidParameterValue},
		{"tz plus a day across DST", Call(FuncTZPlus, tz("2024-03-09 12:00-05"), iv("1 day"), text("America/New_York")), "2024-03-10 16:00:00+00"},
		{"tz plus 24 hours across DST", Call(FuncTZPlus, tz("2024-03-09 12:00-05"), iv("24 hours"), text("America/New_York")), "2024-03-10 17:00:00+00"},
		{"date_part second", Call(FuncDatePart, text("second"), ts("2024-01-01 00:00:05.678")), "5.678"},
		{"date_part BC year", Call(FuncDatePart, text("year"), ts("0044-03-15 BC")), "-44"},
		{"date_part iso week", Call(FuncDatePart, text("week"), ts("2021-01-03")), "53"},
		{"date_part infinite year", Call(FuncDatePart, text("year"), ts("infinity")), "Infinity"},
		{"date_part infinite hour", Call(FuncDatePart, text("hour"), ts("infinity")), "NULL"},
		{"date_part unknown", Call(FuncDatePart, text("fortnight"), ts("2024-01-01")), CodeInvalidParameterValue},
		{"date_part interval epoch", Call(FuncDatePart, text("epoch"), iv("1 year 1 mon 1 day")), "34236000"},
		{"date_trunc week", Call(FuncDateTrunc, text("week"), ts("2024-01-03 10:00")), "2024-01-01 00:00:00"},
		{"date_trunc century", Call(FuncDateTrunc, text("century"), ts("2000-06-01")), "1901-01-01 00:00:00"},
		{"date_trunc tz in zone", Call(FuncDateTrunc, text("day"), tz("2024-07-01 02:00+00"), text("America/New_York")), "2024-06-30 04:00:00+00"},
		{"to_char", Call(FuncToChar, ts("2024-03-05 14:07:09.5"), text("FMDay, FMMonth FMDD YYYY HH12:MI:SS.MS PM")), "Tuesday, March 5 2024 02:07:09.500 PM"},
		{"to_char padding", Call(FuncToChar, ts("2024-05-05"), text("Month|Day|Mon")), "May      |Sunday   |May"},
		{"to_char quoted", Call(FuncToChar, date("2024-05-05"), text(`"Q"Q YYYY`)), "Q2 2024"},
		{"to_char unsupported", Call(FuncToChar, ts("2024-05-05"), text("DDth")), CodeFeatureNotSupported},
		{"age borrows", Call(FuncAge, ts("2024-03-31"), ts("2024-01-31")), "2 mons"},
		{"age negative", Call(FuncAge, ts("2024-01-31"), ts("2024-03-31")), "-2 mons"},
		{"age with time", Call(FuncAge, ts("2024-03-01 10:00"), ts("2023-02-28 12:30")), "1 year 21:30:00"},
		{"make_date", Call(FuncMakeDate, i64(-44), i64(3), i64(15)), "0044-03-15 BC"},
		{"make_date invalid", Call(FuncMakeDate, i64(2023), i64(2), i64(29)), CodeDatetimeFieldOverflow},
		{"make_time", Call(FuncMakeTime, i64(23), i64(59), Literal(row.Float64(59.5))), "23:59:59.5"},
		{"make_time invalid", Call(FuncMakeTime, i64(25), i64(0), Literal(row.Float64(0))), CodeDatetimeFieldOverflow},
		{"to_timestamp", Call(FuncToTimestamp, Literal(row.Float64(1.5))), "1970-01-01 00:00:01.5+00"},
		{"to_timestamp NaN", Call(FuncToTimestamp, Literal(row.Float64(math.NaN()))), CodeDatetimeFieldOverflow},
		{"precision rounds half away", Call(FuncTimePrecision, ts("2024-01-01 00:00:00.5"), i64(0)), "2024-01-01 00:00:01"},
		{"precision before 2000", Call(FuncTimePrecision, ts("1990-01-01 00:00:00.5"), i64(0)), "1990-01-01 00:00:00"},
		{"precision of interval", Call(FuncTimePrecision, iv("-1.5 seconds"), i64(0)), "-00:00:02"},
		{"time of infinite timestamp", Cast(ts("infinity"), row.TypeTime), "NULL"},
		{"interval to time", Cast(iv("-1 hour"), row.TypeTime), "23:00:00"},
		// date_part, date_trunc and age share their NULL and zone handling.
		{"date_part null input", Call(FuncDatePart, text("hour"), TypedNull(row.TypeTimestamp)), "NULL"},
		{"date_trunc null zone", Call(FuncDateTrunc, text("day"), tz("2024-07-01 02:00+00"), TypedNull(row.TypeText)), "NULL"},
		{"date_trunc null field before a bad zone", Call(FuncDateTrunc, TypedNull(row.TypeText), tz("2024-07-01 02:00+00"), text("Nowhere/Land")), "NULL"},
		{"date_trunc unknown zone", Call(FuncDateTrunc, text("day"), tz("2024-07-01 02:00+00"), text("Nowhere/Land")), CodeInvalidParameterValue},
		{"age null", Call(FuncAge, ts("2024-03-31"), TypedNull(row.TypeTimestamp)), "NULL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.e.Type(nil); err != nil {
				t.Fatalf("type: %v", err)
			}
			d, err := tc.e.Eval(nil)
			got := d.String()
			if err != nil {
				got = Code(err)
			}
			if got != tc.want {
				t.Fatalf("got %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}
