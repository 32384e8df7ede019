package render

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

func TestConsolidateUpdates(t *testing.T) {
	k := func(s string) []byte { return []byte(s) }
	in := []dataflow.Update{
		{Key: k("b"), Val: k("1"), Time: 2, Diff: 1},
		{Key: k("a"), Val: k("1"), Time: 2, Diff: 1},
		{Key: k("b"), Val: k("1"), Time: 2, Diff: 2},
		{Key: k("a"), Val: k("1"), Time: 3, Diff: 1},
		{Key: k("a"), Val: k("2"), Time: 2, Diff: 1},
		{Key: k("a"), Val: k("2"), Time: 2, Diff: -1},
	}
	got := fmt.Sprint(consolidateUpdates(in))
	want := fmt.Sprint([]dataflow.Update{
		{Key: k("a"), Val: k("1"), Time: 2, Diff: 1},
		{Key: k("a"), Val: k("1"), Time: 3, Diff: 1},
		{Key: k("b"), Val: k("1"), Time: 2, Diff: 3},
	})
	if got != want {
		t.Errorf("consolidated %s, want %s", got, want)
	}
}

// TestArrangeConsolidatesWaitingUpdates: updates that wait for the frontier
// (here all at time 1, the frontier held at 1) are summed as they pile up,
// so 30,000 copies of one (key, val) hold a handful of pending entries, not
// 30,000; distinct updates are kept whole. The batch sealed at the end
// reads the same either way.
func TestArrangeConsolidatesWaitingUpdates(t *testing.T) {
	tests := []struct {
		name        string
		distinct    bool
		maxPending  int
		wantUpdates int
	}{
		{"identical", false, 2 * minConsolidate, 1},
		{"distinct", true, 30_000, 30_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := dataflow.New(dataflow.Config{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			var (
				mu         sync.Mutex
				maxPending int
				tr         *trace.Trace
			)
			sent := 0
			done := make(chan struct{}, 1)
			ws.Install("arrange", func(b *dataflow.Builder) error {
				var lg *arrangeLogic
				src := b.AddOperator("src", nil, 1, dataflow.LogicFunc(func(op *dataflow.Operator) {
					if lg != nil {
						mu.Lock()
						maxPending = max(maxPending, lg.pending.n)
						mu.Unlock()
					}
					if sent == 30_000 {
						op.SetHold(frontier.Closed())
						return
					}
					ups := make([]dataflow.Update, 1000)
					for i := range ups {
						v := int64(0)
						if tc.distinct {
							v = int64(sent + i)
						}
						ups[i] = dataflow.Update{Key: row.Pack(row.Int64(7)), Val: row.Pack(row.Int64(v)), Time: 1, Diff: 1}
					}
					sent += len(ups)
					op.Output(0).Send(ups)
					op.Activate()
				}))
				src.SetHold(frontier.At(1))
				var a *Arranged
				a, lg = arrange(b, "test", src.Stream(0), func(err error) { t.Error(err) })
				mu.Lock()
				tr = a.Trace
				mu.Unlock()
				fired := false
				b.AddOperator("probe", []dataflow.Connection{{From: a.Stream}}, 0, dataflow.LogicFunc(func(op *dataflow.Operator) {
					if !fired && op.InputFrontier().IsClosed() {
						fired = true
						done <- struct{}{}
					}
				}))
				return nil
			}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			ws.Start(ctx)
			defer func() { cancel(); ws.Stop() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("arrangement never closed")
			}
			mu.Lock()
			defer mu.Unlock()
			if maxPending > tc.maxPending {
				t.Errorf("%d updates waited at once, want at most %d", maxPending, tc.maxPending)
			}
			rd, err := tr.ReadAt(1)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			var total int64
			rd.Scan(func(_, _ []byte, d int64) bool { n++; total += d; return true })
			if n != tc.wantUpdates || total != 30_000 {
				t.Errorf("arranged %d (key, val) pairs summing to %d, want %d summing to 30000", n, total, tc.wantUpdates)
			}
		})
	}
}

func TestRepeats(t *testing.T) {
	mk := func(n int, distinctEvery int) []dataflow.Update {
		ups := make([]dataflow.Update, n)
		for i := range ups {
			ups[i] = dataflow.Update{Key: row.Pack(row.Int64(int64(i / distinctEvery))), Time: 3, Diff: 1}
		}
		return ups
	}
	tests := []struct {
		name string
		ups  []dataflow.Update
		want bool
	}{
		{"all equal", mk(5000, 5000), true},
		{"all distinct", mk(5000, 1), false},
		{"pairs", mk(5000, 2), true},
		{"distinct sample after equal prefix", append(mk(4000, 4000), mk(2000, 1)...), false},
	}
	for _, tc := range tests {
		if got := repeats(tc.ups); got != tc.want {
			t.Errorf("%s: repeats = %v, want %v", tc.name, got, tc.want)
		}
	}
}
