package runtime_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// BenchmarkHydrateFuelArms measures what a step bound costs a hydration,
// side by side in one run: the isolation benchmark's churned index (a KEY
// VALUE source of 300,000 keys with 64-byte values, or TANDEM_BENCH_KEYS,
// two workers) is hydrated with the system parameter TANDEM_BENCH_ARM_PARAM
// (default arrange_step_updates) at each value of TANDEM_BENCH_FUEL_ARMS
// (default "65536,16384": arrange_step_updates' old default and its new),
// the arms alternating, TANDEM_BENCH_ROUNDS times each (default 3). Per arm
// it reports the median hydration time (hydrate-ms-<value>) and the median
// process CPU of a hydration (cpu-ms-<value>, which a loaded machine
// inflates less than the wall time), and the ratios of each arm to the
// first (hydrate-ratio-<value>, cpu-ratio-<value>).
func BenchmarkHydrateFuelArms(b *testing.B) {
	keys, rounds := 300_000, 3
	if v, err := strconv.Atoi(os.Getenv("TANDEM_BENCH_KEYS")); err == nil && v > 0 {
		keys = v
	}
	if v, err := strconv.Atoi(os.Getenv("TANDEM_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	param := "arrange_step_updates"
	if v := os.Getenv("TANDEM_BENCH_ARM_PARAM"); v != "" {
		param = v
	}
	arms := []string{"65536", strconv.Itoa(render.DefaultArrangeStepUpdates)}
	if v := os.Getenv("TANDEM_BENCH_FUEL_ARMS"); v != "" {
		arms = splitComma(v)
	}
	for i := 0; i < b.N; i++ {
		wall := make([][]time.Duration, len(arms))
		cpu := make([][]time.Duration, len(arms))
		h := runtimetest.New(b, runtimetest.Options{Workers: 2, Timeout: 10 * time.Minute,
			Sources: render.SourceKinds{plan.SourceLoadGen: render.LoadGenerators{}}})
		n := 0
		for range rounds {
			for a, fuel := range arms {
				if err := h.RTs[0].UpdateConfiguration(map[string]string{param: fuel}); err != nil {
					b.Fatal(err)
				}
				d, c := hydrateOnce(b, h, n, keys)
				n++
				wall[a], cpu[a] = append(wall[a], d), append(cpu[a], c)
			}
		}
		for a, fuel := range arms {
			w, c := median(wall[a]), median(cpu[a])
			b.ReportMetric(float64(w.Microseconds())/1000, "hydrate-ms-"+fuel)
			b.ReportMetric(float64(c.Microseconds())/1000, "cpu-ms-"+fuel)
			if a > 0 {
				b.ReportMetric(float64(w)/float64(median(wall[0])), "hydrate-ratio-"+fuel)
				b.ReportMetric(float64(c)/float64(median(cpu[0])), "cpu-ratio-"+fuel)
			}
		}
	}
}

// hydrateOnce creates the n-th index on a fresh KEY VALUE source, waits
// for its snapshot to be arranged, checks its last key, drops it, and
// returns the hydration's wall time and the process's CPU time meanwhile.
func hydrateOnce(b *testing.B, h *runtimetest.Harness, n, keys int) (time.Duration, time.Duration) {
	start := frontier.Time(time.Now().UnixMilli()) - 2000
	src, idx := plan.User(uint64(100+2*n)), plan.User(uint64(101+2*n))
	desc := plan.DataflowDescription{
		ID: plan.Transient(uint64(n + 1)), DebugName: fmt.Sprintf("kv hydration %d", n), Class: plan.ClassMaintained,
		SourceImports: []plan.SourceImport{{ID: src,
			Desc: row.NewRelationDesc([]string{"key", "partition", "value"},
				[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}}),
			Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
				"generator": "KEY VALUE", "keys": strconv.Itoa(keys), "value_size": "64",
				"tick_ms": "1000", "start": fmt.Sprint(start)}}}},
		IndexExports: []plan.IndexExport{{ID: idx, On: src, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:         frontier.At(start), Until: frontier.Closed(),
	}
	c0, t0 := processCPU(), time.Now()
	h.MustCreate(desc)
	sealed := start + 1000 + 1
	if err := h.WaitFrontier(idx, frontier.At(sealed)); err != nil {
		b.Fatal(err)
	}
	d, c := time.Since(t0), processCPU()-c0
	rows, err := h.Peek(idx, sealed-1, &runtimetest.PeekRequest{Keys: [][]byte{row.Pack(row.Int64(int64(keys - 1)))}})
	if err != nil || len(rows) != 1 {
		b.Fatalf("the last key is not in the hydrated index: %d rows, %v", len(rows), err)
	}
	if err := h.AllowCompaction(idx, frontier.Closed()); err != nil {
		b.Fatal(err)
	}
	return d, c
}

// processCPU returns the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func splitComma(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
