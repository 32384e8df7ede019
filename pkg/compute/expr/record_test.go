package expr

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestRecordFunctions: ROW(...) and ARRAY[ROW(...)] print as PostgreSQL
// prints them, record_field reads a field back, and = ANY over a path
// of records is record_eq's membership (NULL fields match, numerics by
// value), which a CYCLE clause's cycle test is.
func TestRecordFunctions(t *testing.T) {
	rec := func(args ...Expr) Expr { return Call(FuncRecord, args...) }
	num := func(s string) Expr { return Cast(txt(s), row.TypeNumeric) }
	path := Call(FuncArray, rec(i64(1), txt("a")), rec(i64(2), null(row.TypeText)), rec(num("1.5")))
	anyEq := func(x, a Expr) Expr { return Call(FuncArrayCmpAny, x, a, i64(0), Literal(row.False)) }
	for _, tc := range []struct {
		e    Expr
		want string
	}{
		{rec(i64(1), txt("a b"), null(row.TypeInt64)), `(1,"a b",)`},
		{rec(), `()`},
		{path, `{"(1,a)","(2,)",(1.5)}`},
		{Call(FuncArrayCat, path, Call(FuncArray, rec(i64(3), txt("c")))), `{"(1,a)","(2,)",(1.5),"(3,c)"}`},
		{Call(FuncRecordField, rec(i64(7), txt("x")), i64(1), TypedNull(row.TypeInt64)), "7"},
		{Call(FuncRecordField, rec(i64(7), txt("x")), i64(2), TypedNull(row.TypeText)), "x"},
		{Call(FuncRecordField, TypedNull(row.TypeRecord), i64(1), TypedNull(row.TypeInt64)), "NULL"},
		{anyEq(rec(i64(1), txt("a")), path), "t"},
		{anyEq(rec(i64(2), null(row.TypeText)), path), "t"},
		{anyEq(rec(i64(2), txt("b")), path), "f"},
		{anyEq(rec(num("1.50")), Call(FuncArray, rec(num("1.5")))), "t"},
		{Lt(rec(i64(1), txt("b")), rec(i64(2), txt("a"))), "t"},
		{Lt(rec(i64(1), null(row.TypeText)), rec(i64(1), txt("a"))), "f"},
	} {
		t.Run(tc.e.String(), func(t *testing.T) {
			if _, err := tc.e.Type(nil); err != nil {
				t.Fatalf("type: %v", err)
			}
			got, err := tc.e.Eval(nil)
			if err != nil || got.String() != tc.want {
				t.Fatalf("got %v, %v; want %s", got, err, tc.want)
			}
		})
	}
	if _, err := rec(rec(i64(1))).Type(nil); err == nil {
		t.Error("a record of a record type-checked")
	}
	if _, err := Lt(rec(i64(1)), rec(i64(1), i64(2))).Eval(nil); err == nil {
		t.Error("records of different lengths compared")
	}
}
