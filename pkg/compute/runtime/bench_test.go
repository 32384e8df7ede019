package runtime_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// BenchmarkPeekPointLookup measures the latency of a peek with one literal
// key against an index of 100k rows, end to end through the runtime
// (command broadcast, worker wake-up, cursor seek, per-process merge,
// response delivery). Reported: p50 and p99 besides the mean.
func BenchmarkPeekPointLookup(b *testing.B) {
	const keys = 100_000
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("W%d", w), func(b *testing.B) {
			h := runtimetest.New(b, runtimetest.Options{Workers: w, Timeout: time.Minute})
			tbl := h.Table(src)
			h.MustCreate(indexDesc(0))
			ups := make([]dataflow.Update, keys)
			for i := range ups {
				ups[i] = kv(int64(i), int64(i%97+1), 1, 1)
			}
			if err := tbl.Append(ups, frontier.At(2)); err != nil {
				b.Fatal(err)
			}
			if err := h.WaitFrontier(index, frontier.At(2)); err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := row.Pack(row.Int64(int64(i * 7919 % keys)))
				t0 := time.Now()
				rows, err := h.Peek(index, 1, &runtimetest.PeekRequest{Keys: [][]byte{k}})
				lat = append(lat, time.Since(t0))
				if err != nil || len(rows) != 1 {
					b.Fatalf("lookup: %v rows, %v", len(rows), err)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
