package expr

import (
	"math"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestJSONBuildText pins the json text the construction functions print
// (PostgreSQL 15's: `{"k" : v}`, `[a, b]`, `{ "k" : v }`, json values as
// written, floats in float8 output form).
func TestJSONBuildText(t *testing.T) {
	j := row.JSONText(`{"a" :1,  "a": 2}`)
	for _, tc := range []struct {
		name string
		f    Func
		args []row.Datum
		want string
		code string
	}{
		{"object", FuncJSONTextBuildObject, []row.Datum{row.Text("a"), row.Int64(1), row.Int64(2), row.Null()}, `{"a" : 1, "2" : null}`, ""},
		{"object keeps json", FuncJSONTextBuildObject, []row.Datum{row.Text("j"), j}, `{"j" : {"a" :1,  "a": 2}}`, ""},
		{"object float key", FuncJSONTextBuildObject, []row.Datum{row.Float64(1e20), row.Float64(1e20)}, `{"1e+20" : 1e+20}`, ""},
		{"empty object", FuncJSONTextBuildObject, nil, `{}`, ""},
		{"odd arguments", FuncJSONTextBuildObject, []row.Datum{row.Text("a")}, "", CodeInvalidParameterValue},
		{"null key", FuncJSONTextBuildObject, []row.Datum{row.Text("a"), row.Int64(1), row.Null(), row.Int64(1)}, "", CodeInvalidParameterValue},
		{"json key", FuncJSONTextBuildObject, []row.Datum{j, row.Int64(1)}, "", CodeInvalidParameterValue},
		{"array", FuncJSONTextBuildArray, []row.Datum{row.Int64(1), row.Null(), row.Text("x\"\n"), row.Float64(0.5), j}, `[1, null, "x\"\n", 0.5, {"a" :1,  "a": 2}]`, ""},
		{"empty array", FuncJSONTextBuildArray, nil, `[]`, ""},
		{"to_json text", FuncToJSON, []row.Datum{row.Text("é/")}, `"é/"`, ""},
		{"to_json NaN", FuncToJSON, []row.Datum{row.Float64(math.NaN())}, `"NaN"`, ""},
		{"to_json timestamp", FuncToJSON, []row.Datum{row.Timestamp(500000)}, `"1970-01-01T00:00:00.5"`, ""},
		{"agg final array", FuncJSONAggFinal, []row.Datum{row.JSONB(row.JSON{Kind: row.JSONArray, Elems: []row.JSON{{Kind: row.JSONString, Str: "1"}, {Kind: row.JSONString, Str: "null"}}}), row.Bool(false)}, `[1, null]`, ""},
		{"row", FuncJSONRow, []row.Datum{row.Bool(false), row.Text("id"), row.Int64(1), row.Text(`a"b`), row.Null(), row.Text("j"), j}, `{"id":1,"a\"b":null,"j":{"a" :1,  "a": 2}}`, ""},
		{"row pretty", FuncJSONRow, []row.Datum{row.Bool(true), row.Text("a"), row.Int64(1), row.Text("b"), row.Float64(1e20)}, "{\"a\":1,\n \"b\":1e+20}", ""},
		{"row empty", FuncJSONRow, []row.Datum{row.Bool(false)}, `{}`, ""},
		{"row bad name", FuncJSONRow, []row.Datum{row.Bool(false), row.Null(), row.Int64(1)}, "", CodeInvalidParameterValue},
		{"agg final object", FuncJSONAggFinal, []row.Datum{row.JSONB(row.JSON{Kind: row.JSONArray, Elems: []row.JSON{{Kind: row.JSONString, Str: `"a" : 1`}}}), row.Bool(true)}, `{ "a" : 1 }`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalDef(funcs[tc.f], tc.args)
			if tc.code != "" {
				if ee, ok := err.(*EvalError); !ok || ee.Code != tc.code {
					t.Fatalf("err = %v, want code %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.JSONText() != tc.want {
				t.Errorf("got %s, want %s", got.JSONText(), tc.want)
			}
		})
	}
}

// evalDef calls a function's evaluator directly (strictness aside).
func evalDef(def funcDef, args []row.Datum) (row.Datum, error) {
	switch {
	case def.eval1 != nil:
		return def.eval1(args[0])
	case def.eval2 != nil:
		return def.eval2(args[0], args[1])
	}
	return def.evalN(args)
}
