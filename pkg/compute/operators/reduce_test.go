package operators

import (
	"math"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestAggregateLogic(t *testing.T) {
	null := row.Null()
	f := row.Float64
	all := []Aggregate{
		{Func: AggCountStar},
		{Func: AggCount, Column: 0},
		{Func: AggSum, Column: 0},
		{Func: AggMin, Column: 0},
		{Func: AggMax, Column: 0},
		{Func: AggAvg, Column: 0},
		{Func: AggCount, Column: 0, Distinct: true},
	}
	tests := []struct {
		name    string
		aggs    []Aggregate
		input   []ValDiff
		want    string // rendered output row, "" for none
		wantErr string // SQLSTATE
	}{
		{"ints", all, []ValDiff{{pack(i64(1)), 2}, {pack(i64(5)), 1}},
			"(k, 3, 3, 7, 1, 5, 2.3333333333333335, 2)", ""},
		{"nulls ignored", all, []ValDiff{{pack(i64(4)), 1}, {pack(null), 3}},
			"(k, 4, 1, 4, 4, 4, 4, 1)", ""},
		{"only nulls", all, []ValDiff{{pack(null), 2}},
			"(k, 2, 0, NULL, NULL, NULL, NULL, 0)", ""},
		{"floats", []Aggregate{{Func: AggSum}, {Func: AggAvg}, {Func: AggMin}, {Func: AggMax}},
			[]ValDiff{{pack(f(-1.5)), 1}, {pack(f(2)), 2}},
			"(k, 2.5, 0.8333333333333334, -1.5, 2)", ""},
		{"numeric sum", []Aggregate{{Func: AggSum}, {Func: AggMin}, {Func: AggMax}},
			[]ValDiff{{pack(row.MustNumeric("0.1")), 3}, {pack(row.MustNumeric("-1e-20")), 1}, {pack(null), 1}},
			"(k, 0.29999999999999999999, -0.00000000000000000001, 0.1)", ""},
		{"numeric sum nan", []Aggregate{{Func: AggSum}},
			[]ValDiff{{pack(row.MustNumeric("1")), 1}, {pack(row.MustNumeric("NaN")), 1}}, "(k, NaN)", ""},
		{"numeric sum infinities", []Aggregate{{Func: AggSum}},
			[]ValDiff{{pack(row.MustNumeric("Infinity")), 1}, {pack(row.MustNumeric("-Infinity")), 1}}, "(k, NaN)", ""},
		{"numeric sum infinity", []Aggregate{{Func: AggSum}},
			[]ValDiff{{pack(row.MustNumeric("Infinity")), 1}, {pack(row.MustNumeric("5")), 1}}, "(k, Infinity)", ""},
		{"sum distinct", []Aggregate{{Func: AggSum, Distinct: true}},
			[]ValDiff{{pack(i64(3)), 4}, {pack(i64(5)), 1}}, "(k, 8)", ""},
		// 1.5 and 1.50 are one value for DISTINCT, whatever their scales.
		{"numeric distinct ignores scale", []Aggregate{{Func: AggCount, Distinct: true}, {Func: AggSum, Distinct: true}},
			[]ValDiff{{pack(scaledNum("1.5", 1)), 1}, {pack(scaledNum("1.5", 2)), 2}, {pack(scaledNum("1.5", 3)), 1}, {pack(scaledNum("2", 0)), 1}},
			"(k, 2, 3.5)", ""},
		{"text min max", []Aggregate{{Func: AggMin}, {Func: AggMax}},
			[]ValDiff{{pack(row.Text("b")), 1}, {pack(row.Text("a")), 1}, {pack(null), 1}}, "(k, a, b)", ""},
		{"second column", []Aggregate{{Func: AggMax, Column: 1}},
			[]ValDiff{{pack(i64(9), i64(1)), 1}, {pack(i64(1), i64(7)), 1}}, "(k, 7)", ""},
		{"sum overflow", []Aggregate{{Func: AggSum}},
			[]ValDiff{{pack(i64(math.MaxInt64)), 2}}, "", CodeNumericOutOfRange},
		{"avg overflow", []Aggregate{{Func: AggAvg}},
			[]ValDiff{{pack(i64(math.MinInt64)), 1}, {pack(i64(-1)), 1}}, "", CodeNumericOutOfRange},
		{"overflowing partials cancel", []Aggregate{{Func: AggSum}},
			[]ValDiff{{pack(i64(math.MinInt64)), 2}, {pack(i64(math.MaxInt64)), 2}}, "(k, -2)", ""},
		{"string_agg", []Aggregate{{Func: AggStringAgg, Sep: 1}, {Func: AggStringAgg, Sep: 1, Order: []row.ColumnOrder{{Column: 2, Desc: true, NullsLast: true}}}},
			[]ValDiff{{pack(row.Text("b"), row.Text("-"), i64(1)), 2}, {pack(row.Text("a"), null, i64(2)), 1}, {pack(null, row.Text("+"), i64(3)), 1}},
			"(k, a-b-b, a-b-b)", ""},
		{"string_agg separators", []Aggregate{{Func: AggStringAgg, Sep: 1, Order: []row.ColumnOrder{{Column: 2, NullsLast: true}}}, {Func: AggStringAgg, Sep: 1, Distinct: true}},
			[]ValDiff{{pack(row.Text("x"), row.Text(";"), i64(1)), 1}, {pack(row.Text("y"), row.Text(","), i64(2)), 2}},
			"(k, x,y,y, x,y)", ""},
		{"string_agg only nulls", []Aggregate{{Func: AggStringAgg, Sep: 1}}, []ValDiff{{pack(null, row.Text(",")), 1}}, "(k, NULL)", ""},
		{"concat_agg arrays", []Aggregate{{Func: AggConcat}, {Func: AggConcat, Order: []row.ColumnOrder{{Column: 1, Desc: true}}}, {Func: AggConcat, Distinct: true}},
			[]ValDiff{{pack(intArray(2), i64(1)), 2}, {pack(intArray(1, -1), null), 1}, {pack(null, i64(3)), 1}, {pack(intArray(), i64(4)), 1}, {pack(intArray(-5), i64(2)), 1}},
			"(k, {-5,1,-1,2,2}, {1,-1,-5,2,2}, {-5,1,-1,2})", ""},
		{"concat_agg null elements", []Aggregate{{Func: AggConcat, Order: []row.ColumnOrder{{Column: 1, NullsLast: true}}}},
			[]ValDiff{{pack(intArray(0), i64(2)), 1}, {pack(mustArray(row.TypeInt64Array, null), i64(1)), 1}},
			"(k, {NULL,0})", ""},
		{"concat_agg only nulls", []Aggregate{{Func: AggConcat}}, []ValDiff{{pack(null), 3}}, "(k, NULL)", ""},
		{"concat_agg jsonb", []Aggregate{{Func: AggConcat, Order: []row.ColumnOrder{{Column: 1, Desc: true, NullsLast: true}}}},
			[]ValDiff{{pack(jsonArray(`[1]`), i64(1)), 1}, {pack(jsonArray(`[null]`), i64(2)), 1}},
			`(k, [null, 1])`, ""},
		{"concat_agg mixed types", []Aggregate{{Func: AggConcat}},
			[]ValDiff{{pack(intArray(1)), 1}, {pack(mustArray(row.TypeTextArray, row.Text("a"))), 1}}, "", CodeInternal},
		{"concat_agg of a scalar", []Aggregate{{Func: AggConcat}}, []ValDiff{{pack(i64(1)), 1}}, "", CodeInternal},
		{"variances", []Aggregate{{Func: AggVarPop}, {Func: AggVarSamp}, {Func: AggStddevPop}, {Func: AggStddevSamp}},
			[]ValDiff{{pack(f(1)), 1}, {pack(f(2)), 1}, {pack(f(3)), 1}, {pack(f(4)), 1}, {pack(null), 1}},
			"(k, 1.25, 1.6666666666666667, 1.118033988749895, 1.2909944487358056)", ""},
		{"variance of one", []Aggregate{{Func: AggVarPop}, {Func: AggVarSamp}, {Func: AggStddevSamp, Distinct: true}},
			[]ValDiff{{pack(f(7)), 1}}, "(k, 0, NULL, NULL)", ""},
		{"variance of large values", []Aggregate{{Func: AggVarSamp}},
			[]ValDiff{{pack(f(1e9 + 1)), 1}, {pack(f(1e9 + 2)), 1}, {pack(f(1e9 + 3)), 1}}, "(k, 1)", ""},
		{"variance infinity", []Aggregate{{Func: AggVarPop}, {Func: AggVarSamp}},
			[]ValDiff{{pack(f(math.Inf(1))), 1}}, "(k, NaN, NULL)", ""},
		{"variance overflow", []Aggregate{{Func: AggVarPop}},
			[]ValDiff{{pack(f(1e308)), 1}, {pack(f(-1e308)), 1}}, "", CodeNumericOutOfRange},
		{"variance of ints", []Aggregate{{Func: AggVarPop}}, []ValDiff{{pack(i64(1)), 1}}, "", CodeInternal},
		{"sum of squares", []Aggregate{{Func: AggSumSquares}, {Func: AggSumSquares, Distinct: true}},
			[]ValDiff{{pack(row.MustNumeric("1.5")), 2}, {pack(row.MustNumeric("-1.5")), 1}, {pack(null), 1}}, "(k, 6.75, 4.50)", ""},
		{"sum of squares nan", []Aggregate{{Func: AggSumSquares}},
			[]ValDiff{{pack(row.MustNumeric("-Infinity")), 1}, {pack(row.MustNumeric("2")), 1}}, "(k, Infinity)", ""},
		{"negative multiplicity", all, []ValDiff{{pack(i64(1)), -1}}, "", CodeInternal},
		{"sum of text", []Aggregate{{Func: AggSum}}, []ValDiff{{pack(row.Text("x")), 1}}, "", CodeInternal},
		{"missing column", []Aggregate{{Func: AggMin, Column: 3}}, []ValDiff{{pack(i64(1)), 1}}, "", CodeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := AggregateLogic(tt.aggs)(pack(row.Text("k")), tt.input)
			if tt.wantErr != "" {
				e, ok := err.(Error)
				if !ok || e.Code != tt.wantErr {
					t.Fatalf("err = %v, want SQLSTATE %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if len(out) != 1 || out[0].Diff != 1 || rowText(out[0].Val) != tt.want {
				t.Fatalf("got %v, want %s", out, tt.want)
			}
		})
	}
}

func TestDistinctThresholdLogic(t *testing.T) {
	k := pack(i64(7))
	tests := []struct {
		name          string
		n             int64
		distinct      int64 // 0: no output
		distinctError bool
		threshold     int64
	}{
		{"positive", 3, 1, false, 3},
		{"one", 1, 1, false, 1},
		{"negative", -2, 0, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []ValDiff{{Val: nil, Diff: tt.n}}
			out, err := DistinctLogic()(k, in)
			if (err != nil) != tt.distinctError {
				t.Fatalf("distinct err = %v", err)
			}
			if got := totalDiff(out); got != tt.distinct {
				t.Errorf("distinct = %d, want %d", got, tt.distinct)
			}
			out, err = ThresholdLogic()(k, in)
			if err != nil {
				t.Fatal(err)
			}
			if got := totalDiff(out); got != tt.threshold {
				t.Errorf("threshold = %d, want %d", got, tt.threshold)
			}
		})
	}
}

func TestTopKLogic(t *testing.T) {
	null := row.Null()
	r := func(a row.Datum, b int64) row.Row { return pack(a, i64(b)) }
	input := Consolidate([]ValDiff{
		{r(i64(3), 1), 2},
		{r(i64(1), 2), 1},
		{r(null, 3), 1},
		{r(i64(2), 4), 3},
	})
	tests := []struct {
		name string
		spec TopKSpec
		want []string // "row:n" in val order
	}{
		{"asc limit 2", TopKSpec{Order: []row.ColumnOrder{{Column: 0, NullsLast: true}}, Limit: 2},
			[]string{"(1, 2):1", "(2, 4):1"}},
		{"asc offset 2 limit 3", TopKSpec{Order: []row.ColumnOrder{{Column: 0, NullsLast: true}}, Limit: 3, Offset: 2},
			[]string{"(2, 4):2", "(3, 1):1"}},
		{"desc nulls first limit 2", TopKSpec{Order: []row.ColumnOrder{{Column: 0, Desc: true}}, Limit: 2},
			[]string{"(3, 1):1", "(NULL, 3):1"}},
		{"desc nulls last limit 3", TopKSpec{Order: []row.ColumnOrder{{Column: 0, Desc: true, NullsLast: true}}, Limit: 3},
			[]string{"(2, 4):1", "(3, 1):2"}},
		{"no limit offset 5", TopKSpec{Order: []row.ColumnOrder{{Column: 0, NullsLast: true}}, Limit: -1, Offset: 5},
			[]string{"(3, 1):1", "(NULL, 3):1"}},
		{"limit 0", TopKSpec{Order: []row.ColumnOrder{{Column: 0, NullsLast: true}}, Limit: 0}, nil},
		{"order by second col", TopKSpec{Order: []row.ColumnOrder{{Column: 1, Desc: true, NullsLast: true}}, Limit: 1},
			[]string{"(2, 4):1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := TopKLogic(tt.spec)(pack(), input)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range out {
				got = append(got, rowText(v.Val)+":"+itoa(v.Diff))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
			}
		})
	}
	if _, err := TopKLogic(TopKSpec{Limit: 1})(pack(), []ValDiff{{r(i64(1), 1), -1}}); err == nil {
		t.Error("negative multiplicity: want error")
	}
}

