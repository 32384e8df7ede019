package expr

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestRegexpSplitAndSubscripts: PostgreSQL's pieces (an empty match at
// the start, at the end or right after a match splits nothing) and
// subscripts (forward, reverse, none for another dimension).
func TestRegexpSplitAndSubscripts(t *testing.T) {
	txt := func(s string) Expr { return Literal(row.Text(s)) }
	arr := Cast(txt("{5,6,7}"), row.TypeInt64Array)
	for _, tc := range []struct {
		call TableCall
		want string
	}{
		{TableCall{Func: TableRegexpSplit, Args: []Expr{txt("a,b,,c"), txt(",")}}, "a|b||c"},
		{TableCall{Func: TableRegexpSplit, Args: []Expr{txt("abc"), txt("b*")}}, "a|c"},
		{TableCall{Func: TableRegexpSplit, Args: []Expr{txt("abc"), txt("")}}, "a|b|c"},
		{TableCall{Func: TableRegexpSplit, Args: []Expr{txt("hi yo"), txt(`\s*`)}}, "h|i|y|o"},
		{TableCall{Func: TableRegexpSplit, Args: []Expr{txt(""), txt(",")}}, ""},
		{TableCall{Func: TableRegexpSplit, Args: []Expr{txt("aXbxc"), txt("x"), txt("i")}}, "a|b|c"},
		{TableCall{Func: TableGenerateSubscripts, Args: []Expr{arr, Literal(row.Int64(1))}}, "1|2|3"},
		{TableCall{Func: TableGenerateSubscripts, Args: []Expr{arr, Literal(row.Int64(1)), Literal(row.Bool(true))}}, "3|2|1"},
		{TableCall{Func: TableGenerateSubscripts, Args: []Expr{arr, Literal(row.Int64(2))}}, "<none>"},
	} {
		got := []string{}
		if err := tc.call.Eval(nil, func(ds []row.Datum) error {
			got = append(got, ds[0].String())
			return nil
		}); err != nil {
			t.Fatalf("%v: %v", tc.call, err)
		}
		s := strings.Join(got, "|")
		if len(got) == 0 {
			s = "<none>"
		}
		if s != tc.want {
			t.Errorf("%v: %q, want %q", tc.call, s, tc.want)
		}
	}
	g := TableCall{Func: TableRegexpSplit, Args: []Expr{txt("a"), txt("x"), txt("g")}}
	if err := g.Eval(nil, func([]row.Datum) error { return nil }); err == nil || !strings.Contains(err.Error(), `does not support the "global" option`) {
		t.Errorf("flag g: %v", err)
	}
}
