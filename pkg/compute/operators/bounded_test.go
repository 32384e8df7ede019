package operators

import (
	"maps"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestBoundedStepsEmitInSlices: a join's and a reduction's step run with a
// limit of L emitted updates per call takes at least output/L calls, no
// call emits more than L plus one key's output, and together the calls
// emit exactly what one unbounded call emits (the second join pass,
// (L(old)+ΔL) ⋈ ΔR, included). Limit 0 is one call.
func TestBoundedStepsEmitInSlices(t *testing.T) {
	const keys, limit = 3000, 100
	var lOld, lFresh, rOld, rFresh, gOld, gFresh []kv
	for i := range keys {
		k := pack(i64(int64(i)))
		lOld = append(lOld, kv{k, pack(row.Text("lo")), 1, 1})
		rOld = append(rOld, kv{k, pack(row.Text("ro")), 1, 1})
		lFresh = append(lFresh, kv{k, pack(row.Text("lf")), 5, 1})
		if i%2 == 0 {
			rFresh = append(rFresh, kv{k, pack(row.Text("rf")), 6, 1})
		}
		gOld = append(gOld, kv{k, pack(i64(1)), 1, 1})
		gFresh = append(gFresh, kv{k, pack(i64(2)), 5, 1}, kv{k, pack(i64(3)), 6, 1})
	}
	in := JoinInput{
		LeftOld: []*batch.Batch{mkBatch(t, 0, 5, lOld...)}, LeftFresh: []*batch.Batch{mkBatch(t, 5, 10, lFresh...)},
		RightOld: []*batch.Batch{mkBatch(t, 0, 5, rOld...)}, RightFresh: []*batch.Batch{mkBatch(t, 5, 10, rFresh...)},
	}
	old, fresh := []*batch.Batch{mkBatch(t, 0, 5, gOld...)}, []*batch.Batch{mkBatch(t, 5, 10, gFresh...)}
	sum := AggregateLogic([]Aggregate{{Func: AggSum}})
	tests := []struct {
		name    string
		perKey  int // most updates one key emits
		step    func(c *collector, limit int, p *Progress) bool
		wantOut int
	}{
		{"join", 3, func(c *collector, limit int, p *Progress) bool {
			return JoinBounded(in, c.emit, limit, p)
		}, keys + keys/2*2},
		{"reduce", 4, func(c *collector, limit int, p *Progress) bool {
			return ReduceGroupsBounded(old, fresh, sum, c.emit, c.emitErr, limit, p)
		}, 4 * keys},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			whole := newCollector()
			if !tc.step(whole, 0, &Progress{}) {
				t.Fatal("an unbounded step did not complete in one call")
			}
			sliced := newCollector()
			var p Progress
			calls := 0
			for done := false; !done; calls++ {
				c := newCollector()
				done = tc.step(c, limit, &p)
				if n := c.count; n > limit+tc.perKey {
					t.Fatalf("call %d emitted %d updates, limit %d (+%d for one key)", calls, n, limit, tc.perKey)
				}
				for k, d := range c.rows {
					sliced.rows[k] += d
				}
				for k, d := range c.errs {
					sliced.errs[k] += d
				}
				if calls > 10*tc.wantOut/limit {
					t.Fatal("the bounded step never completed")
				}
			}
			maps.DeleteFunc(sliced.rows, func(_ string, d int64) bool { return d == 0 })
			maps.DeleteFunc(sliced.errs, func(_ string, d int64) bool { return d == 0 })
			if calls < tc.wantOut/(limit+tc.perKey) {
				t.Errorf("%d calls for %d updates with limit %d: the step was not sliced", calls, tc.wantOut, limit)
			}
			if !maps.Equal(sliced.rows, whole.rows) || !maps.Equal(sliced.errs, whole.errs) {
				t.Errorf("sliced output (%d rows) differs from the unbounded output (%d rows)", len(sliced.rows), len(whole.rows))
			}
		})
	}
}

// runSliced drives a bounded step with limit to completion and returns
// what all the calls emitted together, how many calls it took and the
// most updates one call emitted.
func runSliced(t *testing.T, limit int, step func(c *collector, limit int, p *Progress) bool) (out *collector, calls, most int) {
	t.Helper()
	out = newCollector()
	var p Progress
	for done := false; !done; calls++ {
		if calls > 1_000_000 {
			t.Fatal("the bounded step never completed")
		}
		c := newCollector()
		done = step(c, limit, &p)
		most = max(most, c.count)
		for k, d := range c.rows {
			out.rows[k] += d
		}
	}
	maps.DeleteFunc(out.rows, func(_ string, d int64) bool { return d == 0 })
	return out, calls, most
}

// TestJoinBoundedSplitsOneKey: a skewed key whose pairs (200 x 200) far
// exceed the limit is split between pairs: no call emits more than the
// limit, and the calls together emit exactly the unbounded output.
func TestJoinBoundedSplitsOneKey(t *testing.T) {
	const side, limit = 200, 1000
	k := pack(i64(7))
	var lFresh, rOld []kv
	for i := range side {
		lFresh = append(lFresh, kv{k, pack(row.Text("l"), i64(int64(i))), 5, 1})
		rOld = append(rOld, kv{k, pack(row.Text("r"), i64(int64(i))), 1, 1})
	}
	in := JoinInput{
		LeftFresh: []*batch.Batch{mkBatch(t, 5, 10, lFresh...)},
		RightOld:  []*batch.Batch{mkBatch(t, 0, 5, rOld...)},
	}
	step := func(c *collector, limit int, p *Progress) bool { return JoinBounded(in, c.emit, limit, p) }
	whole := newCollector()
	if !step(whole, 0, &Progress{}) || whole.count != side*side {
		t.Fatalf("unbounded: %d pairs, want %d in one call", whole.count, side*side)
	}
	got, calls, most := runSliced(t, limit, step)
	if most > limit {
		t.Errorf("a call emitted %d pairs of one key, limit %d", most, limit)
	}
	if calls < side*side/limit {
		t.Errorf("%d calls for %d pairs with limit %d", calls, side*side, limit)
	}
	if !maps.Equal(got.rows, whole.rows) {
		t.Errorf("sliced output (%d rows) differs from the unbounded output (%d rows)", len(got.rows), len(whole.rows))
	}
}

// TestBoundedWalkCountsKeys: a step that walks many keys and emits nothing
// (a join whose fresh keys match no old key) is bounded too: every key
// walked counts as work, so it takes at least keys/limit calls.
func TestBoundedWalkCountsKeys(t *testing.T) {
	const keys, limit = 20_000, 500
	var lFresh, rOld []kv
	for i := range keys {
		lFresh = append(lFresh, kv{pack(i64(int64(2 * i))), pack(row.Text("l")), 5, 1})
		rOld = append(rOld, kv{pack(i64(int64(2*i + 1))), pack(row.Text("r")), 1, 1})
	}
	in := JoinInput{
		LeftFresh: []*batch.Batch{mkBatch(t, 5, 10, lFresh...)},
		RightOld:  []*batch.Batch{mkBatch(t, 0, 5, rOld...)},
	}
	got, calls, _ := runSliced(t, limit, func(c *collector, limit int, p *Progress) bool {
		return JoinBounded(in, c.emit, limit, p)
	})
	if len(got.rows) != 0 {
		t.Fatalf("%d rows from disjoint keys", len(got.rows))
	}
	if calls < keys/limit {
		t.Errorf("walking %d keys that emit nothing took %d calls, limit %d: want at least %d", keys, calls, limit, keys/limit)
	}
}