func itoa(n int64) string { return row.Int64(n).String() }

// TestFloatSumDependsOnMultisetOnly: a float sum adds each distinct value
// once, times its total multiplicity, in ascending order, however the rows
// carrying it are split (here by a second column).
func TestFloatSumDependsOnMultisetOnly(t *testing.T) {
	f := row.Float64
	split := []ValDiff{{pack(f(0.1), i64(1)), 1}, {pack(f(0.1), i64(2)), 2}, {pack(f(0.2), i64(0)), 1}}
	whole := []ValDiff{{pack(f(0.1), i64(0)), 3}, {pack(f(0.2), i64(0)), 1}}
	logic := AggregateLogic([]Aggregate{{Func: AggSum}, {Func: AggAvg}})
	a, errA := logic(nil, Consolidate(split))
	b, errB := logic(nil, Consolidate(whole))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	// Variables, not constants: Go folds constant expressions exactly.
	x, y := 0.1, 0.2
	sum := x*3 + y*1
	want := pack(f(sum), f(sum/4))
	if string(a[0].Val) != string(want) || string(b[0].Val) != string(want) {
		t.Errorf("split %s, whole %s, want %s", rowText(a[0].Val), rowText(b[0].Val), rowText(want))
	}
}

func mustArray(t row.Type, elems ...row.Datum) row.Datum {
	d, err := row.Array(t, elems)
	if err != nil {
		panic(err)
	}
	return d
}

