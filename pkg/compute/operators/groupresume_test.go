package operators

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// resumableCases are group evaluations checked against their logic: sets of
// aggregates that fold (integers, an in-order string_agg), sets that fall
// back to the whole logic per group (a float sum, DISTINCT, an ORDER BY
// against the values' order, an overflow) and logics that never split.
func resumableCases() []struct {
	name   string
	vals   bool
	logic  func() GroupLogic
	eval   func() GroupEval
	retype func(kv) kv
} {
	intAggs := []Aggregate{
		{Func: AggCountStar}, {Func: AggCount, Column: 1}, {Func: AggSum}, {Func: AggMin, Column: 1},
		{Func: AggMax}, {Func: AggAvg, Column: 1},
	}
	textAggs := []Aggregate{{Func: AggStringAgg, Column: 0, Sep: 2}, {Func: AggCount, Column: 0}, {Func: AggMax, Column: 0}}
	orderedText := []Aggregate{{Func: AggStringAgg, Column: 0, Sep: 2, Order: []row.ColumnOrder{{Column: 1, Desc: true}}}}
	distinctText := []Aggregate{{Func: AggStringAgg, Column: 0, Sep: 2, Distinct: true}, {Func: AggMin, Column: 1}}
	floats := []Aggregate{{Func: AggSum, Column: 1}, {Func: AggMin, Column: 1}}
	withDistinct := []Aggregate{{Func: AggCount, Column: 0, Distinct: true}, {Func: AggSum, Column: 1}}
	aggs := func(as []Aggregate) (func() GroupLogic, func() GroupEval) {
		return func() GroupLogic { return AggregateLogic(as) }, func() GroupEval { return AggregateEval(as) }
	}
	whole := func(l func() GroupLogic) func() GroupEval { return func() GroupEval { return WholeGroup(l()) } }
	type c = struct {
		name   string
		vals   bool
		logic  func() GroupLogic
		eval   func() GroupEval
		retype func(kv) kv
	}
	var out []c
	for _, a := range []struct {
		name   string
		aggs   []Aggregate
		retype func(kv) kv
	}{
		{"integer aggregates", intAggs, nil},
		{"integer overflow", intAggs, hugeVals},
		{"string_agg in order", textAggs, textFloatVals},
		{"string_agg ordered by another column", orderedText, textFloatVals},
		{"distinct string_agg", distinctText, textFloatVals},
		{"float sum", floats, textFloatVals},
		{"count distinct", withDistinct, nil},
	} {
		l, e := aggs(a.aggs)
		out = append(out, c{a.name, true, l, e, a.retype})
	}
	topk := func() GroupLogic {
		return TopKLogic(TopKSpec{Order: []row.ColumnOrder{{Column: 1, Desc: true, NullsLast: true}}, Limit: 2, Offset: 1})
	}
	out = append(out, c{"distinct", false, DistinctLogic, whole(DistinctLogic), nil},
		c{"topk", true, topk, whole(topk), nil})
	return out
}

// hugeVals scales the first column so that sums overflow an int64.
func hugeVals(u kv) kv {
	ds, err := row.Row(u.val).Unpack()
	if err != nil {
		panic(err)
	}
	if !ds[0].IsNull() {
		ds[0] = row.Int64(ds[0].Int64() * (math.MaxInt64 / 5))
	}
	u.val = pack(ds...)
	return u
}

// TestReduceGroupsResumableMatchesWhole: for random histories cut into
// random batches (old batches randomly compacted), each step run by
// ReduceGroupsResumable with a random small limit, resumed call after call
// until done, emits exactly what ReduceGroups emits for that step, update
// by update and time by time, errors included (ReduceGroups is itself
// checked against recomputation from scratch in
// TestReduceGroupsMatchesRecomputation).
func TestReduceGroupsResumableMatchesWhole(t *testing.T) {
	for _, tc := range resumableCases() {
		t.Run(tc.name, rapid.MakeCheck(func(t *rapid.T) {
			upds := genRetyped(t, "in", tc.vals, tc.retype)
			cuts := genCuts(t)
			bs := batchesAt(t, cuts, upds)
			limit := rapid.IntRange(1, 8).Draw(t, "limit")
			logic, eval := tc.logic(), tc.eval()
			for i := range bs {
				old := compacted(t, bs[:i], cuts[i])
				want := newCollector()
				ReduceGroups(old, bs[i:i+1], logic, want.emit, want.emitErr)
				got := newCollector()
				var p Progress
				for calls := 0; !ReduceGroupsResumable(old, bs[i:i+1], eval, got.emit, got.emitErr, limit, &p); calls++ {
					if calls > 10_000 {
						t.Fatal("the resumable step never completed")
					}
				}
				if !maps.Equal(got.rows, want.rows) || !maps.Equal(got.errs, want.errs) {
					t.Fatalf("step %d, limit %d:\n got  %v %v\n want %v %v", i, limit, lines(got.rows), lines(got.errs), lines(want.rows), lines(want.errs))
				}
			}
		}))
	}
}

// oneGroup builds one key's history: n distinct values at times 0 and 1
// (old, two batches whose values interleave) and
// a change of a few values at time 5 (fresh), as (old, fresh) batches.
func oneGroup(t *testing.T, n int, val func(i int) row.Row) (old, fresh []*batch.Batch) {
	k := pack(i64(1))
	var o, f []kv
	for i := range n {
		o = append(o, kv{k, val(i), frontier.Time(i % 2), 1})
	}
	for i := range 3 {
		f = append(f, kv{k, val(n + i), 5, 1}, kv{k, val(i * 7), 5, -1})
	}
	var even, odd []kv
	for _, u := range o {
		if u.t == 0 {
			even = append(even, u)
		} else {
			odd = append(odd, u)
		}
	}
	return []*batch.Batch{mkBatch(t, 0, 1, even...), mkBatch(t, 1, 2, odd...)}, []*batch.Batch{mkBatch(t, 5, 10, f...)}
}

