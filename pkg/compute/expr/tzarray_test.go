package expr

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestTZArrayCast checks tz_array_cast both ways in a zone other than
// UTC, with NULL elements and infinities, and its refusals.
func TestTZArrayCast(t *testing.T) {
	zone := Literal(row.Text("America/New_York"))
	tzIn := func(s string) Expr {
		d, err := ParseArrayIn(s, row.TypeTimestampTZArray, nil)
		if err != nil {
			t.Fatal(err)
		}
		return Literal(d)
	}
	lit := func(s string, typ row.Type) Expr {
		d, err := CastDatum(row.Text(s), typ)
		if err != nil {
			t.Fatal(err)
		}
		return Literal(d)
	}
	for _, tc := range []struct {
		x    Expr
		to   row.Type
		want string
	}{
		{tzIn(`{"2024-01-01 00:00:00+00",NULL,infinity}`), row.TypeText, `{"2023-12-31 19:00:00-05",NULL,infinity}`},
		{tzIn(`{"2024-01-01 00:00:00+00",NULL}`), row.TypeTextArray, `{"2023-12-31 19:00:00-05",NULL}`},
		{tzIn(`{"2024-01-01 00:00:00+00",-infinity}`), row.TypeTimestampArray, `{"2023-12-31 19:00:00",-infinity}`},
		{tzIn(`{"2024-01-01 00:00:00+00"}`), row.TypeDateArray, `{2023-12-31}`},
		{lit(`{"2024-07-01 12:00:00"}`, row.TypeTimestampArray), row.TypeTimestampTZArray, `{"2024-07-01 16:00:00+00"}`},
		{lit(`{2024-01-01,NULL}`, row.TypeDateArray), row.TypeTimestampTZArray, `{"2024-01-01 05:00:00+00",NULL}`},
		{lit(`{"2024-01-01 00:00:00","2024-01-01 00:00:00+01"}`, row.TypeTextArray), row.TypeTimestampTZArray, `{"2024-01-01 05:00:00+00","2023-12-31 23:00:00+00"}`},
		{Literal(row.Text(`{"2024-01-01 00:00:00"}`)), row.TypeTimestampTZArray, `{"2024-01-01 05:00:00+00"}`},
	} {
		target, err := TZArrayTarget(tc.to)
		if err != nil {
			t.Fatal(err)
		}
		e := Call(FuncTZArrayCast, tc.x, zone, target)
		typ, err := e.Type(nil)
		if err != nil || typ.Type != tc.to {
			t.Fatalf("%s: type %v, %v; want %s", tc.want, typ, err, tc.to)
		}
		got, err := e.Eval(nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.want, err)
		}
		if s := got.String(); got.Type() != tc.to || s != tc.want {
			t.Errorf("got %s %s, want %s %s", got.Type(), s, tc.to, tc.want)
		}
	}
	bad, _ := TZArrayTarget(row.TypeInt64Array)
	if _, err := Call(FuncTZArrayCast, tzIn(`{}`), zone, bad).Type(nil); err == nil {
		t.Error("timestamptz[] to int64[]: no type error")
	}
	text, _ := TZArrayTarget(row.TypeTimestampTZArray)
	if _, err := Call(FuncTZArrayCast, lit(`{bad}`, row.TypeTextArray), zone, text).Eval(nil); err == nil {
		t.Error("bad element: no error")
	}
}
