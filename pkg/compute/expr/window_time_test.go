package expr

import (
	"math"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestTimeShift: time_shift moves a time without wrapping around midnight
// (a RANGE bound over a time column), saturates at the int64 limits, is
// strict, and refuses other types.
func TestTimeShift(t *testing.T) {
	const hour = 3600_000_000
	tm := func(us int64) Expr { return Literal(row.Time(us)) }
	for _, tc := range []struct {
		name string
		e    Expr
		want row.Datum
		code string
	}{
		{"before midnight", Call(FuncTimeShift, tm(hour/2), i64(-hour)), row.Time(-hour / 2), ""},
		{"after midnight", Call(FuncTimeShift, tm(23*hour), i64(2*hour)), row.Time(25 * hour), ""},
		{"zero", Call(FuncTimeShift, tm(hour), i64(0)), row.Time(hour), ""},
		{"saturates up", Call(FuncTimeShift, tm(hour), i64(math.MaxInt64)), row.Time(math.MaxInt64), ""},
		{"saturates down", Call(FuncTimeShift, tm(-hour), i64(math.MinInt64)), row.Time(math.MinInt64), ""},
		{"null", Call(FuncTimeShift, null(row.TypeTime), i64(1)), row.Null(), ""},
		{"not a time", Call(FuncTimeShift, i64(1), i64(1)), row.Null(), CodeUndefinedFunction},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.e.Eval(nil)
			if code := Code(err); code != tc.code {
				t.Fatalf("%s: error %v (code %q), want code %q", tc.e, err, code, tc.code)
			}
			if err == nil && (!row.Equal(got, tc.want) || got.Type() != tc.want.Type()) {
				t.Fatalf("%s = %v, want %v", tc.e, got, tc.want)
			}
		})
	}
}
