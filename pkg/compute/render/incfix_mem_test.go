package render

import (
	"os"
	"strconv"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// BenchmarkIncrementalFixpointMemory measures the live heap of the parts
// of an incremental recursion's state after building reachability from
// node 0 over a chain of N edges (TANDEM_BENCH_ROWS, default 100,000), in
// bytes per edge:
//   - arranged: the tagged inputs as one consolidated batch, the least the
//     arrangement in front of the operator holds (render.recursive);
//   - inputs: incFix's own copy of the inputs (map overhead only: its
//     strings are shared with the join index);
//   - join-input: the step's join index of the input side (edges by
//     join key), the part an arrangement of the input by that key could
//     replace;
//   - join-result: the join index of the result side by join key;
//   - result: each row's depth and its derivation counts.
//
// Heap bytes, not time.
func BenchmarkIncrementalFixpointMemory(b *testing.B) {
	n := int64(100_000)
	if s := os.Getenv("TANDEM_BENCH_ROWS"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatalf("TANDEM_BENCH_ROWS: %v", err)
		}
		n = v
	}
	sh := incShapes(1 << 30)[1] // reach
	fp, err := CompileRecursive(sh.p.Recursive)
	if err != nil {
		b.Fatal(err)
	}
	build := []change{{input: 0, val: ints(0), diff: 1}}
	for i := int64(1); i <= n; i++ {
		build = append(build, edgeChange(i-1, i, 1))
	}
	per := func(bytes uint64, base uint64) float64 { return float64(int64(bytes)-int64(base)) / float64(n) }
	for b.Loop() {
		// The arrangement: every tagged input row once, consolidated.
		base := liveHeap()
		var bld batch.Builder
		key := row.Pack()
		for _, c := range build {
			val := append(append([]byte{}, FixpointTag(c.input)...), c.val...)
			bld.Push(key, val, 0, c.diff)
		}
		arr, err := bld.Build(batch.Description{Lower: frontier.Minimum(), Upper: frontier.At(1), Since: frontier.Minimum()})
		if err != nil {
			b.Fatal(err)
		}
		arranged := per(liveHeap(), base)
		if arr.Len() != len(build) {
			b.Fatalf("arranged %d updates, want %d", arr.Len(), len(build))
		}
		arr = nil

		base = liveHeap()
		s := newIncFix(fp)
		if out := s.Apply(build); int64(len(out)) != n+1 || !s.valid {
			b.Fatalf("built %d rows (valid %v), want %d", len(out), s.valid, n+1)
		}
		total := liveHeap()
		s.inputs = nil
		noInputs := liveHeap()
		for _, js := range s.joins {
			js.in = nil
		}
		noJoinIn := liveHeap()
		s.joins = nil
		noJoins := liveHeap()
		b.ReportMetric(arranged, "arranged-B/edge")
		b.ReportMetric(per(total, noInputs), "inputs-B/edge")
		b.ReportMetric(per(noInputs, noJoinIn), "join-input-B/edge")
		b.ReportMetric(per(noJoinIn, noJoins), "join-result-B/edge")
		b.ReportMetric(per(noJoins, base), "result-B/edge")
		b.ReportMetric(per(total, base), "incfix-B/edge")
		if len(s.depth) == 0 {
			b.Fatal("state collected before it was measured")
		}
	}
}
