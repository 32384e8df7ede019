package render

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// BenchmarkArrange measures arrange throughput through the runtime: each
// worker's source emits its share of N keyed updates (int64 key, 16-byte
// value) in chunks of 64Ki, one time per chunk; the arrangement exchanges
// them by key and seals a batch per frontier advance. Reported: updates/s.
func BenchmarkArrange(b *testing.B) {
	const n = 1 << 20
	const chunk = 1 << 16
	val := make([]byte, 16)
	// Pre-encode the updates so the source costs nothing.
	all := make([]dataflow.Update, n)
	for i := range all {
		all[i] = dataflow.Update{Key: row.Pack(row.Int64(int64(i))), Val: row.Pack(row.Int64(int64(i)), row.Bytes(val)), Time: frontier.Time(i / chunk), Diff: 1}
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("W%d", w), func(b *testing.B) {
			shares := make([][]dataflow.Update, w)
			for i := range shares {
				shares[i] = make([]dataflow.Update, 0, n/w+1)
			}
			for i, u := range all {
				shares[i%w] = append(shares[i%w], u)
			}
			cpu0 := cpuTime()
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				ws, err := dataflow.New(dataflow.Config{Workers: w})
				if err != nil {
					b.Fatal(err)
				}
				done := make(chan struct{}, w)
				ws.Install("arrange", func(bl *dataflow.Builder) error {
					share := shares[bl.Worker().Index()]
					pos := 0
					src := bl.AddOperator("src", nil, 1, dataflow.LogicFunc(func(op *dataflow.Operator) {
						if pos >= len(share) {
							op.SetHold(frontier.Closed())
							return
						}
						end := min(pos+chunk/w, len(share))
						op.Output(0).Send(share[pos:end])
						op.SetHold(frontier.At(share[end-1].Time))
						pos = end
						op.Activate()
					}))
					src.SetHold(frontier.Minimum())
					arr := Arrange(bl, "bench", src.Stream(0), func(err error) { b.Error(err) })
					sent := false
					bl.AddOperator("probe", []dataflow.Connection{{From: arr.Stream}}, 0, dataflow.LogicFunc(func(op *dataflow.Operator) {
						if op.InputFrontier().IsClosed() && !sent {
							sent = true
							done <- struct{}{}
						}
					}))
					return nil
				}, nil)
				ctx, cancel := context.WithCancel(context.Background())
				ws.Start(ctx)
				for i := 0; i < w; i++ {
					<-done
				}
				cancel()
				ws.Stop()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "updates/s")
			// The machine is shared: CPU time tells the engine's cost even
			// when the wall clock mostly measures other processes.
			b.ReportMetric(float64(n)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "updates/cpu-s")
		})
	}
}

// cpuTime returns the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
