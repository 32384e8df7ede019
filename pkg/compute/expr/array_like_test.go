package expr

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestArrayCmpAnyLike(t *testing.T) {
	texts := func(s string) Expr { return Cast(txt(s), row.TypeTextArray) }
	like := func(x Expr, a string, i int, all bool) Expr {
		return Call(FuncArrayCmpAny, x, texts(a), i64(int64(ArrayLikeOp+i)), Literal(row.Bool(all)))
	}
	for _, tc := range []struct {
		e    Expr
		want string
	}{
		{like(txt("apple"), "{a%,b%}", 0, false), "t"},
		{like(txt("cherry"), "{a%,b%}", 0, false), "f"},
		{like(txt("cherry"), "{a%,NULL}", 0, false), "NULL"},
		{like(txt("apple"), "{a%,NULL}", 0, false), "t"},
		{like(txt("apple"), "{a%,%e}", 0, true), "t"},
		{like(txt("apple"), "{a%,b%}", 0, true), "f"},
		{like(txt("apple"), "{a%,NULL}", 0, true), "NULL"},
		{like(null(row.TypeText), "{}", 0, false), "f"},
		{like(null(row.TypeText), "{}", 0, true), "t"},
		{like(txt("APPLE"), "{a%}", 0, false), "f"},
		{like(txt("APPLE"), "{a%}", 1, false), "t"},
		{like(txt("apple"), "{a%,b%}", 2, false), "t"},
		{like(txt("apple"), "{a%,b%}", 2, true), "f"},
		{like(txt("APPLE"), "{a%,b%}", 3, true), "f"},
		{like(txt("cherry"), "{a%,b%}", 3, true), "t"},
		// Regular expression matches: ~, ~*, !~, !~*.
		{like(txt("apple"), "{^b,p+l}", ArrayRegexOp, false), "t"},
		{like(txt("apple"), "{^b,NULL}", ArrayRegexOp, false), "NULL"},
		{like(txt("apple"), "{^a,e$}", ArrayRegexOp, true), "t"},
		{like(txt("APPLE"), "{^a}", ArrayRegexOp, false), "f"},
		{like(txt("APPLE"), "{^a}", ArrayRegexOp+1, false), "t"},
		{like(txt("apple"), "{^a,^b}", ArrayRegexOp+2, false), "t"},
		{like(txt("apple"), "{^a,^b}", ArrayRegexOp+2, true), "f"},
		{like(txt("Banana"), "{^a,^b}", ArrayRegexOp+3, true), "f"},
		{like(txt("cherry"), "{^a,^b}", ArrayRegexOp+3, true), "t"},
	} {
		if _, err := tc.e.Type(nil); err != nil {
			t.Fatalf("%s: type: %v", tc.e, err)
		}
		got, err := tc.e.Eval(nil)
		if err != nil || got.String() != tc.want {
			t.Errorf("%s: got %v, %v; want %s", tc.e, got, err, tc.want)
		}
	}
	bad := Call(FuncArrayCmpAny, txt("a"), texts("{a}"), i64(int64(arrayOpCount)), Literal(row.False))
	if _, err := bad.Eval(nil); Code(err) != CodeInvalidParameterValue {
		t.Errorf("op %d: %v", arrayOpCount, err)
	}
	esc := like(txt("a"), `{"a\\"}`, 0, false)
	if _, err := esc.Eval(nil); Code(err) != CodeInvalidEscapeSequence {
		t.Errorf("trailing escape: %v", err)
	}
}

func TestArrayCmpAnyContains(t *testing.T) {
	jsonbs := func(s string) Expr { return Cast(txt(s), row.TypeJSONBArray) }
	doc := Cast(txt(`{"a": 1, "b": [1, 2]}`), row.TypeJSONB)
	op := func(i int, a string, all bool) Expr {
		return Call(FuncArrayCmpAny, doc, jsonbs(a), i64(int64(ArrayLikeOp+i)), Literal(row.Bool(all)))
	}
	for _, tc := range []struct {
		e    Expr
		want string
	}{
		{op(ArrayContainsOp, `{"{\"a\": 2}","{\"b\": [2]}"}`, false), "t"},
		{op(ArrayContainsOp, `{"{\"a\": 2}","{\"b\": [2]}"}`, true), "f"},
		{op(ArrayContainsOp, `{"{\"a\": 2}",NULL}`, false), "NULL"},
		{op(ArrayContainsOp+1, `{"{\"a\": 1}","{\"a\": 1, \"b\": [1, 2, 3]}"}`, false), "t"},
		{op(ArrayContainsOp+1, `{"{\"a\": 1}"}`, false), "f"},
	} {
		got, err := tc.e.Eval(nil)
		if err != nil || got.String() != tc.want {
			t.Errorf("%s: got %v, %v; want %s", tc.e, got, err, tc.want)
		}
	}
	mixed := Call(FuncArrayCmpAny, txt("a"), jsonbs(`{"{}"}`), i64(int64(ArrayLikeOp+ArrayContainsOp)), Literal(row.False))
	if _, err := mixed.Eval(nil); Code(err) != CodeUndefinedFunction {
		t.Errorf("text @> jsonb: %v", err)
	}
}
