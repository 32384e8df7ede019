package expr

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestNarrowInt(t *testing.T) {
	tests := []struct {
		name string
		e    Expr
		want row.Datum
		code string
		msg  string
	}{
		{"int4 in range", Call(FuncInt4, i64(math.MaxInt32)), row.Int64(math.MaxInt32), "", ""},
		{"int4 min", Call(FuncInt4, i64(math.MinInt32)), row.Int64(math.MinInt32), "", ""},
		{"int4 above", Call(FuncInt4, i64(math.MaxInt32+1)), row.Null(), CodeNumericValueOutOfRange, "integer out of range"},
		{"int4 below", Call(FuncInt4, i64(math.MinInt32-1)), row.Null(), CodeNumericValueOutOfRange, "integer out of range"},
		{"int2 in range", Call(FuncInt2, i64(-32768)), row.Int64(-32768), "", ""},
		{"int2 above", Call(FuncInt2, i64(32768)), row.Null(), CodeNumericValueOutOfRange, "smallint out of range"},
		{"int2 null", Call(FuncInt2, null(row.TypeInt64)), row.Null(), "", ""},
		{"int4 float rounds half even", Call(FuncInt4, f64(2.5)), row.Int64(2), "", ""},
		{"int4 float edge", Call(FuncInt4, f64(2147483647.4)), row.Int64(math.MaxInt32), "", ""},
		{"int4 float above", Call(FuncInt4, f64(2147483647.5)), row.Null(), CodeNumericValueOutOfRange, "integer out of range"},
		{"int4 float nan", Call(FuncInt4, f64(math.NaN())), row.Null(), CodeNumericValueOutOfRange, "integer out of range"},
		{"int2 float above", Call(FuncInt2, f64(40000)), row.Null(), CodeNumericValueOutOfRange, "smallint out of range"},
		{"int4 text", Call(FuncInt4, txt(" -42 ")), row.Int64(-42), "", ""},
		{"int4 text above", Call(FuncInt4, txt("99999999999")), row.Null(), CodeNumericValueOutOfRange, `value "99999999999" is out of range for type integer`},
		{"int4 text beyond bigint", Call(FuncInt4, txt("99999999999999999999")), row.Null(), CodeNumericValueOutOfRange, `value "99999999999999999999" is out of range for type integer`},
		{"int2 text above", Call(FuncInt2, txt("32768")), row.Null(), CodeNumericValueOutOfRange, `value "32768" is out of range for type smallint`},
		{"int2 text invalid", Call(FuncInt2, txt("x1")), row.Null(), CodeInvalidTextRepr, `invalid input syntax for type smallint: "x1"`},
		{"int4 of bool", Call(FuncInt4, Literal(row.True)), row.Null(), CodeUndefinedFunction, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.e.Eval(nil)
			if code := Code(err); code != tt.code {
				t.Fatalf("%s: error %v (code %q), want code %q", tt.e, err, code, tt.code)
			}
			if tt.msg != "" && err.(*EvalError).Msg != tt.msg {
				t.Fatalf("%s: message %q, want %q", tt.e, err.(*EvalError).Msg, tt.msg)
			}
			if err == nil && (!row.Equal(got, tt.want) || got.Type() != tt.want.Type()) {
				t.Fatalf("%s = %v, want %v", tt.e, got, tt.want)
			}
		})
	}
}

func TestNarrowIntTypeAndWire(t *testing.T) {
	for _, f := range []Func{FuncInt2, FuncInt4} {
		e := Call(f, Column(0))
		for _, in := range []row.Type{row.TypeInt64, row.TypeFloat64, row.TypeText} {
			typ, err := e.Type([]row.ColumnType{{Type: in, Nullable: true}})
			if err != nil || typ.Type != row.TypeInt64 || !typ.Nullable {
				t.Errorf("%s over %s: type %v, %v", e, in, typ, err)
			}
		}
		if _, err := e.Type([]row.ColumnType{{Type: row.TypeBool}}); Code(err) != CodeUndefinedFunction {
			t.Errorf("%s over bool: %v, want 42883", e, err)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back Expr
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(e) {
			t.Errorf("round trip of %s: %s, %v", b, back, err)
		}
	}
}
