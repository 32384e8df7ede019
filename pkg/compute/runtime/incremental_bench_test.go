package runtime_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// benchPartitionRows is the size of every partition of the incremental
// benchmark's input: a larger input has more partitions (more users,
// devices, accounts), not longer ones.
const benchPartitionRows = 100

var partitionedDesc = row.NewRelationDesc([]string{"g", "ord", "v"},
	[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeInt64}})

// incrementalViews are the maintained views of BenchmarkIncrementalUpdate
// over (g, ord, v), both partitioned by g:
//   - top3: the latest 3 rows per g, as SQL's
//     `WHERE rn <= 3` over `row_number() OVER (PARTITION BY g ORDER BY ord
//     DESC)` is planned (a TopK under the Window, the filter above);
//   - running: sum(v) OVER (PARTITION BY g ORDER BY ord ROWS BETWEEN
//     UNBOUNDED PRECEDING AND CURRENT ROW).
func incrementalViews() map[string]plan.Plan {
	get := plan.NewGet(src)
	three := int64(3)
	latest := []plan.ColumnOrder{{Column: 1, Desc: true}}
	rn := plan.WindowFunc{Func: plan.WinRowNumber, Arg: -1, Default: -1, Frame: plan.DefaultFrame()}
	top3 := plan.NewMfp(plan.NewWindow(plan.NewTopK(get, []int{0}, latest, &three, 0), []int{0}, latest, rn),
		expr.Identity(4).Filter(expr.Call(expr.FuncLte, expr.Column(3), expr.Literal(row.Int64(3)))))
	sum := plan.WindowFunc{Func: plan.WinAggregate, Agg: plan.AggSum, Arg: 2, Default: -1, Frame: plan.WindowFrame{Rows: true,
		Start: plan.FrameBound{Kind: plan.UnboundedPreceding}, End: plan.FrameBound{Kind: plan.CurrentRow}}}
	running := plan.NewWindow(get, []int{0}, []plan.ColumnOrder{{Column: 1, NullsLast: true}}, sum)
	return map[string]plan.Plan{"top3": top3, "running": running}
}

// BenchmarkIncrementalUpdate measures how a maintained top-k-per-group
// view and a running-total window view keep up with one-row changes: the
// full build (n rows, 100 per partition, arranged and the view's index
// computed) and then, per iteration, one row appended at the end of one
// partition, until the view's index has caught up. Reported: build-ms,
// update-µs (mean per update) and update/build-% (their ratio). Run with
// a fixed count: -bench IncrementalUpdate -benchtime 200x.
func BenchmarkIncrementalUpdate(b *testing.B) {
	for _, name := range []string{"top3", "running"} {
		for _, n := range []int{100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/rows=%d", name, n), func(b *testing.B) {
				benchIncremental(b, incrementalViews()[name], n)
			})
		}
	}
}

func benchIncremental(b *testing.B, view plan.Plan, n int) {
	h := runtimetest.New(b, runtimetest.Options{Workers: 1, Timeout: 10 * time.Minute})
	tbl := h.Table(src)
	h.MustCreate(plan.DataflowDescription{
		ID: plan.Transient(1), DebugName: "incremental", Class: plan.ClassMaintained,
		SourceImports:  []plan.SourceImport{{ID: src, Desc: partitionedDesc, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
		ObjectsToBuild: []plan.Build{{ID: plan.User(2), Plan: view}},
		IndexExports:   []plan.IndexExport{{ID: index, On: plan.User(2), Key: []expr.Expr{expr.Column(0)}}},
		AsOf:           frontier.At(0), Until: frontier.Closed(),
	})
	parts := n / benchPartitionRows
	ups := make([]dataflow.Update, n)
	for i := range ups {
		ups[i] = gov(int64(i/benchPartitionRows), int64(i%benchPartitionRows), int64(i%13), 0)
	}
	start := time.Now()
	if err := tbl.Append(ups, frontier.At(1)); err != nil {
		b.Fatal(err)
	}
	if err := h.WaitFrontier(index, frontier.At(1)); err != nil {
		b.Fatal(err)
	}
	build := time.Since(start)
	t := frontier.Time(1)
	var updates int
	var spent time.Duration
	for b.Loop() {
		g := int64(updates * 7919 % parts)
		u := gov(g, int64(benchPartitionRows+updates), 5, t)
		t0 := time.Now()
		if err := tbl.Append([]dataflow.Update{u}, frontier.At(t+1)); err != nil {
			b.Fatal(err)
		}
		if err := h.WaitFrontier(index, frontier.At(t+1)); err != nil {
			b.Fatal(err)
		}
		spent += time.Since(t0)
		t++
		updates++
	}
	per := spent / time.Duration(updates)
	b.ReportMetric(float64(build.Milliseconds()), "build-ms")
	b.ReportMetric(float64(per.Microseconds()), "update-µs")
	b.ReportMetric(100*per.Seconds()/build.Seconds(), "update/build-%")
}

// gov is the row (g, ord, v) inserted at time t.
func gov(g, ord, v int64, t frontier.Time) dataflow.Update {
	return dataflow.Update{Val: row.Pack(row.Int64(g), row.Int64(ord), row.Int64(v)), Time: t, Diff: 1}
}
