package render

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestOneShotReductionEmitsOnFuel: a one-shot read's reduction over an
// index (the snapshot path: cursors, then an arrangement and the group
// step) emits its output in slices of the arrangement fuel per schedule,
// like a maintained reduction, and gives the same answer; with the bound
// off (fuel 0) one schedule emits every group.
func TestOneShotReductionEmitsOnFuel(t *testing.T) {
	const n, fuel = 6_000, 500
	tbl := NewMemoryTable()
	appendRows(t, tbl, 0, n, 1, 2)
	fx := newIndexFixture(t, 1, tbl)
	fx.waitUpper(1)
	// One group per row: GROUP BY the key column, count(*).
	red := plan.NewReduce(plan.NewGet(fixSrc), []expr.Expr{expr.Column(0)}, plan.Aggregate{Func: plan.AggCountStar})
	var want string
	for _, tc := range []struct{ fuel int }{{0}, {fuel}} {
		t.Run(fmt.Sprintf("fuel=%d", tc.fuel), func(t *testing.T) {
			var (
				mu   sync.Mutex
				most int
			)
			var counters ImportCounters
			rd := fx.install(red, readerOpts{asOf: 1, class: plan.ClassOneShotRead, counters: &counters,
				fuel: func() int { return tc.fuel },
				onSchedule: func(name string, emitted int) {
					if strings.HasPrefix(name, "reduce") {
						mu.Lock()
						most = max(most, emitted)
						mu.Unlock()
					}
				}})
			got := rd.result()
			rd.drop()
			if counters.Cursor.Load() == 0 {
				t.Fatal("the read did not take the snapshot path (no cursor import)")
			}
			if strings.Count(got, ";")+1 != n {
				t.Fatalf("%d groups, want %d", strings.Count(got, ";")+1, n)
			}
			if want == "" {
				want = got
			} else if got != want {
				t.Fatal("the bounded reduction's answer differs from the unbounded one's")
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case tc.fuel > 0 && most > fuel+1:
				t.Errorf("one schedule of the reduction emitted %d updates, fuel %d", most, fuel)
			case tc.fuel == 0 && most < n:
				t.Errorf("unbounded: the most one schedule emitted was %d, want every group (%d)", most, n)
			}
		})
	}
}

// TestIncrementalFixpointYieldsBetweenTimes: an incremental recursion's
// step over many times (a path growing by one edge a time) run with a
// limit yields between times, each call doing about the limit of work
// (changes applied plus updates emitted) and one time's beyond it, and
// the calls together emit exactly the unbounded step's output.
func TestIncrementalFixpointYieldsBetweenTimes(t *testing.T) {
	const times, limit = 200, 10
	var sh incShape
	for _, s := range incShapes(1 << 30) {
		if s.name == "reach" {
			sh = s
		}
	}
	var b batch.Builder
	key := row.Pack()
	tagged := func(input int, v []byte) []byte { return append(append([]byte(nil), FixpointTag(input)...), v...) }
	b.Push(key, tagged(0, sh.constRows[0]), 1, 1)
	for i := 1; i <= times; i++ {
		b.Push(key, tagged(1, ints(int64(i-1), int64(i))), frontier.Time(i), 1)
	}
	bt, err := b.Build(batch.Description{Lower: frontier.At(0), Upper: frontier.At(times + 1), Since: frontier.Minimum()})
	if err != nil {
		t.Fatal(err)
	}
	fresh := [][]*batch.Batch{{bt}}
	run := func(limit int) (out map[string]int64, calls, most int) {
		fp, err := CompileRecursive(sh.p.Recursive)
		if err != nil {
			t.Fatal(err)
		}
		step := IncrementalFixpointStep(fp)
		out = map[string]int64{}
		var pos int
		for more := true; more; calls++ {
			if calls > 10*times {
				t.Fatal("the step never completed")
			}
			e := &emitter{limit: limit, pos: &pos}
			step(nil, fresh, e)
			more = e.more
			most = max(most, len(e.ok)+len(e.err))
			for _, u := range append(e.ok, e.err...) {
				out[fmt.Sprintf("%x@%d", u.Val, u.Time)] += u.Diff
			}
		}
		return out, calls, most
	}
	whole, wholeCalls, _ := run(0)
	if wholeCalls != 1 || len(whole) < times {
		t.Fatalf("unbounded: %d calls, %d output updates, want one call and at least %d", wholeCalls, len(whole), times)
	}
	sliced, calls, most := run(limit)
	if !maps.Equal(sliced, whole) {
		t.Fatalf("sliced output (%d updates) differs from the unbounded output (%d)", len(sliced), len(whole))
	}
	// Each time is one change and one output update: two units of work.
	if calls < 2*times/(limit+2) || most > limit {
		t.Fatalf("%d calls, at most %d updates a call, for %d times with limit %d", calls, most, times, limit)
	}
}

