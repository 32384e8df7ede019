package expr

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestJSONObjectTableFuncs(t *testing.T) {
	jt := func(s string) Expr { return Literal(row.JSONText(s)) }
	jb := func(s string) Expr {
		d, err := CastDatum(row.Text(s), row.TypeJSONB)
		if err != nil {
			t.Fatal(err)
		}
		return Literal(d)
	}
	doc := `{"b" : "x\ny", "a":null, "b": [1, 2 ]}`
	tests := []struct {
		name       string
		call       TableCall
		want, code string
	}{
		{"each keeps duplicates as written", TableCall{Func: TableJSONTextEach, Args: []Expr{jt(doc)}}, `b "x\ny" a null b [1, 2 ]`, ""},
		{"each_text unquotes and nulls", TableCall{Func: TableJSONTextEachText, Args: []Expr{jt(doc)}}, "b x\ny a NULL b [1, 2 ]", ""},
		{"each empty", TableCall{Func: TableJSONTextEach, Args: []Expr{jt(` { } `)}}, "", ""},
		{"each array", TableCall{Func: TableJSONTextEach, Args: []Expr{jt(`[1]`)}}, "", CodeInvalidParameterValue},
		{"each scalar", TableCall{Func: TableJSONTextEachText, Args: []Expr{jt(` "s"`)}}, "", CodeInvalidParameterValue},
		{"each null argument", TableCall{Func: TableJSONTextEach, Args: []Expr{TypedNull(row.TypeJSON)}}, "", ""},
		{"json keys in document order", TableCall{Func: TableJSONTextObjectKeys, Args: []Expr{jt(doc)}}, "b a b", ""},
		{"json keys of array", TableCall{Func: TableJSONTextObjectKeys, Args: []Expr{jt(`[]`)}}, "", CodeInvalidParameterValue},
		{"jsonb keys in storage order", TableCall{Func: TableJSONObjectKeys, Args: []Expr{jb(`{"bb": 1, "a": 2, "c": 3}`)}}, "a c bb", ""},
		{"jsonb keys of scalar", TableCall{Func: TableJSONObjectKeys, Args: []Expr{jb(`3`)}}, "", CodeInvalidParameterValue},
		{"jsonb keys of json", TableCall{Func: TableJSONObjectKeys, Args: []Expr{jt(`{}`)}}, "", CodeUndefinedFunction},
		{"json each of jsonb", TableCall{Func: TableJSONTextEach, Args: []Expr{jb(`{}`)}}, "", CodeUndefinedFunction},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, code := runTable(t, tc.call)
			if got != tc.want || code != tc.code {
				t.Fatalf("%s = %q (code %q), want %q (code %q)", tc.call, got, code, tc.want, tc.code)
			}
		})
	}
}

// TestToJSONOfJSON pins that a json document becomes its jsonb value (as
// json::jsonb) in to_jsonb and the jsonb constructors, not a string.
func TestToJSONOfJSON(t *testing.T) {
	got, err := ToJSON(row.JSONText(`{"b": 1, "a" : [2]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(got.AppendText(nil)); s != `{"a": [2], "b": 1}` {
		t.Fatalf("to_jsonb(json) = %s", s)
	}
}

func TestJSONObjectFromArrays(t *testing.T) {
	arr := func(elems ...row.Datum) row.Datum {
		d, err := row.Array(row.TypeTextArray, elems)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b, one := row.Text("a"), row.Text("b"), row.Text("1")
	tests := []struct {
		name       string
		f          Func
		args       []row.Datum
		want, code string
	}{
		{"pairs keep duplicates", FuncJSONObject, []row.Datum{arr(a, one, b, row.Null(), a, b)}, `{"a" : "1", "b" : null, "a" : "b"}`, ""},
		{"two arrays", FuncJSONObject, []row.Datum{arr(a, b), arr(one, row.Null())}, `{"a" : "1", "b" : null}`, ""},
		{"jsonb last key wins", FuncJSONBObject, []row.Datum{arr(b, one, a, one, b, b)}, `{"a": "1", "b": "b"}`, ""},
		{"empty", FuncJSONObject, []row.Datum{arr()}, `{}`, ""},
		{"odd", FuncJSONObject, []row.Datum{arr(a)}, "", codeArraySubscript},
		{"mismatched", FuncJSONBObject, []row.Datum{arr(a, b), arr(one)}, "", codeArraySubscript},
		{"null key", FuncJSONObject, []row.Datum{arr(row.Null(), one)}, "", CodeNullValueNotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalDef(funcs[tc.f], tc.args)
			if Code(err) != tc.code {
				t.Fatalf("err = %v, want code %q", err, tc.code)
			}
			if tc.code != "" {
				return
			}
			s := got.JSONText()
			if got.Type() == row.TypeJSONB {
				s = string(got.JSON().AppendText(nil))
			}
			if s != tc.want {
				t.Fatalf("got %s, want %s", s, tc.want)
			}
		})
	}
}
