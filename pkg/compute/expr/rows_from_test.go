package expr

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestRowsFrom: calls run in lockstep, the shorter padded with NULLs; a
// call with a NULL argument is empty on its own; malformed encodings are
// errors, never panics.
func TestRowsFrom(t *testing.T) {
	series := TableCall{Func: TableGenerateSeries, Args: []Expr{i64(1), Column(0)}}
	elems := TableCall{Func: TableUnnest, Args: []Expr{Cast(txt("{a,b}"), row.TypeTextArray)}}
	call := RowsFrom([]TableCall{series, elems}, []int{1, 1})
	input := []row.ColumnType{{Type: row.TypeInt64, Nullable: true}}
	types, err := call.OutputTypes(input)
	if err != nil || len(types) != 2 || !types[0].Nullable || types[1].Type != row.TypeText {
		t.Fatalf("types %v, %v", types, err)
	}
	if got := call.String(); got != "rows_from(generate_series(1, #0), unnest(CAST('{a,b}' AS text[])))" {
		t.Errorf("String: %s", got)
	}
	for _, tc := range []struct {
		in   row.Datum
		want string
	}{
		{row.Int64(3), "1,a 2,b 3,NULL"},
		{row.Int64(1), "1,a NULL,b"},
		{row.Null(), "NULL,a NULL,b"},
	} {
		var got []string
		if err := call.Eval([]row.Datum{tc.in}, func(ds []row.Datum) error {
			got = append(got, ds[0].String()+","+ds[1].String())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("over %v: %v, want %s", tc.in, got, tc.want)
		}
	}
	for _, args := range [][]Expr{
		nil,
		{txt("unnest"), i64(1)},
		{txt("unnest"), i64(2), i64(1), Column(0)},
		{txt("rows_from"), i64(0), i64(1)},
		{i64(1), i64(0), i64(1)},
	} {
		bad := TableCall{Func: TableRowsFrom, Args: args}
		if _, err := bad.OutputTypes(input); err == nil {
			t.Errorf("%v typed", args)
		}
		if err := bad.Eval([]row.Datum{row.Int64(1)}, func([]row.Datum) error { return nil }); err == nil {
			t.Errorf("%v ran", args)
		}
	}
	wide := RowsFrom([]TableCall{series}, []int{2})
	if _, err := wide.OutputTypes(input); err == nil {
		t.Error("a width that is not the call's typed")
	}
}

// TestPreparedRowsFrom: Prepare decodes a rows_from call's packed
// arguments once, and the prepared call evaluates row after row as the
// call does; a malformed call fails every row.
func TestPreparedRowsFrom(t *testing.T) {
	series := TableCall{Func: TableGenerateSeries, Args: []Expr{Literal(row.Int64(1)), Column(0)}}
	elems := TableCall{Func: TableUnnest, Args: []Expr{Cast(Literal(row.Text("{a,b}")), row.TypeTextArray)}}
	p := RowsFrom([]TableCall{series, elems}, []int{1, 1}).Prepare()
	if p.rf == nil || len(p.rf.calls) != 2 || p.rf.calls[1].Func != TableUnnest {
		t.Fatalf("not decoded: %+v", p.rf)
	}
	for n, want := range []string{"NULL,a NULL,b", "1,a NULL,b", "1,a 2,b", "1,a 2,b 3,NULL"} {
		var got []string
		if err := p.Eval([]row.Datum{row.Int64(int64(n))}, func(ds []row.Datum) error {
			got = append(got, ds[0].String()+","+ds[1].String())
			return nil
		}); err != nil || strings.Join(got, " ") != want {
			t.Errorf("over %d: %v, %v, want %s", n, got, err, want)
		}
	}
	bad := TableCall{Func: TableRowsFrom, Args: []Expr{Literal(row.Int64(1))}}.Prepare()
	for range 2 {
		if err := bad.Eval(nil, func([]row.Datum) error { return nil }); err == nil {
			t.Error("malformed call ran")
		}
	}
}
