package loadgen

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// BenchmarkKeyValueSnapshot generates a KEY VALUE snapshot (16-byte values)
// for one of W shards and builds it into a batch keyed by the key column,
// as an arrange of the source would. Set TANDEM_BENCH_BIG=1 for 10M keys.
func BenchmarkKeyValueSnapshot(b *testing.B) {
	keys := 1 << 20
	if os.Getenv("TANDEM_BENCH_BIG") != "" {
		keys = 10_000_000
	}
	for _, workers := range []int{1, 4} {
		b.Run(strconv.Itoa(keys)+"keys/shard-of-"+strconv.Itoa(workers), func(b *testing.B) {
			o := DefaultOptions(KindKeyValue)
			o.Keys = uint64(keys)
			g, err := New(o)
			if err != nil {
				b.Fatal(err)
			}
			var bl batch.Builder
			rows := 0
			cpu0 := cpuTime(b)
			for b.Loop() {
				err := g.Generate(0, 1, Shard{0, workers}, func(_ int, r row.Row, t frontier.Time, d int64) {
					bl.Push(r[:9], r, t, d) // key column: one int64 datum
					rows++
				})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := bl.Build(batch.Description{Lower: g.Clock().TimeOfFrontier(1), Upper: g.Clock().TimeOfFrontier(2)}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(rows)/(cpuTime(b)-cpu0).Seconds(), "rows/cpu-s")
		})
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
