package operators

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// partitionRows is the size of every partition in the incrementality
// tests: inputs grow by having more partitions, as a table of per-user or
// per-device rows grows by users or devices.
const partitionRows = 100

// partitionedInput arranges n rows (g, ord, v) by g, partitionRows per
// partition, as the one batch covering [0, 1).
func partitionedInput(tb testing.TB, n int) *batch.Batch {
	tb.Helper()
	var b batch.Builder
	for i := 0; i < n; i++ {
		g, ord := int64(i/partitionRows), int64(i%partitionRows)
		b.Push(pack(i64(g)), pack(i64(g), i64(ord), i64(ord*7%13)), 0, 1)
	}
	bat, err := b.Build(batch.Description{Lower: frontier.At(0), Upper: frontier.At(1), Since: frontier.At(0)})
	if err != nil {
		tb.Fatalf("build input: %v", err)
	}
	return bat
}

// workCount counts what one ReduceGroups call does: groups recomputed,
// rows handed to the group logic, and output updates emitted.
type workCount struct {
	calls, rowsIn, emitted int
}

func (w *workCount) wrap(logic GroupLogic) GroupLogic {
	return func(key []byte, input []ValDiff) ([]ValDiff, error) {
		w.calls++
		w.rowsIn += len(input)
		return logic(key, input)
	}
}

// updateWork applies one row appended at the end of partition g (ord =
// partitionRows, after every other row) at time 1 to an input of n rows
// and counts the operator's work.
func updateWork(t *testing.T, n int, logic GroupLogic) workCount {
	old := partitionedInput(t, n)
	g := int64(n / partitionRows / 2)
	fresh := mkBatch(t, 1, 2, kv{key: pack(i64(g)), val: pack(i64(g), i64(partitionRows), i64(5)), t: 1, d: 1})
	var w workCount
	ReduceGroups([]*batch.Batch{old}, []*batch.Batch{fresh}, w.wrap(logic),
		func([]byte, frontier.Time, int64) { w.emitted++ },
		func(err error, _ frontier.Time, _ int64) { t.Fatalf("operator error: %v", err) })
	return w
}

// TestOneUpdateWorkIndependentOfInputSize checks that a one-row change to
// one partition of a maintained window (a running total) or top-k per
// group costs the same, counted in rows the operator's logic reads and
// updates it emits, over 10k and 100k input rows: only the changed
// partition is recomputed (twice: before and after the change), and only
// the rows whose output changed are emitted. (Finding the partition in
// the arrangement is a seek, logarithmic in the input, not counted.)
func TestOneUpdateWorkIndependentOfInputSize(t *testing.T) {
	order := []row.ColumnOrder{{Column: 1, NullsLast: true}}
	running := WindowSpec{Order: order, Funcs: []WindowFunc{{Kind: WinAggregate, Agg: Aggregate{Func: AggSum, Column: 2},
		Frame: WindowFrame{Rows: true, Start: FrameBound{Kind: BoundUnboundedPreceding}, End: FrameBound{Kind: BoundCurrentRow}}}}}
	tests := []struct {
		name    string
		logic   GroupLogic
		emitted int // updates one appended row causes
	}{
		// The new row is last: its running total is the only new output.
		{"running total", WindowLogic(running), 1},
		// Latest 3 by ord: the new row enters, the 3rd latest leaves.
		{"top 3 per group", TopKLogic(TopKSpec{Order: []row.ColumnOrder{{Column: 1, Desc: true, NullsLast: true}}, Limit: 3}), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			small, large := updateWork(t, 10_000, tc.logic), updateWork(t, 100_000, tc.logic)
			if small != large {
				t.Errorf("work grows with the input: %+v at 10k rows, %+v at 100k", small, large)
			}
			want := workCount{calls: 2, rowsIn: 2*partitionRows + 1, emitted: tc.emitted}
			if large != want {
				t.Errorf("work %+v, want %+v (one partition of %d rows recomputed before and after)", large, want, partitionRows)
			}
		})
	}
}
