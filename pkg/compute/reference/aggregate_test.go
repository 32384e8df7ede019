package reference

import (
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestAggregate(t *testing.T) {
	i, null := row.Int64, row.Null()
	vals := []weighted{{i(3), 2}, {null, 1}, {i(-1), 1}, {i(3), 1}}
	tests := []struct {
		kind     aggKind
		distinct bool
		want     row.Datum
	}{
		{aggCountStar, false, i(5)},
		{aggCount, false, i(4)},
		{aggCount, true, i(2)},
		{aggSum, false, i(8)},
		{aggSum, true, i(2)},
		{aggMin, false, i(-1)},
		{aggMax, false, i(3)},
		{aggAvg, false, row.Float64(2)},
		{aggAvg, true, row.Float64(1)},
	}
	for _, tt := range tests {
		got, err := aggregate(tt.kind, tt.distinct, "agg", vals, 5)
		if err != nil || !row.Equal(got, tt.want) {
			t.Errorf("aggregate(%d, distinct=%v) = %v, %v; want %v", tt.kind, tt.distinct, got, err, tt.want)
		}
	}
	if got, err := aggregate(aggSum, false, "sum", []weighted{{null, 3}}, 3); err != nil || !got.IsNull() {
		t.Errorf("sum of nulls = %v, %v; want NULL", got, err)
	}
	if _, err := aggregate(aggSum, false, "sum", []weighted{{i(math.MaxInt64), 1}, {i(1), 1}}, 2); err == nil {
		t.Error("sum overflow: want error")
	}
}

// TestAggregateAgreesWithOperators cross-checks the reference's aggregates
// against the engine's independent implementation on random groups.
func TestAggregateAgreesWithOperators(t *testing.T) {
	kinds := []struct {
		ref aggKind
		op  operators.AggFunc
	}{
		{aggCountStar, operators.AggCountStar}, {aggCount, operators.AggCount}, {aggSum, operators.AggSum},
		{aggMin, operators.AggMin}, {aggMax, operators.AggMax}, {aggAvg, operators.AggAvg},
		{aggVarPop, operators.AggVarPop}, {aggVarSamp, operators.AggVarSamp},
		{aggStddevPop, operators.AggStddevPop}, {aggStddevSamp, operators.AggStddevSamp},
	}
	rapid.Check(t, func(t *rapid.T) {
		float := rapid.Bool().Draw(t, "float")
		n := rapid.IntRange(1, 8).Draw(t, "n")
		group := map[string]int64{}
		for range n {
			var d row.Datum
			switch {
			case rapid.IntRange(0, 4).Draw(t, "null") == 0:
				d = row.Null()
			case float:
				d = row.Float64(float64(rapid.IntRange(-8, 8).Draw(t, "f")) / 4)
			default:
				d = row.Int64(rapid.SampledFrom([]int64{-3, 0, 1, 7, math.MaxInt64, math.MinInt64}).Draw(t, "i"))
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
		// operators wants its input sorted by value.
		sortValDiffs(input)
		distinct := rapid.Bool().Draw(t, "distinct")
		k := kinds[rapid.IntRange(0, len(kinds)-1).Draw(t, "kind")]
		if k.ref >= aggVarPop && !float {
			return // the variances take float64 only
		}
		want, wantErr := aggregate(k.ref, distinct, k.op.String(), vals, rows)
		out, err := operators.AggregateLogic([]operators.Aggregate{{Func: k.op, Distinct: distinct}})(nil, input)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%v: engine err %v, reference err %v", k.op, err, wantErr)
		}
		if err != nil {
			if err.Error() != wantErr.Error() {
				t.Fatalf("%v: engine err %q, reference err %q", k.op, err, wantErr)
			}
			return
		}
		got, _ := row.Row(out[0].Val).Unpack()
		if !row.Equal(got[0], want) {
			t.Fatalf("%v distinct=%v over %v: engine %v, reference %v", k.op, distinct, vals, got[0], want)
		}
	})
}