// TestResumableGroupWorkPerCall: one group of 40,000 values whose min, max,
// sum and string_agg change at one time is reduced in calls of bounded
// work: counting what each call does (values gathered and merged, values
// folded, updates emitted), no call does more than the limit plus one
// value's updates, the group takes at least (gathered + merged + folded) /
// limit calls, nothing is emitted before the group's evaluation at the
// time is complete, and the output is the whole reduction's. With limit 0
// it is one call.
func TestResumableGroupWorkPerCall(t *testing.T) {
	const n, limit = 40_000, 1_000
	aggs := []Aggregate{{Func: AggMin, Column: 0}, {Func: AggMax, Column: 0}, {Func: AggSum, Column: 0},
		{Func: AggStringAgg, Column: 1, Sep: 2}}
	// Values sorted by (v, text, sep): the text follows v's order, so the
	// string_agg folds.
	val := func(i int) row.Row {
		return pack(i64(int64(i)), row.Text(padInt(i)+strings.Repeat("x", i%3)), row.Text(","))
	}
	old, fresh := oneGroup(t, n, val)
	want := newCollector()
	ReduceGroups(old, fresh, AggregateLogic(aggs), want.emit, want.emitErr)
	if want.count != 2 {
		t.Fatalf("whole reduction emitted %d updates, want a retraction and an insertion", want.count)
	}

	eval := &countingEval{GroupEval: AggregateEval(aggs)}
	got := newCollector()
	var p Progress
	calls := 0
	for done := false; !done; calls++ {
		before := got.count
		var work int
		done, work = reduceGroupsResumable(old, fresh, eval, got.emit, got.emitErr, limit, &p)
		if work > limit+1 {
			t.Fatalf("call %d did %d units of work, limit %d", calls, work, limit)
		}
		if got.count > before && !done {
			t.Fatalf("call %d emitted %d updates before the group was complete", calls, got.count-before)
		}
		if calls > n {
			t.Fatal("never completed")
		}
	}
	// Gathered n old values and 6 fresh ones, merged n+6 into the new
	// state, folded n (old state) and n (new state): about 4n units.
	if min := 4 * n / limit; calls < min {
		t.Errorf("%d calls for one group of %d values with limit %d: want at least %d", calls, n, limit, min)
	}
	if !maps.Equal(got.rows, want.rows) || !maps.Equal(got.errs, want.errs) {
		t.Errorf("resumable output %v differs from the whole reduction's %v", lines(got.rows), lines(want.rows))
	}
	if eval.starts != 2 {
		t.Errorf("the group was evaluated %d times, want 2 (old state, new state)", eval.starts)
	}
	whole := newCollector()
	if !ReduceGroupsResumable(old, fresh, AggregateEval(aggs), whole.emit, whole.emitErr, 0, &Progress{}) {
		t.Error("limit 0 did not complete in one call")
	}
	if !maps.Equal(whole.rows, want.rows) {
		t.Errorf("limit 0 output %v differs from the whole reduction's %v", lines(whole.rows), lines(want.rows))
	}
}

// TestResumableGroupGatherIsBounded: the gathering and merging phases of
// one group are bounded on their own: a group whose evaluation cannot be
// split (a top-k, evaluated whole in one call) still spreads reading its
// 40,000 old values and merging the change over at least 2n/limit calls,
// and each call that does not evaluate it stays within the limit.
func TestResumableGroupGatherIsBounded(t *testing.T) {
	const n, limit = 40_000, 1_000
	old, fresh := oneGroup(t, n, func(i int) row.Row { return pack(i64(int64(i)), row.Text("r")) })
	spec := TopKSpec{Order: []row.ColumnOrder{{Column: 0}}, Limit: 3}
	want := newCollector()
	ReduceGroups(old, fresh, TopKLogic(spec), want.emit, want.emitErr)
	eval := &countingEval{GroupEval: WholeGroup(TopKLogic(spec))}
	got := newCollector()
	var p Progress
	calls, wholeCalls := 0, 0
	for done := false; !done; calls++ {
		eval.work = 0
		var work int
		done, work = reduceGroupsResumable(old, fresh, eval, got.emit, got.emitErr, limit, &p)
		if eval.work > 0 {
			wholeCalls++
		} else if work > limit+1 {
			t.Fatalf("call %d gathered or merged %d units, limit %d", calls, work, limit)
		}
	}
	if min := 2 * n / limit; calls < min {
		t.Errorf("%d calls to gather and merge a group of %d values with limit %d: want at least %d", calls, n, limit, min)
	}
	if wholeCalls != 2 {
		t.Errorf("%d calls evaluated the top-k, want 2 (old state, new state)", wholeCalls)
	}
	if !maps.Equal(got.rows, want.rows) {
		t.Errorf("resumable output %v differs from the whole reduction's %v", lines(got.rows), lines(want.rows))
	}
}

// countingEval counts the work its evaluation's Steps report.
type countingEval struct {
	GroupEval
	work, starts int
}

func (c *countingEval) Start(key []byte, input []ValDiff) {
	c.starts++
	c.GroupEval.Start(key, input)
}

func (c *countingEval) Step(budget int) (int, bool) {
	n, done := c.GroupEval.Step(budget)
	c.work += n
	return n, done
}

func padInt(i int) string { return fmt.Sprintf("%08d", i) }
