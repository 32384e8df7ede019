package expr

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func num(s string) Expr { return Literal(row.MustNumeric(s)) }

// TestNumericEval checks numeric arithmetic, rounding and casts against
// the values and display scales PostgreSQL 15 gives.
func TestNumericEval(t *testing.T) {
	tests := []struct {
		name string
		e    Expr
		want string // text output, or the SQLSTATE of the error
	}{
		{"add", Call(FuncAdd, num("1.5"), num("2.25")), "3.75"},
		{"add int", Call(FuncAdd, num("1.5"), Literal(row.Int64(1))), "2.5"},
		{"sub inf", Call(FuncSub, num("Infinity"), num("Infinity")), "NaN"},
		{"mul", Call(FuncMul, num("1.1"), num("-1.1")), "-1.21"},
		{"mul inf zero", Call(FuncMul, num("Infinity"), num("0")), "NaN"},
		{"div 1/3", Call(FuncDiv, num("1"), num("3")), "0.33333333333333333333"},
		{"div 2/3", Call(FuncDiv, num("2"), num("3")), "0.66666666666666666667"},
		{"div -2/3", Call(FuncDiv, num("-2"), num("3")), "-0.66666666666666666667"},
		{"div 10/4", Call(FuncDiv, num("10"), num("4")), "2.5000000000000000"},
		{"div small", Call(FuncDiv, num("1"), num("30000")), "0.000033333333333333333333"},
		{"div big", Call(FuncDiv, num("123456789"), num("0.003")), "41152263000.00000000"},
		{"div zero", Call(FuncDiv, num("1"), num("0")), "22012"},
		{"div nan zero", Call(FuncDiv, num("NaN"), num("0")), "NaN"},
		{"mod", Call(FuncMod, num("-7.5"), num("2")), "-1.5"},
		{"mod zero", Call(FuncMod, num("1"), num("0")), "22012"},
		{"div_trunc", Call(FuncDivTrunc, num("-7.5"), num("2")), "-3"},
		{"neg", Call(FuncNeg, num("2.5")), "-2.5"},
		{"round half away", Call(FuncRound, num("2.5")), "3"},
		{"round -half away", Call(FuncRound, num("-2.5")), "-3"},
		{"round 2", Call(FuncRound, num("2.345"), Literal(row.Int64(2))), "2.35"},
		{"round -1", Call(FuncRound, num("15"), Literal(row.Int64(-1))), "20"},
		{"round -3 small", Call(FuncRound, num("15"), Literal(row.Int64(-3))), "0"},
		{"trunc 1", Call(FuncTrunc, num("-2.7")), "-2"},
		{"trunc 2", Call(FuncTrunc, num("2.789"), Literal(row.Int64(1))), "2.7"},
		{"ceil", Call(FuncCeil, num("-2.5")), "-2"},
		{"floor", Call(FuncFloor, num("-2.5")), "-3"},
		{"floor int-valued", Call(FuncFloor, num("100")), "100"},
		{"sign", Call(FuncSign, num("-0.1")), "-1"},
		{"sqrt 2", Call(FuncSqrt, num("2")), "1.414213562373095"},
		{"sqrt neg", Call(FuncSqrt, num("-1")), "2201F"},
		{"cast to int", Cast(num("2.5"), row.TypeInt64), "3"},
		{"cast to int neg", Cast(num("-2.5"), row.TypeInt64), "-3"},
		{"cast to int range", Cast(num("1e19"), row.TypeInt64), "22003"},
		{"cast nan to int", Cast(num("NaN"), row.TypeInt64), "0A000"},
		{"cast to int4", Call(FuncInt4, num("2147483647.5")), "22003"},
		{"cast float", Cast(Literal(row.Float64(0.1)), row.TypeNumeric), "0.1"},
		{"cast float 1/3", Cast(Literal(row.Float64(1.0/3)), row.TypeNumeric), "0.333333333333333"},
		{"cast to float", Cast(num("0.1"), row.TypeFloat64), "0.1"},
		{"parse", Cast(Literal(row.Text(" -1.50e1 ")), row.TypeNumeric), "-15.0"},
		{"parse bad", Cast(Literal(row.Text("abc")), row.TypeNumeric), "22P02"},
		{"parse dot", Cast(Literal(row.Text(".")), row.TypeNumeric), "22P02"},
		{"parse inf", Cast(Literal(row.Text("-inf")), row.TypeNumeric), "-Infinity"},
		{"typmod", Call(FuncNumericTypmod, num("12345678.125"), Literal(row.Int64(10)), Literal(row.Int64(2))), "12345678.13"},
		{"typmod overflow", Call(FuncNumericTypmod, num("99999999.995"), Literal(row.Int64(10)), Literal(row.Int64(2))), "22003"},
		{"typmod inf", Call(FuncNumericTypmod, num("Infinity"), Literal(row.Int64(10)), Literal(row.Int64(2))), "22003"},
		{"compare int", Call(FuncLt, num("1.5"), Literal(row.Int64(2))), "t"},
		{"compare nan", Call(FuncGt, num("NaN"), num("Infinity")), "t"},
		{"compare float", Call(FuncEq, num("0.5"), Literal(row.Float64(0.5))), "t"},
		{"varchar cast", Call(FuncVarchar, Literal(row.Text("abcdef")), Literal(row.Int64(3))), "abc"},
		{"varchar assign", Call(FuncVarcharAssign, Literal(row.Text("abcdef")), Literal(row.Int64(3))), "22001"},
		{"varchar assign spaces", Call(FuncVarcharAssign, Literal(row.Text("ab    ")), Literal(row.Int64(3))), "ab "},
		{"bpchar assign", Call(FuncBpcharAssign, Literal(row.Text("ab ")), Literal(row.Int64(5))), "ab"},
		{"bpchar assign long", Call(FuncBpcharAssign, Literal(row.Text("abcdef")), Literal(row.Int64(5))), "22001"},
		{"varchar runes", Call(FuncVarchar, Literal(row.Text("ééé")), Literal(row.Int64(2))), "éé"},
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
				t.Errorf("got %s (%v), want %s", got, err, tc.want)
			}
		})
	}
}

