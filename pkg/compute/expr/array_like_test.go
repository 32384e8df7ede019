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
