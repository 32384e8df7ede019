package expr

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"pgregory.net/rapid"
)

// The schema random expressions are generated over.
var propTypes = []row.ColumnType{
	{Type: row.TypeInt64, Nullable: true},
	{Type: row.TypeFloat64, Nullable: true},
	{Type: row.TypeText, Nullable: true},
	{Type: row.TypeBool, Nullable: true},
	{Type: row.TypeTimestamp},
	{Type: row.TypeBytes},
}

func genRow(t *rapid.T) []row.Datum {
	maybeNull := func(d row.Datum, label string) row.Datum {
		if rapid.IntRange(0, 4).Draw(t, label) == 0 {
			return row.Null()
		}
		return d
	}
	return []row.Datum{
		maybeNull(row.Int64(rapid.SampledFrom([]int64{0, 1, -1, 7, math.MaxInt64, math.MinInt64}).Draw(t, "i")), "in"),
		maybeNull(row.Float64(rapid.SampledFrom([]float64{0, -0.5, 2.5, 1e300, math.Inf(1), math.NaN()}).Draw(t, "f")), "fn"),
		maybeNull(row.Text(rapid.SampledFrom([]string{"", "a", "Héllo", "%_", "42", "t", "1e3", "\x00"}).Draw(t, "s")), "sn"),
		maybeNull(row.Bool(rapid.Bool().Draw(t, "b")), "bn"),
		row.Timestamp(rapid.Int64Range(-1e15, 1e15).Draw(t, "ts")),
		row.Bytes([]byte(rapid.SampledFrom([]string{"", "\x00\xff", "ab"}).Draw(t, "by"))),
	}
}

