package runtime_test

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// BenchmarkHydrateKeyValue measures the hydration time of an index on a
// KEY VALUE load generator (16-byte values) with 1, 2 and 4 workers: from
// CreateDataflow until the index's frontier passes its as_of, so the
// snapshot is generated, exchanged by key and arranged. TANDEM_BENCH_KEYS
// sets the key count (default 1M; docs/benchmarks.md records 10M),
// TANDEM_BENCH_VALUE_SIZE the value size (default 16; hack/bench isolation
// churns 64-byte values);
// TANDEM_BENCH_SOURCE_STEP_ITEMS sets source_step_items (default the
// runtime's; 0 turns the bound off); TANDEM_BENCH_ARRANGE_STEP_UPDATES
// sets arrange_step_updates the same way; TANDEM_BENCH_OFFHEAP (a boolean)
// turns the off-heap arenas on or off, TANDEM_BENCH_ARENA_POOL sets the
// arena pool's limit in bytes (0: off). It also reports the process's CPU
// time during the hydration (hydrate-cpu-s), the longest worker step
// (max-step-ms) and the number of steps.
func BenchmarkHydrateKeyValue(b *testing.B) {
	keys := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("TANDEM_BENCH_KEYS")); err == nil && v > 0 {
		keys = v
	}
	valueSize := 16
	if v, err := strconv.Atoi(os.Getenv("TANDEM_BENCH_VALUE_SIZE")); err == nil && v > 0 {
		valueSize = v
	}
	params := map[string]string{}
	if v := os.Getenv("TANDEM_BENCH_SOURCE_STEP_ITEMS"); v != "" {
		params["source_step_items"] = v
	}
	if v := os.Getenv("TANDEM_BENCH_ARRANGE_STEP_UPDATES"); v != "" {
		params["arrange_step_updates"] = v
	}
	if v, err := strconv.ParseBool(os.Getenv("TANDEM_BENCH_OFFHEAP")); err == nil {
		defer batch.SetOffHeap(batch.OffHeapEnabled())
		batch.SetOffHeap(v)
	}
	if v, err := strconv.ParseInt(os.Getenv("TANDEM_BENCH_ARENA_POOL"), 10, 64); err == nil {
		defer batch.SetArenaPoolLimit(batch.ArenaPoolLimit())
		batch.SetArenaPoolLimit(v)
	}
	for _, w := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("W%d", w), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				steps := &stepStats{}
				h := runtimetest.New(b, runtimetest.Options{Workers: w, Timeout: 10 * time.Minute, Metrics: steps,
					Sources: render.SourceKinds{plan.SourceLoadGen: render.LoadGenerators{}}})
				for _, rt := range h.RTs {
					if err := rt.UpdateConfiguration(params); err != nil {
						b.Fatal(err)
					}
				}
				// Ticks in the past are generated at once: the snapshot of
				// tick 1 is what hydration arranges.
				start := frontier.Time(time.Now().UnixMilli()) - 2000
				src, idx := plan.User(uint64(100+2*i)), plan.User(uint64(101+2*i))
				desc := plan.DataflowDescription{
					ID: plan.Transient(uint64(i + 1)), DebugName: "kv hydration", Class: plan.ClassMaintained,
					SourceImports: []plan.SourceImport{{ID: src,
						Desc: row.NewRelationDesc([]string{"key", "partition", "value"},
							[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}}),
						Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
							"generator": "KEY VALUE", "keys": strconv.Itoa(keys), "value_size": strconv.Itoa(valueSize),
							"tick_ms": "1000", "start": fmt.Sprint(start)}}}},
					IndexExports: []plan.IndexExport{{ID: idx, On: src, Key: []expr.Expr{expr.Column(0)}}},
					AsOf:         frontier.At(start), Until: frontier.Closed(),
				}
				t0, cpu0 := time.Now(), processCPU()
				h.MustCreate(desc)
				sealed := start + 1000 + 1
				if err := h.WaitFrontier(idx, frontier.At(sealed)); err != nil {
					b.Fatal(err)
				}
				d, cpu := time.Since(t0), processCPU()-cpu0
				rows, err := h.Peek(idx, sealed-1, &runtimetest.PeekRequest{Keys: [][]byte{row.Pack(row.Int64(int64(keys - 1)))}})
				if err != nil || len(rows) != 1 {
					b.Fatalf("the last key is not in the hydrated index: %d rows, %v", len(rows), err)
				}
				b.ReportMetric(d.Seconds(), "hydrate-s")
				b.ReportMetric(cpu.Seconds(), "hydrate-cpu-s")
				b.ReportMetric(float64(keys)/d.Seconds(), "keys/s")
				b.ReportMetric(float64(steps.max.Load())/1e6, "max-step-ms")
				b.ReportMetric(float64(steps.n.Load()), "steps")
			}
		})
	}
}

// stepStats records the longest worker step and the step count.
type stepStats struct{ max, n atomic.Int64 }

func (s *stepStats) WorkerStep(_ int, d time.Duration) {
	s.n.Add(1)
	for cur := s.max.Load(); int64(d) > cur && !s.max.CompareAndSwap(cur, int64(d)); cur = s.max.Load() {
	}
}
func (*stepStats) Command(string)                            {}
func (*stepStats) PeekFinished(string, time.Duration)        {}
func (*stepStats) ArrangementMaintenance(int, time.Duration) {}
