package expr

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestJSONToRecord: each column is its member's text (as written when
// raw), NULL when missing or json null; the last of repeated json keys
// wins; a NULL document is a row of NULLs for *_to_record and no rows
// for *_to_recordset; other kinds fail with PostgreSQL's 22023.
func TestJSONToRecord(t *testing.T) {
	jsonb := func(s string) Expr {
		j, err := row.ParseJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		return Literal(row.JSONB(j))
	}
	js := func(s string) Expr { return Literal(row.JSONText(s)) }
	cols := []Expr{
		Literal(row.Text("a")), Literal(row.Bool(false)),
		Literal(row.Text("b")), Literal(row.Bool(true)),
	}
	for _, tc := range []struct {
		f          TableFunc
		doc        Expr
		want, code string
	}{
		{TableJSONBToRecord, jsonb(`{"a": "x", "b": "y", "c": 1}`), `x|"y"`, ""},
		{TableJSONBToRecord, jsonb(`{"a": {"k": 1}, "b": null}`), `{"k": 1}|NULL`, ""},
		{TableJSONBToRecord, Literal(row.Null()), `NULL|NULL`, ""},
		{TableJSONBToRecordset, Literal(row.Null()), ``, ""},
		{TableJSONBToRecordset, jsonb(`[{"a": 1}, {"b": [1, 2]}]`), `1|NULL NULL|[1, 2]`, ""},
		{TableJSONToRecord, js(`{"a": 1, "b": {"k" : 1}, "a": "two"}`), `two|{"k" : 1}`, ""},
		{TableJSONToRecordset, js(`[{"b": "s"}, {}]`), `NULL|"s" NULL|NULL`, ""},
		{TableJSONBToRecord, jsonb(`[1]`), "", "cannot call populate_composite on an array"},
		{TableJSONToRecord, js(`1`), "", "cannot call populate_composite on a scalar"},
		{TableJSONBToRecordset, jsonb(`{"a": 1}`), "", "cannot call jsonb_to_recordset on a non-array"},
		{TableJSONBToRecordset, jsonb(`[{"a": 1}, 2]`), "", "argument of jsonb_to_recordset must be an array of objects"},
		{TableJSONToRecordset, js(`[null]`), "", "argument of json_to_recordset must be an array of objects"},
	} {
		call := TableCall{Func: tc.f, Args: append([]Expr{tc.doc}, cols...)}
		var got []string
		err := call.Eval(nil, func(ds []row.Datum) error {
			got = append(got, ds[0].String()+"|"+ds[1].String())
			return nil
		})
		if tc.code != "" {
			if err == nil || err.Error() != tc.code && !strings.Contains(err.Error(), tc.code) {
				t.Errorf("%s(%v): %v, want %q", tc.f, tc.doc, err, tc.code)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("%s(%v): %q, %v, want %q", tc.f, tc.doc, strings.Join(got, " "), err, tc.want)
		}
	}
	bad := TableCall{Func: TableJSONBToRecord, Args: []Expr{jsonb(`{}`), Literal(row.Text("a"))}}
	if _, err := bad.OutputTypes(nil); err == nil {
		t.Error("a column without its raw flag typed")
	}
}
