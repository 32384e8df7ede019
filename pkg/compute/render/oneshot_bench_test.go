package render

import (
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// keyValueTable returns n rows shaped like the KEY VALUE load generator's
// (key, partition = key % partitions, 16-byte value), all at time 1, then
// ticks more times (2, 3, ...) each updating the values of 28 keys spread
// over the key space, as the generator's ticks do: an index of it is one
// large batch and a few small ones whose keys fall among the large one's.
func keyValueTable(tb testing.TB, n, partitions, ticks int) *MemoryTable {
	tb.Helper()
	tbl := NewMemoryTable()
	ups := make([]dataflow.Update, n)
	kvRow := func(i, version int) row.Row {
		val := make([]byte, 16)
		for j := range val {
			val[j] = byte((i + version) >> (j % 4 * 8))
		}
		return row.Pack(row.Int64(int64(i)), row.Int64(int64(i%partitions)), row.Bytes(val))
	}
	for i := range ups {
		ups[i] = dataflow.Update{Val: kvRow(i, 0), Time: 1, Diff: 1}
	}
	if err := tbl.Append(ups, frontier.At(2)); err != nil {
		tb.Fatal(err)
	}
	version := map[int]int{} // each updated key's value, 0 when absent
	for tick := 1; tick <= ticks; tick++ {
		ups = ups[:0]
		for j := range 28 {
			i := (j*n/28 + tick*7919) % n
			ups = append(ups, dataflow.Update{Val: kvRow(i, version[i]), Time: frontier.Time(tick + 1), Diff: -1},
				dataflow.Update{Val: kvRow(i, tick), Time: frontier.Time(tick + 1), Diff: 1})
			version[i] = tick
		}
		if err := tbl.Append(ups, frontier.At(frontier.Time(tick+2))); err != nil {
			tb.Fatal(err)
		}
	}
	return tbl
}

// oneShotQueries are the ad-hoc reads of the adhoc comparison, over
// Get(fixSrc) = (key, partition, value).
func oneShotQueries(n int) map[string]plan.Plan {
	get := plan.NewGet(fixSrc)
	return map[string]plan.Plan{
		"count":      globalAgg(get, plan.Aggregate{Func: plan.AggCountStar}),
		"groupcount": plan.NewReduce(get, []expr.Expr{expr.Column(1)}, plan.Aggregate{Func: plan.AggCountStar}),
		"groupby": plan.NewReduce(get, []expr.Expr{expr.Column(1)},
			plan.Aggregate{Func: plan.AggCountStar}, plan.Aggregate{Func: plan.AggSum, Expr: expr.Column(0)}),
		"filtered": globalAgg(plan.NewMfp(get, expr.MFP{
			Predicates: []expr.Expr{expr.Lt(expr.Column(0), expr.Literal(row.Int64(int64(n/10))))},
			Projection: []int{0, 1, 2},
		}), plan.Aggregate{Func: plan.AggCountStar}, plan.Aggregate{Func: plan.AggMax, Expr: expr.Column(1)}),
		// The adhoc scenario's join of two indexes on their key, here the
		// index with itself (n rows out): count(*), sum(partition).
		"join": globalAgg(plan.NewJoin(get, get, []expr.Expr{expr.Column(0)}, []expr.Expr{expr.Column(0)}),
			plan.Aggregate{Func: plan.AggCountStar}, plan.Aggregate{Func: plan.AggSum, Expr: expr.Column(1)}),
		// The adhoc scenario's filtered aggregate: a filter on a non-key
		// column (no seek), then count(*), sum(key).
		"partfilter": globalAgg(plan.NewMfp(get, expr.MFP{
			Predicates: []expr.Expr{expr.Lt(expr.Column(1), expr.Literal(row.Int64(4)))},
			Projection: []int{0, 1, 2},
		}), plan.Aggregate{Func: plan.AggCountStar}, plan.Aggregate{Func: plan.AggSum, Expr: expr.Column(0)}),
	}
}

// BenchmarkOneShotAggregate runs one-shot reads over an index of N KEY
// VALUE rows (default 1M, TANDEM_BENCH_ROWS overrides; TANDEM_BENCH_TICKS
// adds that many ticks of updates after them, default 0) on W workers, through
// the snapshot operators and, for comparison in the same run, flattened.
// Reported per read: allocations and bytes (testing's), and CPU seconds of
// the process (the machine is shared: CPU time, not wall time, is the
// engine's cost).
func BenchmarkOneShotAggregate(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("TANDEM_BENCH_ROWS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("TANDEM_BENCH_ROWS: %v", err)
		}
		n = v
	}
	ticks, _ := strconv.Atoi(os.Getenv("TANDEM_BENCH_TICKS"))
	asOf := frontier.Time(1 + ticks)
	for _, w := range []int{1, 2} {
		tbl := keyValueTable(b, n, 16, ticks)
		fx := newIndexFixture(b, w, tbl)
		fx.waitUpper(asOf)
		for name, p := range oneShotQueries(n) {
			for _, flatten := range []bool{false, true} {
				arm := "snapshot"
				if flatten {
					arm = "flattened"
				}
				b.Run("W"+strconv.Itoa(w)+"/"+name+"/"+arm, func(b *testing.B) {
					b.ReportAllocs()
					var want string
					cpu0 := cpuTime()
					for i := 0; i < b.N; i++ {
						rd := fx.install(p, readerOpts{asOf: asOf, class: plan.ClassOneShotRead, flatten: flatten})
						got := rd.result()
						rd.drop()
						if want == "" {
							want = got
						} else if got != want {
							b.Fatalf("answers differ: %s, then %s", want, got)
						}
					}
					b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
				})
			}
		}
		runtime.GC()
	}
}
