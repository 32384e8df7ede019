package plan

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestTemporalValidity checks each bound's window, in logical millis,
// against its definition: t is in the window exactly when `e op t*1000`
// holds (FilterAt), for every t around the bound.
func TestTemporalValidity(t *testing.T) {
	ops := []TemporalOp{TemporalLt, TemporalLte, TemporalGt, TemporalGte, TemporalEq}
	values := []int64{0, 1, 999, 1000, 1001, 5500, 7000, -1, -1000, -1500}
	for _, op := range ops {
		for _, e := range values {
			tf := &TemporalFilter{Bounds: []TemporalBound{{Expr: expr.Column(0), Op: op}}}
			v, err := tf.Validity([]row.Datum{row.TimestampTZ(e)})
			if err != nil {
				t.Fatalf("%d %s now(): %v", e, op, err)
			}
			for ts := uint64(0); ts <= 10; ts++ {
				m := tf.FilterAt(1, ts)
				_, want, err := m.Evaluate([]row.Datum{row.TimestampTZ(e)}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := v.Contains(ts) && !v.Empty(); got != want {
					t.Errorf("%dus %s now() at %dms: window %+v contains it = %v, the predicate says %v", e, op, ts, v, got, want)
				}
			}
		}
	}
}

// TestTemporalValidityEdges: NULL never holds, infinities bound nothing
// or everything, bounds intersect, and a wrongly typed bound is an error.
func TestTemporalValidityEdges(t *testing.T) {
	col := func(op TemporalOp, i int) TemporalBound { return TemporalBound{Expr: expr.Column(i), Op: op} }
	tests := []struct {
		name   string
		bounds []TemporalBound
		datums []row.Datum
		want   Validity
		err    string
	}{
		{"null", []TemporalBound{col(TemporalLte, 0)}, []row.Datum{row.Null()}, Validity{}, ""},
		{"+inf upper", []TemporalBound{col(TemporalGt, 0)}, []row.Datum{row.TimestampTZ(row.TimestampInfinity)}, Validity{Unbounded: true}, ""},
		{"-inf upper", []TemporalBound{col(TemporalGt, 0)}, []row.Datum{row.TimestampTZ(row.TimestampNegInfinity)}, Validity{}, ""},
		{"-inf lower", []TemporalBound{col(TemporalLt, 0)}, []row.Datum{row.TimestampTZ(row.TimestampNegInfinity)}, Validity{Unbounded: true}, ""},
		{"+inf lower", []TemporalBound{col(TemporalLte, 0)}, []row.Datum{row.TimestampTZ(row.TimestampInfinity)}, Validity{Lower: row.TimestampInfinity/1000 + 1, Unbounded: true}, ""},
		{"intersect", []TemporalBound{col(TemporalLte, 0), col(TemporalGt, 1), col(TemporalGte, 0), col(TemporalLt, 1)},
			[]row.Datum{row.TimestampTZ(2000), row.TimestampTZ(9000)}, Validity{Lower: 10, Upper: 3}, ""},
		{"window", []TemporalBound{col(TemporalLte, 0), col(TemporalGt, 1), col(TemporalGt, 1)},
			[]row.Datum{row.TimestampTZ(2000), row.TimestampTZ(9000)}, Validity{Lower: 2, Upper: 9}, ""},
		{"wrong type", []TemporalBound{col(TemporalLte, 0)}, []row.Datum{row.Int64(1)}, Validity{}, "want timestamptz"},
		{"unknown op", []TemporalBound{col("<>", 0)}, []row.Datum{row.TimestampTZ(1)}, Validity{}, "unknown comparison"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := (&TemporalFilter{Bounds: tt.bounds}).Validity(tt.datums)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestTemporalFilterDesc(t *testing.T) {
	in := row.RelationDesc{Names: []string{"id", "ts"}, Types: []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeTimestampTZ}}}
	env := MapEnv(map[GlobalID]row.RelationDesc{User(1): in})
	ok := NewTemporalFilter(NewGet(User(1)), TemporalBound{Expr: expr.Column(1), Op: TemporalLte})
	if d, err := ok.Desc(env); err != nil || len(d.Types) != 2 || ok.Kind() != "temporal_filter" {
		t.Fatalf("desc = %+v, %v, kind %q", d, err, ok.Kind())
	}
	for _, bad := range []Plan{
		NewTemporalFilter(NewGet(User(1)), TemporalBound{Expr: expr.Column(0), Op: TemporalLte}),
		NewTemporalFilter(NewGet(User(1)), TemporalBound{Expr: expr.Column(1), Op: "~"}),
		NewTemporalFilter(NewGet(User(1))),
	} {
		if _, err := bad.Desc(env); err == nil || !strings.Contains(err.Error(), "temporal_filter") {
			t.Errorf("%+v: err = %v", bad.TemporalFilter.Bounds, err)
		}
	}
}
