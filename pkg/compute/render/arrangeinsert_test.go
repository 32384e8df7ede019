package render

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/spine"
)

// TestArrangeInsertPaysMergeOnFuel: an arrangement sealing a second large
// batch after a first one inserts it into a spine whose merge of the two
// then starts; with build fuel F no schedule does more than about 2F units
// of that merge (the insert's share and one debt payment) plus the idle
// exertion, the rest being paid on later schedules; with the bound off
// (fuel 0) the insert pays the whole merge in one schedule.
func TestArrangeInsertPaysMergeOnFuel(t *testing.T) {
	const n, fuel = 60_000, 4096
	for _, tc := range []struct{ fuel int }{{fuel}, {0}} {
		t.Run(fmt.Sprintf("fuel=%d", tc.fuel), func(t *testing.T) {
			maxWork := arrangeTwoSnapshots(t, n, tc.fuel)
			bound := int64(2*(fuel+16) + exertFuel)
			switch {
			case tc.fuel > 0 && maxWork > bound:
				t.Errorf("one schedule did %d units of spine merge work, want at most %d", maxWork, bound)
			case tc.fuel == 0 && maxWork < int64(spine.FuelPerUpdate*n/2):
				t.Errorf("unbounded: the most merge work in one schedule was %d, want the insert's whole payment (>= %d)", maxWork, spine.FuelPerUpdate*n/2)
			}
		})
	}
}

// arrangeTwoSnapshots arranges n updates at time 0 and n at time 1 on one
// worker with the given build fuel and returns the most spine merge work
// one schedule did.
func arrangeTwoSnapshots(t *testing.T, n, fuel int) int64 {
	ws, err := dataflow.New(dataflow.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		maxWork int64
	)
	done := make(chan struct{}, 1)
	ws.Install("arrange", func(b *dataflow.Builder) error {
		sent := 0
		src := b.AddOperator("src", nil, 1, dataflow.LogicFunc(func(op *dataflow.Operator) {
			// One snapshot per schedule: [0, 1), then [1, 2), then closed.
			switch sent {
			case 0, 1:
				ups := buildUpdates(n, uint64(sent))
				for i := range ups {
					ups[i].Time = frontier.Time(sent)
				}
				op.Output(0).Send(ups)
				sent++
				op.SetHold(frontier.At(frontier.Time(sent)))
				op.Activate()
			default:
				op.SetHold(frontier.Closed())
			}
		}))
		src.SetHold(frontier.At(0))
		a, lg := arrange(b, "test", src.Stream(0), func(err error) { t.Error(err) })
		lg.fuel = func() int { return fuel }
		lg.onMergeWork = func(w int64) { mu.Lock(); maxWork = max(maxWork, w); mu.Unlock() }
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
	case <-time.After(30 * time.Second):
		t.Fatal("arrangement never closed")
	}
	mu.Lock()
	defer mu.Unlock()
	return maxWork
}