// TestRederivationYieldsBetweenRounds: a deep UNION ALL recursion (n + 1
// while n < 3,000: 3,000 rounds of one row each) re-derived by the
// fixpoint operator's step under a limit yields between rounds: each
// schedule does about the limit's worth of rounds, the output is emitted
// only once the fixed point is complete (in slices of at most the limit:
// once a step's schedules start emitting, each emits until the step is
// done), the steps take at least their rounds' work over the limit in
// schedules, and the output, at two times (the base gains a row at the
// second), is exactly the unbounded step's. With the limit off one
// schedule does each step.
func TestRederivationYieldsBetweenRounds(t *testing.T) {
	const depth, limit = 3_000, 100
	l := plan.Local(1)
	col, lit := expr.Column, func(n int64) expr.Expr { return expr.Literal(row.Int64(n)) }
	one := plan.NewConstant(row.RelationDesc{Names: []string{"n"}, Types: []row.ColumnType{{Type: row.TypeInt64}}},
		plan.ConstantRow{Datums: []row.Datum{row.Int64(1)}, Diff: 1})
	count := plan.NewMfp(plan.NewGet(l), expr.MFP{Expressions: []expr.Expr{expr.Add(col(0), lit(1))},
		Predicates: []expr.Expr{expr.Lt(col(0), lit(depth))}, Projection: []int{1}})
	rec := plan.NewRecursive(l, "t", one, count, false, 1<<20).Recursive
	if rec.Incremental() {
		t.Fatal("a UNION ALL recursion is re-derived, not incremental")
	}
	key := row.Pack()
	base := func(lower, upper frontier.Time, n int64) []*batch.Batch {
		var b batch.Builder
		b.Push(key, append(append([]byte(nil), FixpointTag(0)...), ints(n)...), lower, 1)
		bt, err := b.Build(batch.Description{Lower: frontier.At(lower), Upper: frontier.At(upper), Since: frontier.Minimum()})
		if err != nil {
			t.Fatal(err)
		}
		return []*batch.Batch{bt}
	}
	steps := []struct{ old, fresh []*batch.Batch }{
		{nil, base(1, 2, 1)},
		{base(1, 2, 1), base(2, 3, depth/2)},
	}
	run := func(limit int) (out map[string]int64, schedules, most int) {
		fp, err := CompileRecursive(rec)
		if err != nil {
			t.Fatal(err)
		}
		step := RederiveStep(fp)
		out = map[string]int64{}
		for _, s := range steps {
			var p operators.Progress
			emitting := false
			for more := true; more; schedules++ {
				if schedules > 10*depth {
					t.Fatal("the step never completed")
				}
				e := &emitter{limit: limit, progress: &p}
				step([][]*batch.Batch{s.old}, [][]*batch.Batch{s.fresh}, e)
				more = e.more
				n := len(e.ok) + len(e.err)
				if emitting && n == 0 {
					t.Fatalf("schedule %d emitted nothing after earlier schedules of the step emitted: rounds ran after output", schedules)
				}
				emitting = emitting || n > 0
				most = max(most, n)
				for _, u := range append(e.ok, e.err...) {
					out[fmt.Sprintf("%x@%d", u.Val, u.Time)] += u.Diff
				}
			}
		}
		return out, schedules, most
	}
	whole, wholeSchedules, _ := run(0)
	if wholeSchedules != len(steps) || len(whole) != depth+depth/2+1 {
		t.Fatalf("unbounded: %d schedules, %d output updates, want %d schedules and %d updates", wholeSchedules, len(whole), len(steps), depth+depth/2+1)
	}
	sliced, schedules, most := run(limit)
	if !maps.Equal(sliced, whole) {
		t.Fatalf("sliced output (%d updates) differs from the unbounded output (%d)", len(sliced), len(whole))
	}
	if most > limit {
		t.Fatalf("a schedule emitted %d updates, limit %d", most, limit)
	}
	// Each round is at least roundUnits + 2 units (a row in, a row out):
	// the first step's 3,000 rounds and the second's 3,000 (its old state
	// is the cached result), less one round a schedule may run over.
	if want := (roundUnits + 2) * (depth + depth/2) / (limit + roundUnits + 4); schedules < want {
		t.Fatalf("%d schedules for %d rounds with limit %d: want at least %d", schedules, depth+depth/2, limit, want)
	}
}
