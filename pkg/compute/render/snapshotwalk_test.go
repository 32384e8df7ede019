package render

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// randomDatum returns a small value of a random type, often NULL, often an
// int64 (the type most literals below have), sometimes text or bytes
// holding 0x00 (escaped, so skipping them is not a fixed step).
func randomDatum(rng *rand.Rand) row.Datum {
	switch rng.IntN(9) {
	case 0:
		return row.Null()
	case 1:
		return row.Float64(float64(rng.IntN(7)) - 3)
	case 2:
		return row.Text(string([]byte{byte('a' + rng.IntN(3)), byte(rng.IntN(2))}))
	case 3:
		return row.Bytes([]byte{byte(rng.IntN(3)), 0, 0xff})
	case 4:
		return row.Date(int32(rng.IntN(5)))
	case 5:
		return row.Bool(rng.IntN(2) == 0)
	default:
		return row.Int64(rng.Int64N(7) - 3)
	}
}

// randomComparison is `#c op literal` or `literal op #c`, or (rarely) a
// predicate the encoded filter cannot decide.
func randomComparison(rng *rand.Rand, arity int) expr.Expr {
	lte := func(a, b expr.Expr) expr.Expr { return expr.Call(expr.FuncLte, a, b) }
	ops := []func(a, b expr.Expr) expr.Expr{expr.Eq, expr.Neq, expr.Lt, lte, expr.Gt, expr.Gte}
	op := ops[rng.IntN(len(ops))]
	col := expr.Column(rng.IntN(arity))
	lit := expr.Literal(randomDatum(rng))
	switch rng.IntN(6) {
	case 0:
		return op(lit, col)
	case 1:
		// 10 / #c fails on 0, and is no column-literal comparison.
		return op(expr.Div(expr.Literal(row.Int64(10)), col), lit)
	}
	return op(col, lit)
}

// randomIndexRows returns an index over n rows of the given arity, keyed
// by a row number, with random multiplicities at times 0 and 1.
func randomIndexRows(t *testing.T, rng *rand.Rand, n, arity int) []*batch.Batch {
	var b batch.Builder
	for i := range n {
		ds := make([]row.Datum, arity)
		ds[0] = row.Int64(int64(i))
		for j := 1; j < arity; j++ {
			ds[j] = randomDatum(rng)
		}
		b.Push(row.Pack(row.Int64(int64(i))), row.Pack(ds...), frontier.Time(rng.IntN(2)), 1+rng.Int64N(2))
	}
	bt, err := b.Build(batch.Description{Lower: frontier.At(0), Upper: frontier.At(2), Since: frontier.At(0)})
	if err != nil {
		t.Fatal(err)
	}
	return []*batch.Batch{bt}
}

// snapshotOutput is what a walked snapshot logic sends: its pairs with
// summed multiplicities, and its error rows.
func snapshotOutput(lg *snapshotKeyLogic) (pairs, errs map[string]int64) {
	if lg.folding {
		lg.emitFolds()
	}
	pairs = map[string]int64{}
	for _, e := range lg.entries {
		pairs[fmt.Sprintf("%x/%x", lg.arena[e.off:e.off+e.klen], lg.arena[e.off+e.klen:e.off+e.klen+e.vlen])] += e.diff
	}
	maps.DeleteFunc(pairs, func(_ string, d int64) bool { return d == 0 })
	return pairs, lg.errRows
}

