package render

import (
	"context"
	"fmt"
	"testing"

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
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("W%d", w), func(b *testing.B) {
			// Pre-encode every worker's updates so the source costs nothing.
			shares := make([][]dataflow.Update, w)
			for i := 0; i < n; i++ {
				k := row.Pack(row.Int64(int64(i)))
				shares[i%w] = append(shares[i%w], dataflow.Update{Key: k, Val: row.Pack(row.Int64(int64(i)), row.Bytes(val)), Time: frontier.Time(i / chunk), Diff: 1})
			}
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
		})
	}
}
