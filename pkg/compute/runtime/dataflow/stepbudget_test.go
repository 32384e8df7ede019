package dataflow

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestStepBudgetEndsStepsAndResumesFairly: with a step budget, a step
// ends after the schedule that spends it, so no step is longer than the
// budget plus one schedule, and the next step resumes after the last
// operator scheduled, so every operator keeps running. The clock is fake:
// each schedule advances it by cost.
func TestStepBudgetEndsStepsAndResumesFairly(t *testing.T) {
	const (
		cost      = 10 * time.Millisecond
		budget    = 25 * time.Millisecond
		schedules = 20 // per operator
	)
	for _, tc := range []struct {
		name            string
		budget          time.Duration
		wantLongestStep time.Duration
	}{
		{"budget", budget, budget - budget%cost + cost},
		{"off", 0, 6 * cost}, // two dataflows of three operators, all in one step
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{}
			var mu sync.Mutex
			var longest time.Duration
			ws, err := New(Config{Workers: 1, Now: clk.now, ObserveStep: func(_ int, d time.Duration) {
				mu.Lock()
				longest = max(longest, d)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			ws.SetStepBudget(tc.budget)
			ctx, cancel := context.WithCancel(context.Background())
			ws.Start(ctx)
			t.Cleanup(func() { cancel(); ws.Stop() })

			var order []string  // schedules in the order they ran (worker goroutine only)
			var ops []*Operator // built on the worker goroutine, activated there together
			started := false    // set on the worker goroutine
			done := make(chan struct{})
			remaining := 6
			for _, df := range []string{"a", "b"} {
				ws.Install(df, func(b *Builder) error {
					for _, name := range []string{df + "1", df + "2", df + "3"} {
						left := schedules
						var op *Operator
						op = b.AddOperator(name, nil, 0, LogicFunc(func(*Operator) {
							if !started || left == 0 {
								return // a build's first schedule, before the test starts them
							}
							clk.advance(cost)
							order = append(order, name)
							if left--; left > 0 {
								op.Activate()
							} else if remaining--; remaining == 0 {
								close(done)
							}
						}))
						ops = append(ops, op)
					}
					return nil
				}, nil)
			}
			// Both dataflows are built before any operator runs.
			ws.Broadcast(func(*Worker) {
				started = true
				for _, op := range ops {
					op.Activate()
				}
			})
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the operators did not all finish")
			}
			mu.Lock()
			got := longest
			mu.Unlock()
			if got != tc.wantLongestStep {
				t.Errorf("longest step %v, want %v", got, tc.wantLongestStep)
			}
			// Fair: no operator waits for more than one schedule of each
			// of the five others between two of its own.
			last := map[string]int{} // from the start, too
			for _, name := range []string{"a1", "a2", "a3", "b1", "b2", "b3"} {
				last[name] = -1
			}
			for i, name := range order {
				if j := last[name]; i-j > 6 {
					t.Fatalf("%s waited %d schedules between runs: %v", name, i-j-1, order[max(j, 0):i+1])
				}
				last[name] = i
			}
		})
	}
}
