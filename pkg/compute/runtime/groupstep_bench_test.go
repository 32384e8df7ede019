package runtime_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// groupSteps records, per arm, the longest worker step (wall and thread
// CPU) and the most CPU of a step whose longest part was a schedule of a
// reduction or recursion operator.
type groupSteps struct {
	stepStats
	mu               sync.Mutex
	maxCPU, groupCPU time.Duration
	where            string
}

func (s *groupSteps) StepProfile(p runtime.StepProfile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.CPU > s.maxCPU {
		s.maxCPU, s.where = p.CPU, p.Where()
	}
	if p.Longest == dataflow.PartOperator && isGroupOperator(p.Operator) && p.CPU > s.groupCPU {
		s.groupCPU = p.CPU
	}
}

func (s *groupSteps) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.max.Store(0)
	s.maxCPU, s.groupCPU, s.where = 0, 0, ""
}

func isGroupOperator(name string) bool {
	return !strings.HasPrefix(name, "Arrange") && (strings.Contains(name, "reduce") || strings.Contains(name, "recursive"))
}

// BenchmarkGroupStepArms measures the bound on one group's work, side by
// side in one run: three maintained views whose work is one group are
// hydrated with arrange_step_updates at each value of
// TANDEM_BENCH_FUEL_ARMS (default "0,16384": the bounds off, the
// default), arms alternating, TANDEM_BENCH_ROUNDS times each (default 1):
//   - minmax: min(key), max(key) and count(*) of a KEY VALUE source of
//     TANDEM_BENCH_KEYS keys (default 1,000,000) with no GROUP BY;
//   - string_agg: string_agg of the same rows' 8-byte values;
//   - recursion: WITH RECURSIVE t(n) AS (VALUES (1) UNION ALL SELECT n + 1
//     FROM t WHERE n < TANDEM_BENCH_DEPTH) (default 100,000 rounds),
//     counted.
//
// Per view and arm it reports the longest worker step (max-step-ms, what
// the runtime's max-step gauge shows), its thread CPU (max-step-cpu-ms),
// the most CPU of a step whose longest part was the view's reduction or
// recursion operator (group-step-cpu-ms), and the process CPU (cpu-ms) and
// wall time (hydrate-ms) of the hydration. arrange_step_updates 0 also
// turns the arrangements' fuel off, so max-step-ms of that arm mixes both;
// group-step-cpu-ms is the group's alone.
func BenchmarkGroupStepArms(b *testing.B) {
	keys, depth, rounds := 1_000_000, 100_000, 1
	if v, err := strconv.Atoi(os.Getenv("TANDEM_BENCH_KEYS")); err == nil && v > 0 {
		keys = v
	}
	if v, err := strconv.Atoi(os.Getenv("TANDEM_BENCH_DEPTH")); err == nil && v > 0 {
		depth = v
	}
	if v, err := strconv.Atoi(os.Getenv("TANDEM_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	arms := []string{"0", strconv.Itoa(render.DefaultArrangeStepUpdates)}
	if v := os.Getenv("TANDEM_BENCH_FUEL_ARMS"); v != "" {
		arms = splitComma(v)
	}
	views := groupStepViews(int64(depth))
	names := []string{"minmax", "string_agg", "recursion"}
	for i := 0; i < b.N; i++ {
		steps := &groupSteps{}
		h := runtimetest.New(b, runtimetest.Options{Workers: 2, Timeout: 10 * time.Minute, Metrics: steps,
			Sources: render.SourceKinds{plan.SourceLoadGen: render.LoadGenerators{}}})
		type result struct{ wall, cpu, step, stepCPU, group time.Duration }
		results := map[string][]result{}
		n := 0
		for range rounds {
			for _, name := range names {
				for _, fuel := range arms {
					if err := h.RTs[0].UpdateConfiguration(map[string]string{"arrange_step_updates": fuel}); err != nil {
						b.Fatal(err)
					}
					steps.reset()
					n++
					wall, cpu := hydrateView(b, h, n, keys, views[name], name != "recursion")
					steps.mu.Lock()
					r := result{wall, cpu, time.Duration(steps.max.Load()), steps.maxCPU, steps.groupCPU}
					b.Logf("%s fuel %s: longest step %v (%v CPU): %s", name, fuel, r.step, r.stepCPU, steps.where)
					steps.mu.Unlock()
					results[name+"/"+fuel] = append(results[name+"/"+fuel], r)
				}
			}
		}
		for _, name := range names {
			for _, fuel := range arms {
				rs := results[name+"/"+fuel]
				pick := func(f func(result) time.Duration) float64 {
					ds := make([]time.Duration, len(rs))
					for i, r := range rs {
						ds[i] = f(r)
					}
					return float64(median(ds).Microseconds()) / 1000
				}
				suffix := "-" + name + "-" + fuel
				b.ReportMetric(pick(func(r result) time.Duration { return r.step }), "max-step-ms"+suffix)
				b.ReportMetric(pick(func(r result) time.Duration { return r.stepCPU }), "max-step-cpu-ms"+suffix)
				b.ReportMetric(pick(func(r result) time.Duration { return r.group }), "group-step-cpu-ms"+suffix)
				b.ReportMetric(pick(func(r result) time.Duration { return r.cpu }), "cpu-ms"+suffix)
				b.ReportMetric(pick(func(r result) time.Duration { return r.wall }), "hydrate-ms"+suffix)
			}
		}
	}
}

// groupStepViews are BenchmarkGroupStepArms' views over a KEY VALUE
// source (key, partition, value).
func groupStepViews(depth int64) map[string]plan.Plan {
	col, lit := expr.Column, func(d row.Datum) expr.Expr { return expr.Literal(d) }
	comma := lit(row.BytesString(","))
	l := plan.Local(1)
	one := plan.NewConstant(row.RelationDesc{Names: []string{"n"}, Types: []row.ColumnType{{Type: row.TypeInt64}}},
		plan.ConstantRow{Datums: []row.Datum{row.Int64(1)}, Diff: 1})
	count := plan.NewMfp(plan.NewGet(l), expr.MFP{Expressions: []expr.Expr{expr.Add(col(0), lit(row.Int64(1)))},
		Predicates: []expr.Expr{expr.Lt(col(0), lit(row.Int64(depth)))}, Projection: []int{1}})
	src := plan.NewGet(groupSrc)
	return map[string]plan.Plan{
		"minmax": plan.NewReduce(src, nil, plan.Aggregate{Func: plan.AggMin, Expr: col(0)},
			plan.Aggregate{Func: plan.AggMax, Expr: col(0)}, plan.Aggregate{Func: plan.AggCountStar}),
		"string_agg": plan.NewReduce(src, nil, plan.Aggregate{Func: plan.AggStringAgg, Expr: col(2), Sep: &comma}),
		"recursion":  plan.NewReduce(plan.NewRecursive(l, "t", one, count, false, depth+1), nil, plan.Aggregate{Func: plan.AggCountStar}),
	}
}

var groupSrc = plan.User(900)

// hydrateView builds the n-th dataflow computing view (over a fresh KEY
// VALUE source of keys keys if withSource) into an index, waits until its
// snapshot is complete, checks it has one row, drops it, and returns the
// wall time and the process's CPU time meanwhile.
func hydrateView(b *testing.B, h *runtimetest.Harness, n, keys int, view plan.Plan, withSource bool) (time.Duration, time.Duration) {
	// Tick 1 (the snapshot) just happened, tick 2 (the first rewrites) is
	// an hour away: the arms do the same work however long a hydration
	// takes.
	const tick = 3_600_000
	start := frontier.Time(time.Now().UnixMilli()) - tick - 100
	obj, idx := plan.User(uint64(1000+2*n)), plan.User(uint64(1001+2*n))
	desc := plan.DataflowDescription{
		ID: plan.Transient(uint64(n)), DebugName: fmt.Sprintf("group view %d", n), Class: plan.ClassMaintained,
		ObjectsToBuild: []plan.Build{{ID: obj, Plan: view}},
		IndexExports:   []plan.IndexExport{{ID: idx, On: obj, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:           frontier.At(start), Until: frontier.Closed(),
	}
	if withSource {
		desc.SourceImports = []plan.SourceImport{{ID: groupSrc,
			Desc: row.NewRelationDesc([]string{"key", "partition", "value"},
				[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}}),
			Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
				"generator": "KEY VALUE", "keys": strconv.Itoa(keys), "value_size": "8",
				"tick_ms": strconv.Itoa(tick), "start": fmt.Sprint(start)}}}}
	}
	c0, t0 := processCPU(), time.Now()
	h.MustCreate(desc)
	sealed := start + tick + 1
	if err := h.WaitFrontier(idx, frontier.At(sealed)); err != nil {
		b.Fatal(err)
	}
	d, c := time.Since(t0), processCPU()-c0
	rows, err := h.Peek(idx, sealed-1, &runtimetest.PeekRequest{})
	if err != nil || len(rows) != 1 {
		b.Fatalf("the view has %d rows, want one: %v", len(rows), err)
	}
	if err := h.AllowCompaction(idx, frontier.Closed()); err != nil {
		b.Fatal(err)
	}
	return d, c
}