// TestSnapshotReaderMatchesFullDecode: over random rows (every column a
// random type, NULLs, escaped text), random filters (comparisons the
// encoded filter decides, some it cannot, some that fail) and random
// reductions, the snapshot reader that reads rows only to their last used
// column and decides comparisons on encoded columns sends exactly what the
// reader that decodes every row to its end sends: the same pairs and the
// same errors.
func TestSnapshotReaderMatchesFullDecode(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 3))
		arity := 2 + rng.IntN(4)
		batches := randomIndexRows(t, rng, 1+rng.IntN(60), arity)
		var preds []expr.Expr
		for range rng.IntN(4) {
			preds = append(preds, randomComparison(rng, arity))
		}
		proj := make([]int, arity)
		for i := range proj {
			proj[i] = i
		}
		sh := snapshotWalkShape{spec: KeySpec{Key: []expr.Expr{}}}
		if len(preds) > 0 || rng.IntN(2) == 0 {
			sh.mfps = []*expr.MFP{{Predicates: preds, Projection: proj}}
		}
		if rng.IntN(2) == 0 {
			sh.spec.Key = []expr.Expr{expr.Column(rng.IntN(arity))}
		}
		funcs := []operators.AggFunc{operators.AggCountStar, operators.AggSum, operators.AggMin, operators.AggMax, operators.AggCount}
		for i := range 1 + rng.IntN(3) {
			f := funcs[rng.IntN(len(funcs))]
			sh.aggs = append(sh.aggs, operators.Aggregate{Func: f, Column: i})
			arg := expr.Column(rng.IntN(arity))
			if f == operators.AggCountStar {
				arg = expr.Literal(row.Null())
			}
			sh.spec.Val = append(sh.spec.Val, arg)
		}
		if rng.IntN(4) == 0 {
			sh.aggs = nil // pairs, not folds
		}
		wantPairs, wantErrs := snapshotOutput(walkSnapshot(batches, sh, true))
		gotPairs, gotErrs := snapshotOutput(walkSnapshot(batches, sh, false))
		if !maps.Equal(gotPairs, wantPairs) || !maps.Equal(gotErrs, wantErrs) {
			t.Fatalf("seed %d, filter %v, key %v, vals %v:\n new: %v %v\n old: %v %v",
				seed, preds, sh.spec.Key, sh.spec.Val, gotPairs, gotErrs, wantPairs, wantErrs)
		}
	}
}

func TestEncodedFilterDecidesLeadingComparisons(t *testing.T) {
	lt := func(c int, v int64) expr.Expr { return expr.Lt(expr.Column(c), expr.Literal(row.Int64(v))) }
	r := row.Pack(row.Int64(5), row.Null(), row.Text("x"), row.Int64(2))
	tests := []struct {
		name  string
		preds []expr.Expr
		exprs []expr.Expr
		want  filterVerdict
	}{
		{"false", []expr.Expr{lt(0, 5)}, nil, rejected},
		{"true", []expr.Expr{lt(0, 6)}, nil, accepted},
		{"true with an expression", []expr.Expr{lt(0, 6)}, []expr.Expr{expr.Column(0)}, undecided},
		{"mirrored", []expr.Expr{expr.Gt(expr.Literal(row.Int64(5)), expr.Column(3))}, nil, accepted},
		{"mirrored false", []expr.Expr{expr.Gt(expr.Literal(row.Int64(2)), expr.Column(3))}, nil, rejected},
		{"null", []expr.Expr{lt(1, 6)}, nil, rejected},
		{"other type", []expr.Expr{lt(2, 6)}, nil, undecided},
		{"second false", []expr.Expr{lt(0, 6), lt(3, 2)}, nil, rejected},
		// An earlier predicate the bytes cannot decide may fail: the
		// MFP must see the row.
		{"after undecided", []expr.Expr{lt(2, 6), lt(0, 5)}, nil, undecided},
		{"after non-comparison", []expr.Expr{expr.IsNull(expr.Column(1)), lt(0, 5)}, nil, undecided},
		{"before non-comparison", []expr.Expr{lt(0, 6), expr.IsNull(expr.Column(1))}, nil, undecided},
		{"expression column", []expr.Expr{lt(4, 0)}, nil, undecided},
	}
	for _, tc := range tests {
		f := newEncodedFilter(&expr.MFP{Predicates: tc.preds, Expressions: tc.exprs})
		if got := f.decide(r, 4); got != tc.want {
			t.Errorf("%s: decide = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSnapshotWalkAllocatesNothingPerRow: a filtered, folded walk over an
// index allocates the same whether it reads 2,048 rows or 8,192 (the
// values hold 0xF8 bytes, which once sent rows through a full decode).
func TestSnapshotWalkAllocatesNothingPerRow(t *testing.T) {
	for _, name := range []string{"filtered", "groupby"} {
		sh := adhocShapes()[name]
		small, large := keyValueIndex(t, 2048), keyValueIndex(t, 8192)
		a := testing.AllocsPerRun(5, func() { walkSnapshot(small, sh, false) })
		b := testing.AllocsPerRun(5, func() { walkSnapshot(large, sh, false) })
		if b > a+8 {
			t.Errorf("%s: %v allocations walking 2,048 rows, %v walking 8,192", name, a, b)
		}
	}
}
