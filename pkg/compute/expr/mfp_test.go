package expr

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestMFPEvaluate(t *testing.T) {
	// Input (x int64, s text). Appends x*2 (#2) and 100/x (#3); keeps rows
	// with x <> 0 and 100/x > 10; outputs (s, #3, x).
	m := MFP{
		Expressions: []Expr{Mul(Column(0), i64(2)), Div(i64(100), Column(0))},
		Predicates:  []Expr{Neq(Column(0), i64(0)), Gt(Column(3), i64(10))},
		Projection:  []int{1, 3, 0},
	}
	prep, err := m.Prepare(2)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   []row.Datum
		want []row.Datum // nil: dropped
		code string
	}{
		{[]row.Datum{row.Int64(5), row.Text("a")}, []row.Datum{row.Text("a"), row.Int64(20), row.Int64(5)}, ""},
		{[]row.Datum{row.Int64(50), row.Text("b")}, nil, ""},
		// The first predicate drops x = 0 before 100/x is evaluated.
		{[]row.Datum{row.Int64(0), row.Text("c")}, nil, ""},
		// NULL predicate drops the row.
		{[]row.Datum{row.Null(), row.Text("d")}, nil, ""},
		{[]row.Datum{row.Int64(4611686018427387904), row.Text("e")}, nil, CodeNumericValueOutOfRange},
	}
	var s Scratch
	for _, eval := range []func([]row.Datum) ([]row.Datum, bool, error){
		func(in []row.Datum) ([]row.Datum, bool, error) { return m.Evaluate(in, &s) },
		func(in []row.Datum) ([]row.Datum, bool, error) { return prep.Evaluate(in, &s) },
		func(in []row.Datum) ([]row.Datum, bool, error) { return m.Evaluate(in, nil) },
	} {
		for _, tt := range tests {
			out, keep, err := eval(tt.in)
			if Code(err) != tt.code {
				t.Fatalf("%v: err %v, want code %q", tt.in, err, tt.code)
			}
			if keep != (tt.want != nil) || (keep && row.CompareDatums(out, tt.want) != 0) {
				t.Errorf("%v: got %v keep=%v, want %v", tt.in, out, keep, tt.want)
			}
		}
	}
	types, err := m.OutputTypes([]row.ColumnType{{Type: row.TypeInt64, Nullable: true}, {Type: row.TypeText}})
	if err != nil {
		t.Fatal(err)
	}
	want := []row.ColumnType{{Type: row.TypeText}, {Type: row.TypeInt64, Nullable: true}, {Type: row.TypeInt64, Nullable: true}}
	if !slices.Equal(types, want) {
		t.Errorf("OutputTypes = %v, want %v", types, want)
	}
	if _, _, err := prep.Evaluate([]row.Datum{row.Int64(1)}, &s); Code(err) != CodeInternal {
		t.Errorf("wrong arity: err %v", err)
	}
}

func TestMFPPrepareErrors(t *testing.T) {
	tests := []struct {
		name string
		m    MFP
		want string
	}{
		{"expression references itself", MFP{Expressions: []Expr{Column(2)}}, "expression 0"},
		{"predicate out of range", MFP{Predicates: []Expr{Eq(Column(5), i64(1))}}, "predicate 0"},
		{"projection out of range", MFP{Projection: []int{2}}, "projection 0"},
	}
	for _, tt := range tests {
		if _, err := tt.m.Prepare(2); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Prepare error %v, want mention of %q", tt.name, err, tt.want)
		}
		in := []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}}
		if _, err := tt.m.OutputTypes(in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: OutputTypes error %v, want mention of %q", tt.name, err, tt.want)
		}
		// Unprepared evaluation of a malformed MFP errors, never panics.
		if _, keep, err := tt.m.Evaluate([]row.Datum{row.Int64(1), row.Int64(2)}, nil); err == nil && keep && tt.name != "predicate out of range" {
			t.Errorf("%s: Evaluate kept a row without error", tt.name)
		}
	}
	if _, err := (&MFP{Predicates: []Expr{i64(1)}}).OutputTypes(nil); err == nil {
		t.Error("non-boolean predicate accepted")
	}
}

func TestMFPIdentityAndBuilders(t *testing.T) {
	id := Identity(3)
	if !id.IsIdentity(3) || id.IsIdentity(2) {
		t.Error("Identity(3) is not recognised")
	}
	m := id.Map(Add(Column(0), i64(1))).Filter(Gt(Column(3), i64(0))).Project(3, 0)
	if m.IsIdentity(3) || len(id.Expressions) != 0 || len(id.Predicates) != 0 {
		t.Error("builders must not modify the receiver")
	}
	out, keep, err := m.Evaluate([]row.Datum{row.Int64(1), row.Null(), row.Null()}, nil)
	if err != nil || !keep || row.CompareDatums(out, []row.Datum{row.Int64(2), row.Int64(1)}) != 0 {
		t.Errorf("Evaluate = %v %v %v", out, keep, err)
	}
}

func TestMFPEvaluateDoesNotAllocate(t *testing.T) {
	m := MFP{
		Expressions: []Expr{Add(Column(0), i64(1)), Call(FuncLower, Column(1))},
		Predicates:  []Expr{Gt(Column(0), i64(0)), Like(Column(1), txt("a%"))},
		Projection:  []int{2, 0},
	}
	p, err := m.Prepare(2)
	if err != nil {
		t.Fatal(err)
	}
	in := []row.Datum{row.Int64(3), row.Text("abc")}
	var s Scratch
	allocs := testing.AllocsPerRun(200, func() {
		if _, keep, err := p.Evaluate(in, &s); err != nil || !keep {
			t.Fatal(keep, err)
		}
	})
	// lower() builds a new string; nothing else may allocate.
	if allocs > 1 {
		t.Errorf("Evaluate allocated %v times per row", allocs)
	}
}

func TestMFPJSON(t *testing.T) {
	m := MFP{
		Expressions: []Expr{Add(Column(0), i64(1))},
		Predicates:  []Expr{IsNull(Column(1))},
		Projection:  []int{2},
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back MFP
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Expressions) != 1 || !back.Expressions[0].Equal(m.Expressions[0]) || !back.Predicates[0].Equal(m.Predicates[0]) ||
		!slices.Equal(back.Projection, m.Projection) {
		t.Errorf("MFP JSON round trip: %s -> %+v", b, back)
	}
}
