package expr

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestExprJSONGolden pins the wire form of expressions: other processes
// (and other versions) decode it, so a change must be deliberate.
func TestExprJSONGolden(t *testing.T) {
	e := And(
		Gt(Add(Column(0), i64(1)), f64(math.Inf(1))),
		Or(IsNull(Column(1)), Like(Column(1), txt("a%"))),
		If(null(row.TypeBool), Cast(Column(2), row.TypeText), Coalesce(txt("x"), Literal(row.Null()))),
		In(Column(3), Literal(row.Timestamp(5)), Literal(row.Bytes([]byte{0, 1}))),
	)
	got, err := json.MarshalIndent(e, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "expr.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("wire form changed; run with -update if deliberate.\ngot:\n%s", got)
	}
	var back Expr
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Equal(e) {
		t.Errorf("round trip changed the tree:\n%s\n%s", e, back)
	}
}

func TestExprJSONRejects(t *testing.T) {
	for _, bad := range []string{
		`{"op":"nope"}`,
		`{"op":"call","func":"frobnicate"}`,
		`{"op":"literal","type":"decimal"}`,
		`{"op":"literal","value":{"int64":"x"}}`,
		`{"op":3}`,
	} {
		var e Expr
		if err := json.Unmarshal([]byte(bad), &e); err == nil {
			t.Errorf("unmarshal %s succeeded: %s", bad, e)
		}
	}
	if _, err := json.Marshal(Expr{}); err == nil {
		t.Error("marshalled an invalid op")
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		e    Expr
		want string
	}{
		{Add(Column(0), i64(1)), "(#0 + 1)"},
		{And(IsNull(Column(1)), Not(bol(true))), "((#1 IS NULL) AND NOT true)"},
		{If(Column(0), txt("it's"), null(row.TypeText)), "CASE WHEN #0 THEN 'it''s' ELSE NULL::text END"},
		{In(Column(0), i64(1), i64(2)), "(#0 IN (1, 2))"},
		{Cast(Column(0), row.TypeFloat64), "CAST(#0 AS float64)"},
		{Call(FuncSubstr, Column(0), i64(1), i64(2)), "substr(#0, 1, 2)"},
		{Expr{Op: OpIf}, "<malformed if>"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("String = %q, want %q", got, tt.want)
		}
	}
}

func TestColumnsPermuteSubstitute(t *testing.T) {
	e := Add(Column(3), Mul(Column(1), Column(3)))
	if got := e.Columns(); len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("Columns = %v", got)
	}
	if e.Support() != 4 {
		t.Errorf("Support = %d", e.Support())
	}
	p := e.Permute([]int{0, 5, 0, 7})
	if p.String() != "(#7 + (#5 * #7))" || e.String() != "(#3 + (#1 * #3))" {
		t.Errorf("Permute = %s (original now %s)", p, e)
	}
	s := e.Substitute(func(c int) (Expr, bool) {
		if c == 3 {
			return i64(2), true
		}
		return Expr{}, false
	})
	if s.String() != "(2 + (#1 * 2))" {
		t.Errorf("Substitute = %s", s)
	}
}

// FuzzExprJSON decodes arbitrary JSON as an expression, then type-checks
// and evaluates it: nothing may panic, and a tree that type-checks must
// evaluate to a value of its type (or NULL when nullable), or an error.
func FuzzExprJSON(f *testing.F) {
	seeds := []Expr{
		Add(Column(0), i64(1)),
		And(Column(2), Or(IsNull(Column(1)), Like(Column(1), txt("%b_")))),
		Call(FuncSubstr, Column(1), Column(0), i64(2)),
		Case([][2]Expr{{Gt(Column(0), i64(0)), Cast(Column(0), row.TypeText)}}, Column(1)),
		In(Column(0), i64(1), null(row.TypeInt64)),
		Call(FuncRound, f64(2.5), Column(0)),
		Call(FuncJSONGet, Cast(txt(`{"a": [1, 2.50]}`), row.TypeJSONB), txt("a")),
		Call(FuncJSONContains, Call(FuncJSONBuildObject, Column(1), Column(0)), Call(FuncToJSONB, Column(2))),
	}
	for _, s := range seeds {
		b, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	input := []row.Datum{row.Int64(3), row.Text("abc"), row.Bool(true), row.Null()}
	types := []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeText}, {Type: row.TypeBool}, {Type: row.TypeFloat64, Nullable: true}}
	f.Fuzz(func(t *testing.T, b []byte) {
		var e Expr
		if err := json.Unmarshal(b, &e); err != nil {
			return
		}
		typ, terr := e.Type(types)
		v, err := e.Eval(input)
		if err != nil {
			if Code(err) == "" {
				t.Fatalf("%s: error without SQLSTATE: %v", e, err)
			}
			return
		}
		if terr != nil {
			return
		}
		if v.IsNull() {
			if !typ.Nullable && typ.Type != row.TypeNull {
				t.Fatalf("%s: NULL from a non-nullable expression of type %s", e, typ)
			}
		} else if v.Type() != typ.Type {
			t.Fatalf("%s: value %v of type %s, inferred %s", e, v, v.Type(), typ)
		}
	})
}
