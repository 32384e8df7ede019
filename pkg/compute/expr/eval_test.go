package expr

import (
	"math"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

var (
	i64  = func(i int64) Expr { return Literal(row.Int64(i)) }
	f64  = func(f float64) Expr { return Literal(row.Float64(f)) }
	txt  = func(s string) Expr { return Literal(row.Text(s)) }
	bol  = func(b bool) Expr { return Literal(row.Bool(b)) }
	null = func(t row.Type) Expr { return TypedNull(t) }
)

func TestEval(t *testing.T) {
	input := []row.Datum{row.Int64(10), row.Text("Hello"), row.Null(), row.Float64(2.5), row.Bool(true)}
	divZero := Div(i64(1), i64(0))
	tests := []struct {
		name string
		e    Expr
		want row.Datum
		code string // expected SQLSTATE; "" for success
	}{
		{"column", Column(1), row.Text("Hello"), ""},
		{"column out of range", Column(9), row.Null(), CodeInternal},
		{"add", Add(Column(0), i64(5)), row.Int64(15), ""},
		{"add overflow", Add(i64(math.MaxInt64), i64(1)), row.Null(), CodeNumericValueOutOfRange},
		{"sub overflow", Sub(i64(math.MinInt64), i64(1)), row.Null(), CodeNumericValueOutOfRange},
		{"mul overflow", Mul(i64(math.MaxInt64/2+1), i64(2)), row.Null(), CodeNumericValueOutOfRange},
		{"mul -1 min", Mul(i64(-1), i64(math.MinInt64)), row.Null(), CodeNumericValueOutOfRange},
		{"mul ok", Mul(i64(-3), i64(7)), row.Int64(-21), ""},
		{"mixed add", Add(Column(0), Column(3)), row.Float64(12.5), ""},
		{"int div truncates", Div(i64(-7), i64(2)), row.Int64(-3), ""},
		{"div by zero", divZero, row.Null(), CodeDivisionByZero},
		{"float div by zero", Div(f64(1), f64(0)), row.Null(), CodeDivisionByZero},
		{"min / -1", Div(i64(math.MinInt64), i64(-1)), row.Null(), CodeNumericValueOutOfRange},
		{"mod", Mod(i64(-7), i64(3)), row.Int64(-1), ""},
		{"mod zero", Mod(i64(7), i64(0)), row.Null(), CodeDivisionByZero},
		{"min mod -1", Mod(i64(math.MinInt64), i64(-1)), row.Int64(0), ""},
		{"float overflow", Mul(f64(1e300), f64(1e300)), row.Null(), CodeNumericValueOutOfRange},
		{"float underflow", Mul(f64(1e-300), f64(1e-300)), row.Null(), CodeNumericValueOutOfRange},
		{"inf arithmetic ok", Add(f64(math.Inf(1)), f64(1)), row.Float64(math.Inf(1)), ""},
		{"null propagates", Add(Column(2), i64(1)), row.Null(), ""},
		{"error beats null in strict call", Add(Column(2), divZero), row.Null(), CodeDivisionByZero},
		{"neg min", Call(FuncNeg, i64(math.MinInt64)), row.Null(), CodeNumericValueOutOfRange},
		{"abs", Call(FuncAbs, i64(-4)), row.Int64(4), ""},
		{"abs min", Call(FuncAbs, i64(math.MinInt64)), row.Null(), CodeNumericValueOutOfRange},
		{"eq mixed", Eq(i64(2), f64(2)), row.True, ""},
		{"mixed compare is exact", Lt(i64(1<<53+1), f64(1<<53)), row.False, ""},
		{"mixed compare above 2^53", Gt(i64(1<<53+1), f64(1<<53)), row.True, ""},
		{"mixed compare fraction", Lt(i64(-3), f64(-2.5)), row.True, ""},
		{"mixed compare fraction reversed", Gt(f64(-2.5), i64(-2)), row.False, ""},
		{"mixed compare nan", Lt(i64(math.MaxInt64), f64(math.NaN())), row.True, ""},
		{"mixed compare huge", Gt(f64(1e19), i64(math.MaxInt64)), row.True, ""},
		{"mixed compare tiny", Gt(f64(-1e19), i64(math.MinInt64)), row.False, ""},
		{"mixed compare min", Eq(f64(-0x1p63), i64(math.MinInt64)), row.True, ""},
		{"mixed in", In(i64(3), f64(3)), row.True, ""},
		{"nan = nan", Eq(f64(math.NaN()), f64(math.NaN())), row.True, ""},
		{"nan > inf", Gt(f64(math.NaN()), f64(math.Inf(1))), row.True, ""},
		{"text lt", Lt(txt("a"), txt("b")), row.True, ""},
		{"eq null", Eq(Column(2), i64(1)), row.Null(), ""},
		{"compare mismatched", Eq(txt("a"), i64(1)), row.Null(), CodeUndefinedFunction},
		{"and false beats null", And(Column(2), bol(false)), row.False, ""},
		{"and false beats error", And(Eq(divZero, i64(1)), bol(false)), row.False, ""},
		{"and error beats null", And(Eq(divZero, i64(1)), null(row.TypeBool)), row.Null(), CodeDivisionByZero},
		{"and null", And(bol(true), null(row.TypeBool)), row.Null(), ""},
		{"and true", And(bol(true), Column(4)), row.True, ""},
		{"and empty", And(), row.True, ""},
		{"or true beats null", Or(null(row.TypeBool), bol(true)), row.True, ""},
		{"or null", Or(null(row.TypeBool), bol(false)), row.Null(), ""},
		{"or empty", Or(), row.False, ""},
		{"not null", Not(null(row.TypeBool)), row.Null(), ""},
		{"not", Not(bol(true)), row.False, ""},
		{"is null", IsNull(Column(2)), row.True, ""},
		{"is not null", IsNull(Column(0)), row.False, ""},
		{"if true", If(bol(true), i64(1), divZero), row.Int64(1), ""},
		{"if null takes else", If(null(row.TypeBool), divZero, i64(2)), row.Int64(2), ""},
		{"case", Case([][2]Expr{{bol(false), i64(1)}, {bol(true), i64(2)}}, i64(3)), row.Int64(2), ""},
		{"coalesce lazy", Coalesce(Column(2), i64(7), divZero), row.Int64(7), ""},
		{"coalesce all null", Coalesce(Column(2), null(row.TypeInt64)), row.Null(), ""},
		{"nullif equal", NullIf(i64(1), i64(1)), row.Null(), ""},
		{"nullif different", NullIf(i64(1), i64(2)), row.Int64(1), ""},
		{"nullif null b", NullIf(i64(1), null(row.TypeInt64)), row.Int64(1), ""},
		{"in hit", In(i64(2), i64(1), i64(2)), row.True, ""},
		{"in miss", In(i64(3), i64(1), i64(2)), row.False, ""},
		{"in miss with null", In(i64(3), i64(1), null(row.TypeInt64)), row.Null(), ""},
		{"in hit with null", In(i64(1), i64(1), null(row.TypeInt64)), row.True, ""},
		{"null in", In(null(row.TypeInt64), i64(1)), row.Null(), ""},
		{"between", Between(Column(0), i64(1), i64(10)), row.True, ""},
		{"not between", Between(Column(0), i64(11), i64(20)), row.False, ""},
		{"like", Like(Column(1), txt("H%o")), row.True, ""},
		{"like underscore", Like(Column(1), txt("H_llo")), row.True, ""},
		{"like no", Like(Column(1), txt("h%")), row.False, ""},
		{"ilike", Call(FuncILike, Column(1), txt("h%O")), row.True, ""},
		{"like escape", Like(txt("50%"), txt(`50\%`)), row.True, ""},
		{"like escaped literal", Like(txt("50x"), txt(`50\%`)), row.False, ""},
		{"like backtrack", Like(txt("abcabcabd"), txt("%abd")), row.True, ""},
		{"like multi percent", Like(txt("aXbYc"), txt("a%b%c")), row.True, ""},
		{"like trailing escape", Like(txt("a"), txt(`a\`)), row.Null(), CodeInvalidEscapeSequence},
		{"like unicode", Like(txt("héllo"), txt("h_llo")), row.True, ""},
		{"lower", Call(FuncLower, Column(1)), row.Text("hello"), ""},
		{"upper", Call(FuncUpper, Column(1)), row.Text("HELLO"), ""},
		{"length chars", Call(FuncLength, txt("héllo")), row.Int64(5), ""},
		{"length bytes", Call(FuncLength, Literal(row.Bytes([]byte{1, 2}))), row.Int64(2), ""},
		{"lower of int", Call(FuncLower, i64(1)), row.Null(), CodeUndefinedFunction},
		{"concat op", Call(FuncConcatOp, Column(1), i64(1)), row.Text("Hello1"), ""},
		{"concat op null", Call(FuncConcatOp, Column(1), Column(2)), row.Null(), ""},
		{"concat skips null", Call(FuncConcat, Column(1), Column(2), bol(true)), row.Text("Hellot"), ""},
		{"btrim", Call(FuncTrim, txt("  x  ")), row.Text("x"), ""},
		{"btrim chars", Call(FuncTrim, txt("xxaxx"), txt("x")), row.Text("a"), ""},
		{"ltrim", Call(FuncLTrim, txt("  x  ")), row.Text("x  "), ""},
		{"rtrim", Call(FuncRTrim, txt("  x  ")), row.Text("  x"), ""},
		{"replace", Call(FuncReplace, txt("abab"), txt("b"), txt("xy")), row.Text("axyaxy"), ""},
		{"replace empty", Call(FuncReplace, txt("ab"), txt(""), txt("x")), row.Text("ab"), ""},
		{"position", Call(FuncPosition, txt("l"), txt("héllo")), row.Int64(3), ""},
		{"position none", Call(FuncPosition, txt("z"), txt("hello")), row.Int64(0), ""},
		{"substr", Call(FuncSubstr, txt("héllo"), i64(2), i64(3)), row.Text("éll"), ""},
		{"substr from 0", Call(FuncSubstr, txt("hello"), i64(0), i64(3)), row.Text("he"), ""},
		{"substr negative start", Call(FuncSubstr, txt("hello"), i64(-5), i64(3)), row.Text(""), ""},
		{"substr to end", Call(FuncSubstr, txt("hello"), i64(4)), row.Text("lo"), ""},
		{"substr beyond", Call(FuncSubstr, txt("hello"), i64(9), i64(2)), row.Text(""), ""},
		{"substr huge count", Call(FuncSubstr, txt("hello"), i64(2), i64(math.MaxInt64)), row.Text("ello"), ""},
		{"substr negative count", Call(FuncSubstr, txt("hello"), i64(1), i64(-1)), row.Null(), CodeSubstringError},
		{"round half even float", Call(FuncRound, f64(2.5)), row.Float64(2), ""},
		{"round digits", Call(FuncRound, f64(3.14159), i64(2)), row.Float64(3.14), ""},
		{"round negative digits", Call(FuncRound, f64(1234.5), i64(-2)), row.Float64(1200), ""},
		{"round int negative digits", Call(FuncRound, i64(1250), i64(-2)), row.Int64(1300), ""},
		{"round negative int", Call(FuncRound, i64(-1250), i64(-2)), row.Int64(-1300), ""},
		{"round int overflow", Call(FuncRound, i64(math.MaxInt64), i64(-1)), row.Null(), CodeNumericValueOutOfRange},
		{"floor", Call(FuncFloor, f64(-1.5)), row.Float64(-2), ""},
		{"ceil", Call(FuncCeil, f64(-1.5)), row.Float64(-1), ""},
		{"floor int", Call(FuncFloor, i64(3)), row.Int64(3), ""},
		{"sqrt", Call(FuncSqrt, i64(16)), row.Float64(4), ""},
		{"sqrt negative", Call(FuncSqrt, f64(-1)), row.Null(), CodeInvalidArgumentForPower},
		{"power", Call(FuncPower, i64(2), i64(10)), row.Float64(1024), ""},
		{"power zero negative", Call(FuncPower, i64(0), i64(-1)), row.Null(), CodeInvalidArgumentForPower},
		{"power complex", Call(FuncPower, f64(-8), f64(1.0/3)), row.Null(), CodeInvalidArgumentForPower},
		{"power overflow", Call(FuncPower, f64(10), f64(400)), row.Null(), CodeNumericValueOutOfRange},
		{"power underflow", Call(FuncPower, f64(10), f64(-400)), row.Null(), CodeNumericValueOutOfRange},
		{"power fraction to inf", Call(FuncPower, f64(0.5), f64(math.Inf(1))), row.Float64(0), ""},
		{"greatest", Call(FuncGreatest, i64(1), null(row.TypeInt64), i64(3)), row.Int64(3), ""},
		{"least", Call(FuncLeast, txt("b"), txt("a")), row.Text("a"), ""},
		{"greatest all null", Call(FuncGreatest, null(row.TypeInt64)), row.Null(), ""},
		{"single value of one row", Call(FuncSingleValue, i64(1), txt("a")), row.Text("a"), ""},
		{"single value of no row", Call(FuncSingleValue, i64(0), null(row.TypeText)), row.Null(), ""},
		{"single value of two rows", Call(FuncSingleValue, i64(2), txt("a")), row.Null(), CodeCardinalityViolation},
		{"single value not taken", If(Literal(row.False), Call(FuncSingleValue, i64(2), i64(1)), i64(7)), row.Int64(7), ""},
		{"regex match", Call(FuncRegexMatch, txt("pg_toast_1"), txt("^pg_toast")), row.True, ""},
		{"regex no match", Call(FuncRegexMatch, txt("public"), txt("^pg_toast")), row.False, ""},
		{"regex null", Call(FuncRegexMatch, null(row.TypeText), txt("a")), row.Null(), ""},
		{"regex invalid", Call(FuncRegexMatch, txt("a"), txt("(")), row.Null(), CodeInvalidRegex},
		{"wrong arity", Call(FuncAdd, i64(1)), row.Null(), CodeUndefinedFunction},
		{"invalid func", Expr{Op: OpCall, Func: 200}, row.Null(), CodeInternal},
		{"invalid op", Expr{Op: 99}, row.Null(), CodeInternal},
		{"malformed if", Expr{Op: OpIf}, row.Null(), CodeInternal},
		{"malformed cast", Expr{Op: OpCast, Typ: row.TypeText}, row.Null(), CodeInternal},
		{"malformed in", Expr{Op: OpIn}, row.Null(), CodeInternal},
		{"non-bool in and", And(i64(1)), row.Null(), CodeDatatypeMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.e.Eval(input)
			if code := Code(err); code != tt.code {
				t.Fatalf("%s: error %v (code %q), want code %q", tt.e, err, code, tt.code)
			}
			if err == nil && !row.Equal(got, tt.want) || got.Type() != tt.want.Type() {
				t.Fatalf("%s = %v (%s), want %v (%s)", tt.e, got, got.Type(), tt.want, tt.want.Type())
			}
		})
	}
}

func TestCast(t *testing.T) {
	tests := []struct {
		in   row.Datum
		to   row.Type
		want row.Datum
		code string
	}{
		{row.Int64(3), row.TypeFloat64, row.Float64(3), ""},
		{row.Float64(2.5), row.TypeInt64, row.Int64(2), ""},
		{row.Float64(3.5), row.TypeInt64, row.Int64(4), ""},
		{row.Float64(-2.5), row.TypeInt64, row.Int64(-2), ""},
		{row.Float64(9.3e18), row.TypeInt64, row.Null(), CodeNumericValueOutOfRange},
		{row.Float64(math.NaN()), row.TypeInt64, row.Null(), CodeNumericValueOutOfRange},
		{row.Float64(-9.223372036854775808e18), row.TypeInt64, row.Int64(math.MinInt64), ""},
		{row.Bool(true), row.TypeInt64, row.Int64(1), ""},
		{row.Int64(0), row.TypeBool, row.False, ""},
		{row.Float64(1e15), row.TypeText, row.Text("1e+15"), ""},
		{row.Bool(true), row.TypeText, row.Text("t"), ""},
		{row.Timestamp(1_500_000), row.TypeText, row.Text("1970-01-01 00:00:01.5"), ""},
		{row.Bytes([]byte{0xab}), row.TypeText, row.Text(`\xab`), ""},
		{row.Text(" 42 "), row.TypeInt64, row.Int64(42), ""},
		{row.Text("4x"), row.TypeInt64, row.Null(), CodeInvalidTextRepr},
		{row.Text("99999999999999999999"), row.TypeInt64, row.Null(), CodeNumericValueOutOfRange},
		{row.Text("1.5e3"), row.TypeFloat64, row.Float64(1500), ""},
		{row.Text("-Infinity"), row.TypeFloat64, row.Float64(math.Inf(-1)), ""},
		{row.Text("NaN"), row.TypeFloat64, row.Float64(math.NaN()), ""},
		{row.Text("0x10"), row.TypeFloat64, row.Null(), CodeInvalidTextRepr},
		{row.Text("1e400"), row.TypeFloat64, row.Null(), CodeNumericValueOutOfRange},
		{row.Text("yes"), row.TypeBool, row.True, ""},
		{row.Text("of"), row.TypeBool, row.False, ""},
		{row.Text("o"), row.TypeBool, row.Null(), CodeInvalidTextRepr},
		{row.Text("TR"), row.TypeBool, row.True, ""},
		{row.Text("maybe"), row.TypeBool, row.Null(), CodeInvalidTextRepr},
		{row.Text("2023-11-14 22:13:20.5"), row.TypeTimestamp, row.Timestamp(1_699_999_999_999_999 + 500_001), ""},
		{row.Text("noon"), row.TypeTimestamp, row.Null(), CodeInvalidDatetimeFormat},
		{row.Text(`\x0aff`), row.TypeBytes, row.Bytes([]byte{0x0a, 0xff}), ""},
		{row.Text(`a\\b\001`), row.TypeBytes, row.Bytes([]byte{'a', '\\', 'b', 1}), ""},
		{row.Text(`a\q`), row.TypeBytes, row.Null(), CodeInvalidTextRepr},
		{row.Null(), row.TypeInt64, row.Null(), ""},
		{row.Timestamp(0), row.TypeInt64, row.Null(), CodeUndefinedFunction},
		{row.Bytes(nil), row.TypeInt64, row.Null(), CodeUndefinedFunction},
	}
	for _, tt := range tests {
		got, err := Cast(Literal(tt.in), tt.to).Eval(nil)
		if code := Code(err); code != tt.code {
			t.Errorf("cast %v to %s: error %v, want code %q", tt.in, tt.to, err, tt.code)
			continue
		}
		if err == nil && (!row.Equal(got, tt.want) || got.Type() != tt.want.Type()) {
			t.Errorf("cast %v to %s = %v, want %v", tt.in, tt.to, got, tt.want)
		}
		// Type inference must agree with evaluation on what is castable.
		_, terr := Cast(Literal(tt.in), tt.to).Type(nil)
		if (terr != nil) != (tt.code == CodeUndefinedFunction) {
			t.Errorf("cast %v to %s: Type error %v disagrees with Eval code %q", tt.in, tt.to, terr, tt.code)
		}
	}
}