// genExpr draws a well-typed expression of type want over propTypes.
func genExpr(t *rapid.T, want row.Type, depth int) Expr {
	leaf := depth <= 0 || rapid.IntRange(0, 3).Draw(t, "leaf") == 0
	pick := func(n int) int { return rapid.IntRange(0, n-1).Draw(t, "choice") }
	sub := func(ty row.Type) Expr { return genExpr(t, ty, depth-1) }
	num := func() row.Type { return rapid.SampledFrom([]row.Type{row.TypeInt64, row.TypeFloat64}).Draw(t, "num") }
	anyType := func() row.Type {
		return rapid.SampledFrom([]row.Type{row.TypeInt64, row.TypeFloat64, row.TypeText, row.TypeBool, row.TypeTimestamp, row.TypeBytes}).Draw(t, "any")
	}
	generic := func() Expr { // constructs valid at every type
		switch pick(3) {
		case 0:
			return If(sub(row.TypeBool), sub(want), sub(want))
		case 1:
			return Coalesce(sub(want), sub(want))
		default:
			return TypedNull(want)
		}
	}
	switch want {
	case row.TypeInt64:
		if leaf {
			return []Expr{Column(0), i64(rapid.Int64Range(-3, 3).Draw(t, "lit"))}[pick(2)]
		}
		switch pick(9) {
		case 0:
			return Call(rapid.SampledFrom([]Func{FuncAdd, FuncSub, FuncMul, FuncDiv, FuncMod}).Draw(t, "op"), sub(row.TypeInt64), sub(row.TypeInt64))
		case 1:
			return Call(rapid.SampledFrom([]Func{FuncNeg, FuncAbs, FuncRound, FuncFloor}).Draw(t, "op"), sub(row.TypeInt64))
		case 2:
			return Call(FuncLength, sub(rapid.SampledFrom([]row.Type{row.TypeText, row.TypeBytes}).Draw(t, "lt")))
		case 3:
			return Call(FuncPosition, sub(row.TypeText), sub(row.TypeText))
		case 4:
			return Cast(sub(rapid.SampledFrom([]row.Type{row.TypeFloat64, row.TypeText, row.TypeBool}).Draw(t, "from")), row.TypeInt64)
		case 5:
			return Call(FuncRound, sub(row.TypeInt64), i64(rapid.Int64Range(-20, 2).Draw(t, "digits")))
		case 6:
			return NullIf(sub(row.TypeInt64), sub(num()))
		case 7:
			return Call(FuncGreatest, sub(row.TypeInt64), sub(row.TypeInt64))
		}
		return generic()
	case row.TypeFloat64:
		if leaf {
			return []Expr{Column(1), f64(rapid.SampledFrom([]float64{0, 0.5, -2, 1e308, math.Inf(-1), math.NaN()}).Draw(t, "lit"))}[pick(2)]
		}
		switch pick(7) {
		case 0:
			a, b := sub(row.TypeFloat64), sub(num())
			if pick(2) == 0 {
				a, b = b, a
			}
			return Call(rapid.SampledFrom([]Func{FuncAdd, FuncSub, FuncMul, FuncDiv, FuncMod}).Draw(t, "op"), a, b)
		case 1:
			return Call(FuncSqrt, sub(num()))
		case 2:
			return Call(rapid.SampledFrom([]Func{FuncFloor, FuncCeil, FuncRound, FuncAbs, FuncNeg}).Draw(t, "op"), sub(row.TypeFloat64))
		case 3:
			return Call(FuncRound, sub(row.TypeFloat64), i64(rapid.Int64Range(-400, 400).Draw(t, "digits")))
		case 4:
			return Cast(sub(rapid.SampledFrom([]row.Type{row.TypeInt64, row.TypeText}).Draw(t, "from")), row.TypeFloat64)
		case 5:
			return Call(FuncPower, sub(num()), sub(num()))
		}
		return generic()
	case row.TypeText:
		if leaf {
			return []Expr{Column(2), txt(rapid.SampledFrom([]string{"", "x%", "é", "yes"}).Draw(t, "lit"))}[pick(2)]
		}
		switch pick(8) {
		case 0:
			return Call(rapid.SampledFrom([]Func{FuncLower, FuncUpper, FuncTrim, FuncLTrim, FuncRTrim}).Draw(t, "op"), sub(row.TypeText))
		case 1:
			return Call(FuncConcatOp, sub(anyType()), sub(anyType()))
		case 2:
			return Call(FuncConcat, sub(anyType()), sub(anyType()), sub(anyType()))
		case 3:
			return Call(FuncReplace, sub(row.TypeText), sub(row.TypeText), sub(row.TypeText))
		case 4:
			return Call(FuncSubstr, []Expr{sub(row.TypeText), sub(row.TypeInt64), sub(row.TypeInt64)}[:2+pick(2)]...)
		case 5:
			return Cast(sub(anyType()), row.TypeText)
		case 6:
			return Call(FuncTrim, sub(row.TypeText), sub(row.TypeText))
		}
		return generic()
	case row.TypeBool:
		if leaf {
			return []Expr{Column(3), bol(rapid.Bool().Draw(t, "lit"))}[pick(2)]
		}
		switch pick(10) {
		case 0:
			return And(sub(row.TypeBool), sub(row.TypeBool), sub(row.TypeBool))
		case 1:
			return Or(sub(row.TypeBool), sub(row.TypeBool))
		case 2:
			return Not(sub(row.TypeBool))
		case 3:
			return Call(rapid.SampledFrom([]Func{FuncEq, FuncNeq, FuncLt, FuncLte, FuncGt, FuncGte}).Draw(t, "op"), sub(num()), sub(num()))
		case 4:
			ty := anyType()
			return Call(rapid.SampledFrom([]Func{FuncEq, FuncLt}).Draw(t, "op"), sub(ty), sub(ty))
		case 5:
			return IsNull(sub(anyType()))
		case 6:
			return Call(rapid.SampledFrom([]Func{FuncLike, FuncILike}).Draw(t, "op"), sub(row.TypeText), sub(row.TypeText))
		case 7:
			return In(sub(row.TypeInt64), sub(row.TypeInt64), sub(row.TypeFloat64), TypedNull(row.TypeInt64))
		case 8:
			return Between(sub(row.TypeText), sub(row.TypeText), sub(row.TypeText))
		}
		return Cast(sub(rapid.SampledFrom([]row.Type{row.TypeText, row.TypeInt64}).Draw(t, "from")), row.TypeBool)
	case row.TypeTimestamp:
		if leaf || pick(2) == 0 {
			return []Expr{Column(4), Literal(row.Timestamp(rapid.Int64().Draw(t, "lit")))}[pick(2)]
		}
		if pick(2) == 0 {
			return Cast(sub(row.TypeText), row.TypeTimestamp)
		}
		return generic()
	default: // bytes
		if leaf || pick(2) == 0 {
			return []Expr{Column(5), Literal(row.Bytes([]byte{0, 1}))}[pick(2)]
		}
		if pick(2) == 0 {
			return Cast(sub(row.TypeText), row.TypeBytes)
		}
		return generic()
	}
}

