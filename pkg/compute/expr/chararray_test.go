package expr

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestCharNArrays: varchar(x, n), bpchar(x, n) and their assignment forms
// apply the length rule to each element of a text[] (NULL elements kept),
// and bpchar_pad pads each element to n characters.
func TestCharNArrays(t *testing.T) {
	arr := func(elems ...row.Datum) row.Datum {
		d, err := row.Array(row.TypeTextArray, elems)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	in := Literal(arr(row.Text("abcd"), row.Null(), row.Text("ab  "), row.Text("é")))
	for _, tc := range []struct {
		name string
		e    Expr
		want row.Datum
		code string
	}{
		{"varchar truncates", Call(FuncVarchar, in, i64(3)), arr(row.Text("abc"), row.Null(), row.Text("ab "), row.Text("é")), ""},
		{"bpchar truncates and trims", Call(FuncBpchar, in, i64(3)), arr(row.Text("abc"), row.Null(), row.Text("ab"), row.Text("é")), ""},
		{"varchar assign too long", Call(FuncVarcharAssign, in, i64(3)), row.Null(), CodeStringDataRightTruncation},
		{"bpchar assign too long", Call(FuncBpcharAssign, in, i64(3)), row.Null(), CodeStringDataRightTruncation},
		{"bpchar assign spaces", Call(FuncBpcharAssign, Literal(arr(row.Text("ab  "))), i64(2)), arr(row.Text("ab")), ""},
		{"varchar no limit", Call(FuncVarchar, in, i64(0)), arr(row.Text("abcd"), row.Null(), row.Text("ab  "), row.Text("é")), ""},
		{"pad", Call(FuncBpcharPad, Literal(arr(row.Text("a"), row.Null(), row.Text("é"), row.Text("abc"))), i64(3)),
			arr(row.Text("a  "), row.Null(), row.Text("é  "), row.Text("abc")), ""},
		{"pad null", Call(FuncBpcharPad, null(row.TypeTextArray), i64(3)), row.Null(), ""},
		{"pad of text", Call(FuncBpcharPad, txt("a"), i64(3)), row.Null(), CodeUndefinedFunction},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.e.Eval(nil)
			if code := Code(err); code != tc.code {
				t.Fatalf("%s: error %v (code %q), want code %q", tc.e, err, code, tc.code)
			}
			if err == nil && (!row.Equal(got, tc.want) || got.Type() != tc.want.Type()) {
				t.Fatalf("%s = %v, want %v", tc.e, got, tc.want)
			}
		})
	}
}