// scaled is a numeric literal at display scale s.
func scaled(v string, s int) Expr {
	d, err := row.MustNumeric(v).WithNumericScale(s)
	if err != nil {
		panic(err)
	}
	return Literal(d)
}

// TestNumericScaleEquality checks that SQL comparison ignores a numeric's
// display scale (1.5 = 1.50, as in PostgreSQL) while numeric_key drops it,
// so that the bytes of equal values are equal.
func TestNumericScaleEquality(t *testing.T) {
	tests := []struct {
		name string
		e    Expr
		want row.Datum
	}{
		{"eq", Call(FuncEq, scaled("1.5", 1), scaled("1.5", 2)), row.True},
		{"ne", Call(FuncNeq, scaled("1.5", 3), scaled("1.5", 2)), row.False},
		{"lt", Call(FuncLt, scaled("1.5", 1), scaled("1.5", 2)), row.False},
		{"gt", Call(FuncGt, scaled("1.5", 3), scaled("1.5", 2)), row.False},
		{"lt value", Call(FuncLt, scaled("1.4", 5), scaled("1.5", 1)), row.True},
		{"eq int", Call(FuncEq, scaled("2", 2), Literal(row.Int64(2))), row.True},
		{"eq zero", Call(FuncEq, scaled("0", 2), scaled("0", 0)), row.True},
		{"eq negative", Call(FuncEq, scaled("-1.5", 1), scaled("-1.5", 4)), row.True},
		{"array eq", Call(FuncEq, arrOf(scaled("1.5", 1), Literal(row.Null())), arrOf(scaled("1.5", 2), Literal(row.Null()))), row.True},
		{"array lt", Call(FuncLt, arrOf(scaled("1.5", 1)), arrOf(scaled("1.5", 2))), row.False},
		{"numeric_key", Call(FuncNumericKey, scaled("1.5", 2)), row.MustNumeric("1.5")},
		{"numeric_key zero", Call(FuncNumericKey, scaled("0", 3)), row.MustNumeric("0")},
		{"numeric_key int", Call(FuncNumericKey, Literal(row.Int64(7))), row.Int64(7)},
		{"numeric_key null", Call(FuncNumericKey, Literal(row.Null())), row.Null()},
	}
	for _, tc := range tests {
		got, err := tc.e.Eval(nil)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %v (scale %d), %v; want %v", tc.name, got, got.NumericScale(), err, tc.want)
		}
	}
}

// arrOf is the numeric[] literal of the elements' values.
func arrOf(elems ...Expr) Expr {
	ds := make([]row.Datum, len(elems))
	for i, e := range elems {
		ds[i] = e.Value
	}
	a, err := row.Array(row.TypeNumericArray, ds)
	if err != nil {
		panic(err)
	}
	return Literal(a)
}
