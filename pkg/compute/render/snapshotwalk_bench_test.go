package render

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// keyValueIndex returns an index on key of n KEY VALUE rows (key,
// partition = key % 16, a 16-byte value as the load generator writes it:
// no 0x00 byte), one update per row at time 1, in one batch.
func keyValueIndex(tb testing.TB, n int) []*batch.Batch {
	tb.Helper()
	var b batch.Builder
	val := make([]byte, 16)
	for i := 0; i < n; i++ {
		for j := range val {
			val[j] = byte(i>>(j%4*8)) | 0x80
		}
		b.Push(row.Pack(row.Int64(int64(i))), row.Pack(row.Int64(int64(i)), row.Int64(int64(i%16)), row.Bytes(val)), 1, 1)
	}
	bt, err := b.Build(batch.Description{Lower: frontier.At(0), Upper: frontier.At(2), Since: frontier.At(0)})
	if err != nil {
		tb.Fatal(err)
	}
	return []*batch.Batch{bt}
}

// snapshotWalkShape is a reduction read through a snapshot operator: the
// MFPs over the index and the reduction's key spec and aggregates, as
// render's reduceGroup builds them.
type snapshotWalkShape struct {
	mfps []*expr.MFP
	spec KeySpec
	aggs []operators.Aggregate
}

// adhocShapes are the adhoc scenario's walks over (key, partition, value).
func adhocShapes() map[string]snapshotWalkShape {
	countSum := []operators.Aggregate{{Func: operators.AggCountStar, Column: 0}, {Func: operators.AggSum, Column: 1}}
	countSumVals := []expr.Expr{expr.Literal(row.Null()), expr.Column(0)}
	return map[string]snapshotWalkShape{
		// SELECT count(*), sum(key) FROM big WHERE partition < 4
		"filtered": {
			mfps: []*expr.MFP{{Predicates: []expr.Expr{expr.Lt(expr.Column(1), expr.Literal(row.Int64(4)))}, Projection: []int{0, 1, 2}}},
			spec: KeySpec{Key: []expr.Expr{}, Val: countSumVals}, aggs: countSum,
		},
		// SELECT partition, count(*), sum(key) FROM big GROUP BY partition
		"groupby": {spec: KeySpec{Key: []expr.Expr{expr.Column(1)}, Val: countSumVals}, aggs: countSum},
	}
}

// walkSnapshot folds every row of batches as a snapshot operator does,
// the new reader (prefix decoding, encoded filter) or the old one (every
// row decoded to its end, the filter evaluated on datums), and returns
// the logic for its folded groups.
func walkSnapshot(batches []*batch.Batch, sh snapshotWalkShape, old bool) *snapshotKeyLogic {
	tune := snapshotTuning{fuel: 1 << 62, sample: snapshotSample, flushAt: snapshotFlushAt}
	lg := newSnapshotKeyLogic("bench", 1, sh.mfps, sh.spec, tune, nil, sh.aggs, func(error) {})
	if old {
		lg.dec.prefix, lg.filter = false, encodedFilter{}
	}
	lg.batches, lg.cl = batches, batch.NewCursorList(batches)
	n := 0
	for lg.cl.KeyValid() {
		if stopped, _ := lg.foldKey(&n); stopped {
			continue // folding stopped: the walk starts again from the first key
		}
		lg.cl.StepKey()
	}
	return lg
}

// BenchmarkSnapshotWalk measures the per-row cost of a snapshot read over
// an index of KEY VALUE rows (the cursor walk, filter and folded
// aggregate of a one-shot dataflow, without the dataflow around it), the
// old reader and the new side by side in one run. cpu-ns/row is the
// process's CPU time per row (the walk allocates almost nothing, so it is
// the walk's): on a shared machine wall time also counts waiting for a
// core.
func BenchmarkSnapshotWalk(b *testing.B) {
	const n = 1 << 20
	batches := keyValueIndex(b, n)
	for _, name := range []string{"filtered", "groupby"} {
		sh := adhocShapes()[name]
		for _, old := range []bool{true, false} {
			arm := "new"
			if old {
				arm = "old"
			}
			b.Run(fmt.Sprintf("%s/%s", name, arm), func(b *testing.B) {
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				cpu0 := cpuTime()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					walkSnapshot(batches, sh, old)
				}
				b.StopTimer()
				cpu := cpuTime() - cpu0
				runtime.ReadMemStats(&ms1)
				rows := float64(b.N) * n
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rows, "ns/row")
				b.ReportMetric(float64(cpu.Nanoseconds())/rows, "cpu-ns/row")
				b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/rows, "allocs/row")
			})
		}
	}
}
