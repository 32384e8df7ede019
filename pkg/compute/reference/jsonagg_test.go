package reference

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func jsonb(t *rapid.T, s string) row.Datum {
	j, err := row.ParseJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	return row.JSONB(j)
}

// TestJSONAggregateAgreesWithOperators cross-checks jsonb_agg and
// jsonb_object_agg of the engine and of the reference on random groups
// with multiplicities, NULLs and DISTINCT.
func TestJSONAggregateAgreesWithOperators(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		object := rapid.Bool().Draw(t, "object")
		docs := []string{`1`, `2.50`, `"a"`, `[1]`, `{"x": null}`, `null`}
		if object {
			docs = []string{`{"a": 1}`, `{"a": 2}`, `{"b": [true]}`, `{"aa": "x"}`}
		}
		group := map[string]int64{}
		for range rapid.IntRange(1, 6).Draw(t, "n") {
			d := row.Null()
			if object || rapid.IntRange(0, 4).Draw(t, "null") > 0 {
				d = jsonb(t, rapid.SampledFrom(docs).Draw(t, "doc"))
			}
			group[string(row.Pack(d))] += int64(rapid.IntRange(1, 3).Draw(t, "mult"))
		}
		var input []operators.ValDiff
		var vals []weighted
		var rows int64
		for r, m := range group {
			input = append(input, operators.ValDiff{Val: []byte(r), Diff: m})
			ds, _ := row.Row(r).Unpack()
			vals = append(vals, weighted{ds[0], m})
			rows += m
		}
		sortValDiffs(input)
		distinct := rapid.Bool().Draw(t, "distinct")
		ref, op := aggJSONAgg, operators.AggJSONAgg
		if object {
			ref, op = aggJSONObjectAgg, operators.AggJSONObjectAgg
		}
		want, wantErr := aggregate(ref, distinct, op.String(), vals, rows)
		out, err := operators.AggregateLogic([]operators.Aggregate{{Func: op, Distinct: distinct}})(nil, input)
		if err != nil || wantErr != nil {
			t.Fatalf("engine err %v, reference err %v", err, wantErr)
		}
		got, _ := row.Row(out[0].Val).Unpack()
		if got[0] != want {
			t.Fatalf("%v distinct=%v over %v: engine %v, reference %v", op, distinct, vals, got[0], want)
		}
	})
}
