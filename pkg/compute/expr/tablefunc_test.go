package expr

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func runTable(t *testing.T, c TableCall) (string, string) {
	t.Helper()
	var out []string
	err := c.Eval(nil, func(ds []row.Datum) error {
		for _, d := range ds {
			out = append(out, d.String())
		}
		return nil
	})
	return strings.Join(out, " "), Code(err)
}

func TestGenerateSeries(t *testing.T) {
	lit := func(d row.Datum) Expr { return Literal(d) }
	ts := func(s string) Expr {
		d, err := ParseTemporal(s, row.TypeTimestamp, nil)
		if err != nil {
			t.Fatal(err)
		}
		return Literal(d)
	}
	iv := func(s string) Expr {
		d, err := CastDatum(row.Text(s), row.TypeInterval)
		if err != nil {
			t.Fatal(err)
		}
		return Literal(d)
	}
	i := func(v int64) Expr { return lit(row.Int64(v)) }
	tests := []struct {
		name       string
		args       []Expr
		want, code string
	}{
		{"up", []Expr{i(1), i(3)}, "1 2 3", ""},
		{"step", []Expr{i(1), i(10), i(4)}, "1 5 9", ""},
		{"down", []Expr{i(3), i(-3), i(-3)}, "3 0 -3", ""},
		{"empty", []Expr{i(3), i(1)}, "", ""},
		{"null is no rows", []Expr{i(1), TypedNull(row.TypeInt64)}, "", ""},
		{"zero step", []Expr{i(1), i(2), i(0)}, "", CodeInvalidParameterValue},
		{"stops before overflow", []Expr{i(math.MaxInt64 - 1), i(math.MaxInt64)}, "9223372036854775806 9223372036854775807", ""},
		{"stops before underflow", []Expr{i(math.MinInt64 + 1), i(math.MinInt64), i(-1)}, "-9223372036854775807 -9223372036854775808", ""},
		{"too many rows down", []Expr{i(math.MaxInt64), i(math.MinInt64), i(-1)}, "", CodeProgramLimitExceeded},
		{"minimum step", []Expr{i(0), i(math.MinInt64), i(math.MinInt64)}, "0 -9223372036854775808", ""},
		{"too many rows", []Expr{i(1), i(MaxTableFuncRows + 1)}, "", CodeProgramLimitExceeded},
		{"timestamp months clamp", []Expr{ts("2024-01-31"), ts("2024-03-31"), iv("1 month")},
			"2024-01-31 00:00:00 2024-02-29 00:00:00 2024-03-29 00:00:00", ""},
		{"timestamp zero step", []Expr{ts("2024-01-31"), ts("2024-03-31"), iv("0")}, "", CodeInvalidParameterValue},
		{"infinite start", []Expr{ts("-infinity"), ts("2024-01-01"), iv("1 day")}, "", CodeProgramLimitExceeded},
		{"timestamptz in a zone", []Expr{
			lit(row.TimestampTZ(1710086400000000 - 86400000000)), lit(row.TimestampTZ(1710086400000000 + 86400000000)),
			iv("1 day"), lit(row.Text("America/New_York"))},
			"2024-03-09 16:00:00+00 2024-03-10 15:00:00+00 2024-03-11 15:00:00+00", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := TableCall{Func: TableGenerateSeries, Args: tt.args}
			if _, err := c.OutputTypes(nil); err != nil {
				t.Fatalf("OutputTypes: %v", err)
			}
			got, code := runTable(t, c)
			if code != tt.code || (code == "" && got != tt.want) {
				t.Fatalf("got %q (code %q), want %q (code %q)", got, code, tt.want, tt.code)
			}
		})
	}
}

func TestTableCallTypes(t *testing.T) {
	bad := []TableCall{
		{Func: TableGenerateSeries, Args: []Expr{Literal(row.Int64(1))}},
		{Func: TableGenerateSeries, Args: []Expr{Literal(row.Text("a")), Literal(row.Text("b"))}},
		{Func: "no_such", Args: nil},
	}
	for _, c := range bad {
		if _, err := c.OutputTypes(nil); Code(err) != CodeUndefinedFunction {
			t.Errorf("%s: got %v, want 42883", c, err)
		}
	}
	c := TableCall{Func: TableGenerateSeries, Args: []Expr{Column(0), Literal(row.Int64(3))}}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back TableCall
	if err := json.Unmarshal(b, &back); err != nil || back.String() != c.String() {
		t.Fatalf("round trip %s: %v %s", b, err, back)
	}
}

// TestTableCallMalformed: a call whose arguments do not fit the function
// is an error, never a panic.
func TestTableCallMalformed(t *testing.T) {
	ts := Literal(row.Timestamp(0))
	for _, c := range []TableCall{
		{Func: TableGenerateSeries, Args: []Expr{ts}},
		{Func: TableGenerateSeries, Args: []Expr{ts, ts}},
		{Func: TableGenerateSeries, Args: []Expr{Literal(row.Int64(1)), ts}},
		{Func: TableJSONEach, Args: []Expr{Literal(row.Int64(1))}},
		{Func: TableJSONArrayElements, Args: nil},
	} {
		if err := c.Eval(nil, func([]row.Datum) error { return nil }); err == nil {
			t.Errorf("%s: no error", c)
		}
	}
}
