package render

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// TestOneShotReductionEmitsOnFuel: a one-shot read's reduction over an
// index (the snapshot path: cursors, then an arrangement and the group
// step) emits its output in slices of the arrangement fuel per schedule,
// like a maintained reduction, and gives the same answer; with the bound
// off (fuel 0) one schedule emits every group.
func TestOneShotReductionEmitsOnFuel(t *testing.T) {
	const n, fuel = 6_000, 500
	tbl := NewMemoryTable()
	appendRows(t, tbl, 0, n, 1, 2)
	fx := newIndexFixture(t, 1, tbl)
	fx.waitUpper(1)
	// One group per row: GROUP BY the key column, count(*).
	red := plan.NewReduce(plan.NewGet(fixSrc), []expr.Expr{expr.Column(0)}, plan.Aggregate{Func: plan.AggCountStar})
	var want string
	for _, tc := range []struct{ fuel int }{{0}, {fuel}} {
		t.Run(fmt.Sprintf("fuel=%d", tc.fuel), func(t *testing.T) {
			var (
				mu   sync.Mutex
				most int
			)
			var counters ImportCounters
			rd := fx.install(red, readerOpts{asOf: 1, class: plan.ClassOneShotRead, counters: &counters,
				fuel: func() int { return tc.fuel },
				onSchedule: func(name string, emitted int) {
					if strings.HasPrefix(name, "reduce") {
						mu.Lock()
						most = max(most, emitted)
						mu.Unlock()
					}
				}})
			got := rd.result()
			rd.drop()
			if counters.Cursor.Load() == 0 {
				t.Fatal("the read did not take the snapshot path (no cursor import)")
			}
			if strings.Count(got, ";")+1 != n {
				t.Fatalf("%d groups, want %d", strings.Count(got, ";")+1, n)
			}
			if want == "" {
				want = got
			} else if got != want {
				t.Fatal("the bounded reduction's answer differs from the unbounded one's")
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case tc.fuel > 0 && most > fuel+1:
				t.Errorf("one schedule of the reduction emitted %d updates, fuel %d", most, fuel)
			case tc.fuel == 0 && most < n:
				t.Errorf("unbounded: the most one schedule emitted was %d, want every group (%d)", most, n)
			}
		})
	}
}
