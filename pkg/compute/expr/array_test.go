package expr

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestArrayFunctions(t *testing.T) {
	arr := func(s string, typ row.Type) Expr { return Cast(txt(s), typ) }
	ints := func(s string) Expr { return arr(s, row.TypeInt64Array) }
	for _, tc := range []struct {
		e    Expr
		want string // text form; "NULL" for NULL
		code string // SQLSTATE of the expected error
	}{
		{e: Call(FuncArray, i64(1), null(row.TypeInt64), i64(3)), want: "{1,NULL,3}"},
		{e: Call(FuncArray, null(row.TypeNull)), want: "{NULL}"},
		{e: ints("{1, 2 ,NULL}"), want: "{1,2,NULL}"},
		{e: ints("{}"), want: "{}"},
		{e: arr(`{"a b",NULL,"NULL",""}`, row.TypeTextArray), want: `{"a b",NULL,"NULL",""}`},
		{e: arr("{1.50,NaN}", row.TypeNumericArray), want: "{1.50,NaN}"},
		{e: arr("{t,false}", row.TypeBoolArray), want: "{t,f}"},
		{e: Cast(ints("{1,2}"), row.TypeFloat64Array), want: "{1,2}"},
		{e: Cast(arr("{1.5}", row.TypeFloat64Array), row.TypeInt64Array), want: "{2}"},
		{e: ints("{1,x}"), code: CodeInvalidTextRepr},
		{e: ints("1,2"), code: CodeInvalidTextRepr},
		{e: ints("{1,2"), code: CodeInvalidTextRepr},
		{e: ints("{{1},{2}}"), code: CodeFeatureNotSupported},
		{e: ints("{99999999999999999999}"), code: CodeNumericValueOutOfRange},
		{e: Call(FuncArrayElem, ints("{5,6}"), i64(1)), want: "5"},
		{e: Call(FuncArrayElem, ints("{5,6}"), i64(0)), want: "NULL"},
		{e: Call(FuncArrayElem, ints("{5,6}"), i64(3)), want: "NULL"},
		{e: Call(FuncArrayElem, ints("{5,NULL}"), i64(2)), want: "NULL"},
		{e: Call(FuncArrayLength, ints("{5,6}"), i64(1)), want: "2"},
		{e: Call(FuncArrayLength, ints("{5,6}"), i64(2)), want: "NULL"},
		{e: Call(FuncArrayLength, ints("{}"), i64(1)), want: "NULL"},
		{e: Call(FuncCardinality, ints("{}")), want: "0"},
		{e: Call(FuncCardinality, ints("{NULL,NULL}")), want: "2"},
		{e: Eq(ints("{1,NULL}"), ints("{1,NULL}")), want: "t"},
		{e: Lt(ints("{1,2}"), ints("{1,NULL}")), want: "t"},
		{e: Lt(ints("{1}"), ints("{1,0}")), want: "t"},
		{e: Lt(ints("{}"), ints("{NULL}")), want: "t"},
		{e: Gt(ints("{2}"), ints("{1,9}")), want: "t"},
		{e: Call(FuncArrayCat, ints("{1}"), ints("{2,NULL}")), want: "{1,2,NULL}"},
		{e: Call(FuncArrayCat, null(row.TypeInt64Array), ints("{2}")), want: "{2}"},
		{e: Call(FuncArrayCat, ints("{1}"), null(row.TypeInt64Array)), want: "{1}"},
		{e: Call(FuncArrayCat, null(row.TypeInt64Array), null(row.TypeInt64Array)), want: "NULL"},
		{e: Call(FuncArrayContains, ints("{1,2,3}"), ints("{3,1,1}")), want: "t"},
		{e: Call(FuncArrayContains, ints("{1,NULL}"), ints("{NULL}")), want: "f"},
		{e: Call(FuncArrayContains, ints("{}"), ints("{}")), want: "t"},
		{e: Call(FuncArrayContains, ints("{1}"), null(row.TypeInt64Array)), want: "NULL"},
		{e: Call(FuncArrayContains, arr("{1.0}", row.TypeNumericArray), arr("{1.00}", row.TypeNumericArray)), want: "t"},
		{e: Call(FuncArrayOverlap, ints("{1,NULL}"), ints("{NULL,1}")), want: "t"},
		{e: Call(FuncArrayOverlap, ints("{NULL}"), ints("{NULL}")), want: "f"},
		{e: Call(FuncArrayOverlap, ints("{1}"), ints("{}")), want: "f"},
		{e: Call(FuncArrayPosition, ints("{5,NULL,5}"), i64(5), i64(2)), want: "3"},
		{e: Call(FuncArrayPosition, ints("{5,NULL,5}"), null(row.TypeInt64)), want: "2"},
		{e: Call(FuncArrayPosition, ints("{5}"), i64(6)), want: "NULL"},
		{e: Call(FuncArrayPosition, null(row.TypeInt64Array), i64(6)), want: "NULL"},
		{e: Call(FuncArrayPosition, ints("{5}"), i64(5), null(row.TypeInt64)), code: CodeNullValueNotAllowed},
		{e: Call(FuncArrayUpper, ints("{5,6}"), i64(1)), want: "2"},
		{e: Call(FuncArrayLower, ints("{5,6}"), i64(1)), want: "1"},
		{e: Call(FuncArrayLower, ints("{}"), i64(1)), want: "NULL"},
		{e: Call(FuncArrayUpper, ints("{5}"), i64(2)), want: "NULL"},
		{e: Call(FuncArrayToString, ints("{1,NULL,3}"), txt(",")), want: "1,3"},
		{e: Call(FuncArrayToString, ints("{1,NULL,3}"), txt(","), txt("*")), want: "1,*,3"},
		{e: Call(FuncArrayToString, ints("{1,NULL,3}"), txt(","), null(row.TypeText)), want: "1,3"},
		{e: Call(FuncArrayToString, ints("{1}"), null(row.TypeText)), want: "NULL"},
		{e: Call(FuncStringToArray, txt("a,b,,c"), txt(",")), want: `{a,b,"",c}`},
		{e: Call(FuncStringToArray, txt("ab"), null(row.TypeText)), want: "{a,b}"},
		{e: Call(FuncStringToArray, txt("ab"), txt("")), want: "{ab}"},
		{e: Call(FuncStringToArray, txt(""), txt(",")), want: "{}"},
		{e: Call(FuncStringToArray, txt("a,*"), txt(","), txt("*")), want: "{a,NULL}"},
		{e: Call(FuncStringToArray, null(row.TypeText), txt(",")), want: "NULL"},
	} {
		t.Run(tc.e.String(), func(t *testing.T) {
			if _, err := tc.e.Type(nil); err != nil {
				t.Fatalf("type: %v", err)
			}
			got, err := tc.e.Eval(nil)
			if tc.code != "" {
				if ee, ok := err.(*EvalError); !ok || ee.Code != tc.code {
					t.Fatalf("got %v, %v; want error %s", got, err, tc.code)
				}
				return
			}
			if err != nil || got.String() != tc.want {
				t.Fatalf("got %v, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestArrayTypeErrors(t *testing.T) {
	for _, e := range []Expr{
		Call(FuncArrayElem, i64(1), i64(1)),
		Call(FuncArrayLength, txt("x"), i64(1)),
		Call(FuncCardinality, i64(1)),
		Call(FuncArray, i64(1), txt("a")),
		Call(FuncArray, Literal(row.Time(0))), // no time[]
		Eq(Cast(txt("{1}"), row.TypeInt64Array), Cast(txt("{1}"), row.TypeTextArray)),
	} {
		if _, err := e.Type(nil); err == nil {
			t.Errorf("%s type-checked", e)
		}
	}
}

func TestArrayNarrow(t *testing.T) {
	a := Cast(txt("{1,NULL,40000}"), row.TypeInt64Array)
	if _, err := Call(FuncArrayNarrow, a, i64(2)).Eval(nil); Code(err) != CodeNumericValueOutOfRange {
		t.Errorf("40000 as smallint[]: %v", err)
	}
	if d, err := Call(FuncArrayNarrow, a, i64(4)).Eval(nil); err != nil || d.String() != "{1,NULL,40000}" {
		t.Errorf("40000 as integer[]: %v, %v", d, err)
	}
}

func TestArrayCmpAny(t *testing.T) {
	ints := func(s string) Expr { return Cast(txt(s), row.TypeInt64Array) }
	anyOf := func(x Expr, a Expr, op int64, all bool) Expr {
		return Call(FuncArrayCmpAny, x, a, i64(op), Literal(row.Bool(all)))
	}
	for _, tc := range []struct {
		e    Expr
		want string
	}{
		{anyOf(i64(1), ints("{1,2}"), 0, false), "t"},
		{anyOf(i64(3), ints("{1,2}"), 0, false), "f"},
		{anyOf(i64(3), ints("{1,NULL}"), 0, false), "NULL"},
		{anyOf(i64(1), ints("{1,NULL}"), 0, false), "t"},
		{anyOf(null(row.TypeInt64), ints("{}"), 0, false), "f"},
		{anyOf(null(row.TypeInt64), ints("{}"), 0, true), "t"},
		{anyOf(null(row.TypeInt64), ints("{1}"), 0, false), "NULL"},
		{anyOf(i64(1), null(row.TypeInt64Array), 0, false), "NULL"},
		{anyOf(i64(3), ints("{1,2}"), 4, true), "t"},
		{anyOf(i64(2), ints("{1,2}"), 4, true), "f"},
		{anyOf(i64(3), ints("{1,NULL}"), 1, true), "NULL"},
		{anyOf(i64(1), ints("{1,NULL}"), 1, true), "f"},
		{anyOf(f64(1.0), ints("{1}"), 0, false), "t"},
	} {
		if _, err := tc.e.Type(nil); err != nil {
			t.Fatalf("%s: type: %v", tc.e, err)
		}
		got, err := tc.e.Eval(nil)
		if err != nil || got.String() != tc.want {
			t.Errorf("%s: got %v, %v; want %s", tc.e, got, err, tc.want)
		}
	}
}

func TestUnnest(t *testing.T) {
	call := TableCall{Func: TableUnnest, Args: []Expr{Cast(txt("{3,NULL,1}"), row.TypeInt64Array)}}
	types, err := call.OutputTypes(nil)
	if err != nil || len(types) != 1 || types[0] != (row.ColumnType{Type: row.TypeInt64, Nullable: true}) {
		t.Fatalf("types %v, %v", types, err)
	}
	var got []string
	if err := call.Eval(nil, func(ds []row.Datum) error { got = append(got, ds[0].String()); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "3" || got[1] != "NULL" || got[2] != "1" {
		t.Errorf("unnest: %v", got)
	}
	bad := TableCall{Func: TableUnnest, Args: []Expr{i64(1)}}
	if _, err := bad.OutputTypes(nil); Code(err) != CodeUndefinedFunction {
		t.Errorf("unnest(bigint): %v", err)
	}
	if err := bad.Eval(nil, func([]row.Datum) error { return nil }); err == nil {
		t.Error("unnest(bigint) ran")
	}
}
