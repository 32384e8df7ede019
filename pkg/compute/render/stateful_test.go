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
)

// TestStatefulJoinYieldsInSlices: a join whose steps emit n rows at time 0
// and n at time 1, rendered with a fuel of F updates per schedule, emits
// them over at least 2n/F schedules, none emitting more than F plus one
// key's rows, and holds its output frontier until each step is done (also
// when the inputs moved on meanwhile): no row reaches the consumer after
// the consumer saw the frontier pass the row's time, and all 2n arrive.
// With fuel 0 one schedule emits a whole step.
func TestStatefulJoinYieldsInSlices(t *testing.T) {
	const n, fuel = 20_000, 1_000
	for _, tc := range []struct{ fuel int }{{fuel}, {0}} {
		t.Run(fmt.Sprintf("fuel=%d", tc.fuel), func(t *testing.T) {
			got := joinInSlices(t, n, tc.fuel)
			if got.late != "" {
				t.Errorf("the output frontier passed a row's time before the row: %s", got.late)
			}
			if got.rows != 2*n {
				t.Errorf("the consumer saw %d rows, want %d", got.rows, 2*n)
			}
			if tc.fuel > 0 {
				if got.maxPerSchedule > fuel+1 {
					t.Errorf("one schedule emitted %d rows, fuel %d", got.maxPerSchedule, fuel)
				}
				if got.schedules < 2*n/fuel {
					t.Errorf("the steps took %d emitting schedules, want at least %d", got.schedules, 2*n/fuel)
				}
			} else if got.maxPerSchedule < n {
				t.Errorf("unbounded: the most rows one schedule emitted was %d, want a whole step (%d)", got.maxPerSchedule, n)
			}
		})
	}
}

type sliceResult struct {
	rows, schedules, maxPerSchedule int
	late                            string
}

// joinInSlices joins two arranged inputs of 2n keys each (one row per
// key, n at time 0 and n at time 1) on one worker with the given fuel.
func joinInSlices(t *testing.T, n, fuel int) sliceResult {
	ws, err := dataflow.New(dataflow.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		res sliceResult
	)
	done := make(chan struct{}, 1)
	ws.Install("join", func(b *dataflow.Builder) error {
		input := func(side string) *Arranged {
			sent := 0
			src := b.AddOperator("src "+side, nil, 1, dataflow.LogicFunc(func(op *dataflow.Operator) {
				// Keys [0, n) at time 0, then keys [n, 2n) at time 1: the
				// inputs move on while the first step runs in slices.
				if sent < 2 {
					ups := make([]dataflow.Update, n)
					for i := range ups {
						ups[i] = dataflow.Update{Key: row.Pack(row.Int64(int64(sent*n + i))), Val: row.Pack(row.Text(side)), Time: frontier.Time(sent), Diff: 1}
					}
					op.Output(0).Send(ups)
					sent++
					op.SetHold(frontier.At(frontier.Time(sent)))
					op.Activate()
					return
				}
				op.SetHold(frontier.Closed())
			}))
			src.SetHold(frontier.At(0))
			return Arrange(b, side, src.Stream(0), func(err error) { t.Error(err) })
		}
		la, ra := input("l"), input("r")
		out, lg := stateful(b, "join", []*Arranged{la, ra}, JoinStep, func(err error) { t.Error(err) }, func() int { return fuel })
		lg.onSchedule = func(emitted int) {
			mu.Lock()
			defer mu.Unlock()
			if emitted > 0 {
				res.schedules++
			}
			res.maxPerSchedule = max(res.maxPerSchedule, emitted)
		}
		seen := frontier.Minimum()
		fired := false
		b.AddOperator("probe", []dataflow.Connection{{From: out.Ok}}, 0, dataflow.LogicFunc(func(op *dataflow.Operator) {
			mu.Lock()
			defer mu.Unlock()
			for _, d := range op.Input(0).Take() {
				for _, u := range d.([]dataflow.Update) {
					if !seen.LessEqualTime(u.Time) && res.late == "" {
						res.late = fmt.Sprintf("row at %d after frontier %v", u.Time, seen)
					}
					res.rows += int(u.Diff)
				}
			}
			seen = op.InputFrontier()
			if !fired && seen.IsClosed() {
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
	case <-time.After(30 * time.Second):
		t.Fatal("the join's output never closed")
	}
	mu.Lock()
	defer mu.Unlock()
	return res
}
