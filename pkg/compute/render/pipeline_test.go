package render

import (
	"context"
	"fmt"
	"github.com/tandemdb/tandem/pkg/compute/batch"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// TestMain checks for leaked goroutines; the package's tests run with
// arrangement arenas on (batch.SetOffHeap), so that Flatten and every
// operator reading arrangements are exercised with them.
func TestMain(m *testing.M) {
	batch.SetOffHeap(true)
	goleak.VerifyTestMain(m)
}

// keyByFirst keys rows by their first column.
func keyByFirst(op *dataflow.Operator) {
	for _, d := range op.Input(0).Take() {
		var out []dataflow.Update
		for _, u := range d.([]dataflow.Update) {
			c, err := row.Row(u.Val).Column(0)
			if err != nil {
				panic(err)
			}
			out = append(out, dataflow.Update{Key: row.Pack(c), Val: u.Val, Time: u.Time, Diff: u.Diff})
		}
		op.Output(0).SendUpdates(out)
	}
}

func keyByRow(op *dataflow.Operator) {
	for _, d := range op.Input(0).Take() {
		var out []dataflow.Update
		for _, u := range d.([]dataflow.Update) {
			out = append(out, dataflow.Update{Key: u.Val, Time: u.Time, Diff: u.Diff})
		}
		op.Output(0).SendUpdates(out)
	}
}

// TestCountPipeline renders source -> arrange by k -> count(*) -> arrange by
// row on W workers and reads every worker's shard of the output trace.
func TestCountPipeline(t *testing.T) {
	for _, w := range []int{1, 2, 4} {
		t.Run(fmt.Sprint("W", w), func(t *testing.T) {
			table := NewMemoryTable()
			ws, err := dataflow.New(dataflow.Config{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var outs []*trace.Trace
			var failures []error
			fail := func(err error) { mu.Lock(); failures = append(failures, err); mu.Unlock() }
			built := make(chan error, w)
			ws.Install("count", func(b *dataflow.Builder) error {
				src, err := renderSource(b, "t", table.Open, frontier.Minimum(), fail)
				if err != nil {
					return err
				}
				keyed := b.AddOperator("key", []dataflow.Connection{{From: src}}, 1, dataflow.LogicFunc(keyByFirst))
				arr := Arrange(b, "by k", keyed.Stream(0), fail)
				red := Stateful(b, "count", []*Arranged{arr}, GroupStep(operators.AggregateLogic([]operators.Aggregate{{Func: operators.AggCountStar}}), nil), fail)
				keyed2 := b.AddOperator("key2", []dataflow.Connection{{From: red.Ok}}, 1, dataflow.LogicFunc(keyByRow))
				out := Arrange(b, "out", keyed2.Stream(0), fail)
				mu.Lock()
				outs = append(outs, out.Trace)
				mu.Unlock()
				return nil
			}, func(_ *dataflow.Worker, err error) { built <- err })
			ctx, cancel := context.WithCancel(context.Background())
			ws.Start(ctx)
			defer func() { cancel(); ws.Stop() }()
			for i := 0; i < w; i++ {
				if err := <-built; err != nil {
					t.Fatal(err)
				}
			}
			r := func(k, v int64) dataflow.Update {
				return dataflow.Update{Val: row.Pack(row.Int64(k), row.Int64(v)), Diff: 1}
			}
			at := func(u dataflow.Update, t frontier.Time, d int64) dataflow.Update { u.Time, u.Diff = t, d; return u }
			must := func(err error) {
				if err != nil {
					t.Fatal(err)
				}
			}
			must(table.Append([]dataflow.Update{at(r(1, 1), 1, 1), at(r(1, 2), 2, 1), at(r(2, 1), 3, 1)}, frontier.At(5)))
			must(table.Append([]dataflow.Update{at(r(1, 1), 6, -1), at(r(3, 3), 7, 1)}, frontier.At(10)))
			read := func(ts frontier.Time) string {
				deadline := time.Now().Add(5 * time.Second)
				for {
					mu.Lock()
					ready := len(outs) == w
					for _, tr := range outs {
						if !tr.Upper().IsComplete(ts) {
							ready = false
						}
					}
					mu.Unlock()
					if ready {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("output never reached %d", ts)
					}
					time.Sleep(time.Millisecond)
				}
				counts := map[string]int64{}
				mu.Lock()
				defer mu.Unlock()
				for _, tr := range outs {
					rd, err := tr.ReadAt(ts)
					if err != nil {
						t.Fatal(err)
					}
					rd.Scan(func(key, _ []byte, diff int64) bool {
						counts[row.Row(key).String()] += diff
						return true
					})
				}
				return fmt.Sprint(counts)
			}
			if got, want := read(2), "map[(1, 2):1]"; got != want {
				t.Errorf("at 2: got %s, want %s", got, want)
			}
			if got, want := read(4), "map[(1, 2):1 (2, 1):1]"; got != want {
				t.Errorf("at 4: got %s, want %s", got, want)
			}
			if got, want := read(9), "map[(1, 1):1 (2, 1):1 (3, 1):1]"; got != want {
				t.Errorf("at 9: got %s, want %s", got, want)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(failures) > 0 {
				t.Fatal(failures)
			}
		})
	}
}