// TestTypedEvaluation: for random well-typed expressions and random
// rows, evaluation never panics, a value always has the inferred type
// (NULL only if inferred nullable), every error carries a SQLSTATE, and
// the JSON round trip evaluates identically.
func TestTypedEvaluation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want := rapid.SampledFrom([]row.Type{row.TypeInt64, row.TypeFloat64, row.TypeText, row.TypeBool, row.TypeTimestamp, row.TypeBytes}).Draw(t, "type")
		e := genExpr(t, want, 4)
		typ, err := e.Type(propTypes)
		if err != nil {
			t.Fatalf("generated %s does not type-check: %v", e, err)
		}
		if typ.Type != want && typ.Type != row.TypeNull {
			t.Fatalf("%s: inferred %s, generated for %s", e, typ, want)
		}
		in := genRow(t)
		v, err := e.Eval(in)
		if err != nil {
			if Code(err) == "" || Code(err) == CodeInternal || Code(err) == CodeUndefinedFunction {
				t.Fatalf("%s on %v: unexpected error %v", e, in, err)
			}
		} else if v.IsNull() {
			if !typ.Nullable && typ.Type != row.TypeNull {
				t.Fatalf("%s on %v: NULL from non-nullable %s", e, in, typ)
			}
		} else if v.Type() != typ.Type {
			t.Fatalf("%s on %v: %v has type %s, inferred %s", e, in, v, v.Type(), typ)
		}
		b, merr := json.Marshal(e)
		if merr != nil {
			t.Fatal(merr)
		}
		var back Expr
		if uerr := json.Unmarshal(b, &back); uerr != nil {
			t.Fatalf("unmarshal %s: %v", b, uerr)
		}
		v2, err2 := back.Eval(in)
		if Code(err2) != Code(err) || (err == nil && !row.Equal(v, v2)) {
			t.Fatalf("JSON round trip of %s changed the result: %v/%v vs %v/%v", e, v, err, v2, err2)
		}
	})
}

// TestLogicIsOrderIndependent: AND and OR give the same result (value or
// error code) for every permutation of their arguments, which lets a
// planner reorder predicates.
func TestLogicIsOrderIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		args := []Expr{genExpr(t, row.TypeBool, 2), genExpr(t, row.TypeBool, 2), genExpr(t, row.TypeBool, 2)}
		in := genRow(t)
		for _, mk := range []func(...Expr) Expr{And, Or} {
			v0, err0 := mk(args...).Eval(in)
			v1, err1 := mk(args[2], args[0], args[1]).Eval(in)
			v2, err2 := mk(args[1], args[2], args[0]).Eval(in)
			if (err0 == nil) != (err1 == nil) || (err0 == nil) != (err2 == nil) ||
				(err0 == nil && (!row.Equal(v0, v1) || !row.Equal(v0, v2))) {
				t.Fatalf("%s: %v/%v, %v/%v, %v/%v", mk(args...), v0, err0, v1, err1, v2, err2)
			}
		}
	})
}
