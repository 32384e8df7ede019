package operators

import (
	"math"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestReduceGroupsSteps(t *testing.T) {
	k := func(s string) row.Row { return pack(row.Text(s)) }
	v := func(n int64) row.Row { return pack(i64(n)) }
	countSum := AggregateLogic([]Aggregate{{Func: AggCountStar}, {Func: AggSum}})
	tests := []struct {
		name       string
		logic      GroupLogic
		old, fresh []kv
		wantRows   []string
		wantErrs   []string
	}{
		{
			name:  "count and sum per time",
			logic: countSum,
			old:   []kv{{k("a"), v(1), 1, 1}, {k("a"), v(2), 3, 1}, {k("z"), v(1), 2, 1}},
			fresh: []kv{
				{k("a"), v(4), 5, 1}, {k("a"), v(1), 7, -1},
				{k("b"), v(10), 7, 1},
				{k("c"), v(1), 6, 1}, {k("c"), v(1), 8, -1},
			},
			wantRows: []string{
				"(a, 2, 3)@5:-1", "(a, 3, 7)@5:+1", "(a, 3, 7)@7:-1", "(a, 2, 6)@7:+1",
				"(b, 1, 10)@7:+1", "(c, 1, 1)@6:+1", "(c, 1, 1)@8:-1",
			},
		},
		{
			name:     "changes that cancel within a time emit nothing",
			logic:    countSum,
			old:      []kv{{k("a"), v(1), 1, 1}},
			fresh:    []kv{{k("a"), v(2), 5, 1}, {k("a"), v(2), 5, -1}, {k("a"), v(3), 6, 1}, {k("a"), v(3), 6, -1}},
			wantRows: nil,
		},
		{
			name:     "overflow error appears and is retracted",
			logic:    AggregateLogic([]Aggregate{{Func: AggSum}}),
			old:      []kv{{k("a"), v(math.MaxInt64), 1, 1}},
			fresh:    []kv{{k("a"), v(math.MaxInt64), 5, 1}, {k("a"), v(math.MaxInt64), 6, -1}},
			wantRows: []string{"(a, 9223372036854775807)@5:-1", "(a, 9223372036854775807)@6:+1"},
			wantErrs: []string{"bigint out of range in sum (SQLSTATE 22003)@5:+1", "bigint out of range in sum (SQLSTATE 22003)@6:-1"},
		},
		{
			name:     "distinct",
			logic:    DistinctLogic(),
			old:      []kv{{k("a"), nil, 1, 2}},
			fresh:    []kv{{k("a"), nil, 5, -2}, {k("b"), nil, 5, 1}, {k("b"), nil, 6, 4}, {k("a"), nil, 7, 1}},
			wantRows: []string{"(a)@5:-1", "(b)@5:+1", "(a)@7:+1"},
		},
		{
			name:     "distinct negative is an error",
			logic:    DistinctLogic(),
			fresh:    []kv{{k("a"), nil, 5, -1}, {k("a"), nil, 6, 1}},
			wantErrs: []string{"distinct: negative multiplicity in input (SQLSTATE XX000)@5:+1", "distinct: negative multiplicity in input (SQLSTATE XX000)@6:-1"},
		},
		{
			name:     "threshold",
			logic:    ThresholdLogic(),
			old:      []kv{{k("a"), nil, 1, -1}},
			fresh:    []kv{{k("a"), nil, 5, 3}, {k("a"), nil, 6, -1}},
			wantRows: []string{"(a)@5:+2", "(a)@6:-1"},
		},
		{
			name:     "topk 1 per group",
			logic:    TopKLogic(TopKSpec{Order: []row.ColumnOrder{{Column: 0, NullsLast: true}}, Limit: 1}),
			old:      []kv{{k("g"), v(5), 1, 1}},
			fresh:    []kv{{k("g"), v(3), 5, 1}, {k("g"), v(3), 6, -1}, {k("g"), v(9), 6, 1}},
			wantRows: []string{"(5)@5:-1", "(3)@5:+1", "(3)@6:-1", "(5)@6:+1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCollector()
			old := []*batch.Batch{mkBatch(t, 0, 5, tt.old...)}
			fresh := []*batch.Batch{mkBatch(t, 5, 10, tt.fresh...)}
			ReduceGroups(old, fresh, tt.logic, c.emit, c.emitErr)
			checkLines(t, "rows", c.rows, tt.wantRows)
			checkLines(t, "errors", c.errs, tt.wantErrs)
		})
	}
}

func TestJoinSteps(t *testing.T) {
	k := func(n int64) row.Row { return pack(i64(n)) }
	l := func(s string) row.Row { return pack(row.Text(s)) }
	in := JoinInput{
		LeftOld:    []*batch.Batch{mkBatch(t, 0, 3, kv{k(1), l("a"), 1, 1}, kv{k(2), l("b"), 2, 1}), mkBatch(t, 3, 5, kv{k(1), l("a2"), 4, 2})},
		LeftFresh:  []*batch.Batch{mkBatch(t, 5, 10, kv{k(1), l("c"), 6, 1}, kv{k(3), l("d"), 7, 1}, kv{k(2), l("b"), 8, -1})},
		RightOld:   []*batch.Batch{mkBatch(t, 0, 5, kv{k(1), l("x"), 1, 1}, kv{k(2), l("y"), 3, 1}, kv{k(2), l("old"), 1, 1}, kv{k(2), l("old"), 4, -1})},
		RightFresh: []*batch.Batch{mkBatch(t, 5, 10, kv{k(1), l("z"), 5, 1}, kv{k(1), l("w"), 9, -1}, kv{k(3), l("e"), 6, 3})},
	}
	c := newCollector()
	Join(in, c.emit)
	checkLines(t, "rows", c.rows, []string{
		// ΔL ⋈ R(old)
		"(c, x)@6:+1", "(b, y)@8:-1",
		// L(old) ⋈ ΔR
		"(a, z)@5:+1", "(a2, z)@5:+2", "(a, w)@9:-1", "(a2, w)@9:-2",
		// ΔL ⋈ ΔR at the later time
		"(c, z)@6:+1", "(c, w)@9:-1", "(d, e)@7:+3",
	})
}

// TestJoinWalksTheSmallerSide: a one-shot join of a large and a small
// arrangement (all fresh, nothing old) walks the small side's keys and seeks
// in the large one, at 1,000 and at 10,000 large keys alike; a small change
// against a large old side walks the change.
func TestJoinWalksTheSmallerSide(t *testing.T) {
	side := func(n, step int64, tag string) *batch.Batch {
		var ups []kv
		for k := int64(0); k < n; k += step {
			ups = append(ups, kv{pack(i64(k)), pack(row.Text(tag), i64(k)), 1, 1})
		}
		return mkBatch(t, 0, 5, ups...)
	}
	for _, n := range []int64{1000, 10000} {
		for _, tt := range []struct {
			name      string
			in        JoinInput
			walk, out int64
		}{
			{"large fresh left, small fresh right", JoinInput{LeftFresh: []*batch.Batch{side(n, 1, "l")}, RightFresh: []*batch.Batch{side(n, 10, "r")}}, n / 10, n / 10},
			{"small fresh left, large fresh right", JoinInput{LeftFresh: []*batch.Batch{side(n, 10, "l")}, RightFresh: []*batch.Batch{side(n, 1, "r")}}, n / 10, n / 10},
			{"one new row against a large old side", JoinInput{LeftOld: []*batch.Batch{side(n, 1, "l")}, RightFresh: []*batch.Batch{side(1, 1, "r")}}, 1, 1},
			{"large change against one old row", JoinInput{LeftFresh: []*batch.Batch{side(n, 1, "l")}, RightOld: []*batch.Batch{side(1, 1, "r")}}, 1, 1},
		} {
			c := newCollector()
			if _, walked := joinBounded(tt.in, c.emit, 0, &Progress{}); int64(walked) != tt.walk {
				t.Errorf("%s, n=%d: walked %d keys, want %d", tt.name, n, walked, tt.walk)
			}
			if len(c.rows) != int(tt.out) {
				t.Errorf("%s, n=%d: %d output rows, want %d", tt.name, n, len(c.rows), tt.out)
			}
		}
	}
}

// TestJoinMissingSides checks that empty or absent batch lists are fine.
func TestJoinMissingSides(t *testing.T) {
	c := newCollector()
	Join(JoinInput{LeftFresh: []*batch.Batch{mkBatch(t, 0, 5, kv{pack(i64(1)), pack(i64(1)), 1, 1})}, RightOld: []*batch.Batch{nil}}, c.emit)
	ReduceGroups(nil, nil, DistinctLogic(), c.emit, c.emitErr)
	checkLines(t, "rows", c.rows, nil)
}