func intArray(xs ...int64) row.Datum {
	elems := make([]row.Datum, len(xs))
	for i, x := range xs {
		elems[i] = row.Int64(x)
	}
	return mustArray(row.TypeInt64Array, elems...)
}

func jsonArray(s string) row.Datum {
	j, err := row.ParseJSON(s)
	if err != nil {
		panic(err)
	}
	return row.JSONB(j)
}

// scaledNum is the numeric v at display scale s.
func scaledNum(v string, s int) row.Datum {
	d, err := row.MustNumeric(v).WithNumericScale(s)
	if err != nil {
		panic(err)
	}
	return d
}

// TestGroupsShowLargestScale: a group of numerics equal in value shows
// the largest scale among its rows with a positive multiplicity: the key
// of DISTINCT, EXCEPT ALL (Threshold) and GROUP BY
// (AggregateLogicShowingKey), and min and max over ties.
func TestGroupsShowLargestScale(t *testing.T) {
	at := func(s int) row.Datum {
		d, err := row.MustNumeric("1.5").WithNumericScale(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	key := pack(at(1))
	shown := func(out []ValDiff) string {
		if len(out) != 1 {
			return "no row"
		}
		ds, err := row.Row(out[0].Val).Unpack()
		if err != nil {
			t.Fatal(err)
		}
		texts := make([]string, len(ds))
		for i, d := range ds {
			texts[i] = d.String()
		}
		return "(" + strings.Join(texts, ", ") + ")"
	}
	// Values: empty (the row is the key) or the row as written.
	rows := []ValDiff{{nil, 1}, {pack(at(2)), 1}, {pack(at(3)), 1}}
	for _, tc := range []struct {
		name  string
		input []ValDiff
		want  string
	}{
		{"all", rows, "(1.500)"},
		{"largest retracted", []ValDiff{rows[0], rows[1], {pack(at(3)), -1}}, "(1.50)"},
		{"only the key", rows[:1], "(1.5)"},
	} {
		out, _ := ThresholdLogic()(key, tc.input)
		if got := shown(out); got != tc.want {
			t.Errorf("threshold %s: %s, want %s", tc.name, got, tc.want)
		}
		if tc.name == "largest retracted" {
			continue // negative: DISTINCT fails, as it must
		}
		out, err := DistinctLogic()(key, tc.input)
		if got := shown(out); err != nil || got != tc.want {
			t.Errorf("distinct %s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
	// GROUP BY: values are (argument ++ key as written when it lost a
	// scale); min and max of the argument over ties also take the
	// largest scale.
	aggs := []Aggregate{{Func: AggCountStar}, {Func: AggMin, Column: 0}, {Func: AggMax, Column: 0}}
	out, err := AggregateLogicShowingKey(aggs, 1)(key, []ValDiff{
		{pack(at(1)), 1}, {pack(at(2)), 1}, {pack(at(2), at(3)), 1}, {pack(at(3), at(2)), 1},
	})
	if got := shown(out); err != nil || got != "(1.500, 4, 1.500, 1.500)" {
		t.Errorf("group by: %s, %v", got, err)
	}
	// The resumable evaluation (one value per step) agrees: it folds
	// min and max with the same tie rule, and a group whose values carry
	// the key as written is evaluated whole.
	for _, tc := range []struct {
		name  string
		input []ValDiff
		want  string
	}{
		{"folded", []ValDiff{{pack(at(1)), 1}, {pack(at(3)), 1}, {pack(at(2)), 1}}, "(1.5, 3, 1.500, 1.500)"},
		{"key as written", []ValDiff{{pack(at(1)), 1}, {pack(at(2), at(3)), 1}}, "(1.500, 2, 1.50, 1.50)"},
	} {
		eval := AggregateEvalShowingKey(aggs, 1)
		eval.Start(key, tc.input)
		for done := false; !done; {
			_, done = eval.Step(1)
		}
		out, err := eval.Result()
		if got := shown(out); err != nil || got != tc.want {
			t.Errorf("resumable group by %s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}
