package runtime_test

import (
	"fmt"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// stepProfiles keeps the steps that used the most CPU (runtime.StepProfiler).
type stepProfiles struct {
	stepStats
	mu  sync.Mutex
	top []runtime.StepProfile
}

func (s *stepProfiles) StepProfile(p runtime.StepProfile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.top) == 8 && p.CPU <= s.top[7].CPU {
		return
	}
	s.top = append(s.top, p)
	slices.SortFunc(s.top, func(a, b runtime.StepProfile) int { return int(b.CPU - a.CPU) })
	s.top = s.top[:min(len(s.top), 8)]
}

// BenchmarkChurnKeyValue is the isolation benchmark's churn on two workers
// without the SQL layer: an index on a KEY VALUE source (300,000 keys,
// 64-byte values, a tick a second) is created, hydrated, read and dropped,
// TANDEM_BENCH_ROUNDS times (default 3). It logs the steps that used the
// most CPU (thread CPU time, Linux) with what took longest in them, and
// reports the longest step's CPU (max-step-cpu-ms): the work of one step,
// which a loaded machine does not inflate as it does the wall time. It also
// reports the garbage collector's share (runtime/metrics, counted, not
// timed): GC cycles, and the GC's CPU and its mark assists' CPU as
// fractions of the process's CPU (run with GOGC or GOMEMLIMIT set to
// compare).
func BenchmarkChurnKeyValue(b *testing.B) {
	keys, rounds := 300_000, 3
	if v, err := strconv.Atoi(os.Getenv("TANDEM_BENCH_KEYS")); err == nil && v > 0 {
		keys = v
	}
	if v, err := strconv.Atoi(os.Getenv("TANDEM_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	params := map[string]string{}
	for env, p := range map[string]string{"TANDEM_BENCH_SOURCE_STEP_ITEMS": "source_step_items", "TANDEM_BENCH_ARRANGE_STEP_UPDATES": "arrange_step_updates", "TANDEM_BENCH_WORKER_STEP_BUDGET_MS": "worker_step_budget_ms"} {
		if v := os.Getenv(env); v != "" {
			params[p] = v
		}
	}
	for i := 0; i < b.N; i++ {
		gc0 := readGC()
		prof := &stepProfiles{}
		h := runtimetest.New(b, runtimetest.Options{Workers: 2, Timeout: 10 * time.Minute, Metrics: prof,
			Sources: render.SourceKinds{plan.SourceLoadGen: render.LoadGenerators{}}})
		if err := h.RTs[0].UpdateConfiguration(params); err != nil {
			b.Fatal(err)
		}
		start := frontier.Time(time.Now().UnixMilli()) - 2000
		for r := 0; r < rounds; r++ {
			src, idx := plan.User(uint64(100+2*r)), plan.User(uint64(101+2*r))
			h.MustCreate(plan.DataflowDescription{
				ID: plan.Transient(uint64(r + 1)), DebugName: fmt.Sprintf("big_idx %d", r), Class: plan.ClassMaintained,
				SourceImports: []plan.SourceImport{{ID: src,
					Desc: row.NewRelationDesc([]string{"key", "partition", "value"},
						[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}}),
					Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
						"generator": "KEY VALUE", "keys": strconv.Itoa(keys), "value_size": "64",
						"tick_ms": "1000", "start": fmt.Sprint(start)}}}},
				IndexExports: []plan.IndexExport{{ID: idx, On: src, Key: []expr.Expr{expr.Column(0)}}},
				AsOf:         frontier.At(start), Until: frontier.Closed(),
			})
			now := frontier.Time(time.Now().UnixMilli())
			if err := h.WaitFrontier(idx, frontier.At(now)); err != nil {
				b.Fatal(err)
			}
			if rows, err := h.Peek(idx, now-1, &runtimetest.PeekRequest{Keys: [][]byte{row.Pack(row.Int64(0))}}); err != nil || len(rows) != 1 {
				b.Fatalf("key 0: %d rows, %v", len(rows), err)
			}
			if err := h.AllowCompaction(idx, frontier.Closed()); err != nil {
				b.Fatal(err)
			}
		}
		prof.mu.Lock()
		for _, p := range prof.top {
			b.Logf("%v", p)
		}
		if len(prof.top) > 0 {
			b.ReportMetric(float64(prof.top[0].CPU.Microseconds())/1000, "max-step-cpu-ms")
		}
		prof.mu.Unlock()
		gc := readGC().minus(gc0)
		b.ReportMetric(float64(gc.cycles), "gc-cycles")
		b.ReportMetric(gc.assist/gc.total, "gc-assist/cpu")
		b.ReportMetric(gc.gc/gc.total, "gc/cpu")
		b.ReportMetric(float64(prof.max.Load())/1e6, "max-step-ms")
		b.ReportMetric(float64(prof.n.Load()), "steps")
	}
}

// gcStats are the garbage collector's counters (runtime/metrics): cycles,
// and CPU seconds of all GC work, of mark assists (done by the allocating
// goroutines, workers included) and of the whole process.
type gcStats struct {
	cycles            uint64
	gc, assist, total float64
}

func readGC() gcStats {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}}
	metrics.Read(s)
	return gcStats{cycles: s[0].Value.Uint64(), gc: s[1].Value.Float64(), assist: s[2].Value.Float64(), total: s[3].Value.Float64()}
}

func (g gcStats) minus(o gcStats) gcStats {
	return gcStats{cycles: g.cycles - o.cycles, gc: g.gc - o.gc, assist: g.assist - o.assist, total: g.total - o.total}
}
