package operators

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestWindowFrameBounds checks GROUPS and RANGE offset frames and EXCLUDE
// on one partition (values 1, 2, 2, 4 and NULL, one column, each row also
// its own ORDER BY value): count(*) over each row's frame, in the
// partition's order.
func TestWindowFrameBounds(t *testing.T) {
	bound := func(k FrameBoundKind, off int64) FrameBound { return FrameBound{Kind: k, Offset: off} }
	asc := row.ColumnOrder{Column: 0, NullsLast: true} // NULLS LAST
	desc := row.ColumnOrder{Column: 0, Desc: true}     // PostgreSQL's DESC default
	tests := []struct {
		name  string
		order row.ColumnOrder
		frame WindowFrame
		want  []int64 // count(*) per position
	}{
		{"range 1 preceding and 1 following", asc,
			WindowFrame{Start: bound(BoundPreceding, 1), End: bound(BoundFollowing, 1)},
			// 1: {1,2,2}; 2: {1,2,2}; 2; 4: {4}; NULL: {NULL}
			[]int64{3, 3, 3, 1, 1}},
		{"range 2 following to unbounded", asc,
			WindowFrame{Start: bound(BoundFollowing, 2), End: bound(BoundUnboundedFollowing, 0)},
			// 1: {4, NULL}... values >= 3 and NULLs after them
			[]int64{2, 2, 2, 1, 1}},
		{"range unbounded to 1 preceding, descending", desc,
			WindowFrame{Start: bound(BoundUnboundedPreceding, 0), End: bound(BoundPreceding, 1)},
			// order NULL, 4, 2, 2, 1: NULL: {NULL}; 4: {NULL}; 2: values >= 3 and NULL; 1: values >= 2
			[]int64{1, 1, 2, 2, 4}},
		{"range bounds beyond the integers", asc,
			WindowFrame{Start: bound(BoundPreceding, math.MaxInt64), End: bound(BoundFollowing, math.MaxInt64)},
			[]int64{4, 4, 4, 4, 1}},
		{"groups 1 preceding and current row", asc,
			WindowFrame{Groups: true, Start: bound(BoundPreceding, 1), End: bound(BoundCurrentRow, 0)},
			// groups {1} {2,2} {4} {NULL}
			[]int64{1, 3, 3, 3, 2}},
		{"groups 1 following and 5 following", asc,
			WindowFrame{Groups: true, Start: bound(BoundFollowing, 1), End: bound(BoundFollowing, 5)},
			[]int64{4, 2, 2, 1, 0}},
		{"exclude ties", asc,
			WindowFrame{Groups: true, Start: bound(BoundPreceding, 1), End: bound(BoundFollowing, 1), Exclude: ExcludeTies},
			// 1: {1,2,2}; 2: {1,2,4} and itself; 4: {2,2,4,NULL}; NULL: {4,NULL}
			[]int64{3, 3, 3, 4, 2}},
		{"exclude group", asc,
			WindowFrame{Start: bound(BoundUnboundedPreceding, 0), End: bound(BoundUnboundedFollowing, 0), Exclude: ExcludeGroup},
			[]int64{4, 3, 3, 4, 4}},
		{"exclude current row", asc,
			WindowFrame{Rows: true, Start: bound(BoundPreceding, 1), End: bound(BoundFollowing, 1), Exclude: ExcludeCurrentRow},
			[]int64{1, 2, 2, 2, 1}},
	}
	vals := []row.Datum{row.Int64(1), row.Int64(2), row.Int64(2), row.Int64(4), row.Null()}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in []ValDiff
			for _, v := range vals {
				in = append(in, ValDiff{Val: row.Pack(v), Diff: 1})
			}
			// Collapse the duplicate 2 into one row of multiplicity 2.
			in = Consolidate(sortedVals(in))
			spec := WindowSpec{Order: []row.ColumnOrder{tc.order}, Funcs: []WindowFunc{{Kind: WinAggregate, Agg: Aggregate{Func: AggCountStar}, Arg: -1, Default: -1, Frame: tc.frame}}}
			out, err := WindowLogic(spec)(nil, in)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{}
			order := slices.Clone(vals)
			if tc.order.Desc {
				order = []row.Datum{row.Null(), row.Int64(4), row.Int64(2), row.Int64(2), row.Int64(1)}
			}
			for i, v := range order {
				want[string(row.Pack(v, row.Int64(tc.want[i])))]++
			}
			got := map[string]int64{}
			for _, o := range out {
				got[string(o.Val)] += o.Diff
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got %v, want %v", describeRows(got), describeRows(want))
			}
		})
	}
}

func sortedVals(in []ValDiff) []ValDiff {
	slices.SortFunc(in, func(a, b ValDiff) int { return slices.Compare(a.Val, b.Val) })
	return in
}

func describeRows(m map[string]int64) []string {
	var out []string
	for k, n := range m {
		ds, _ := row.Row(k).Unpack()
		out = append(out, fmt.Sprintf("%v×%d", ds, n))
	}
	slices.Sort(out)
	return out
}
