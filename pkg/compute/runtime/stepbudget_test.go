package runtime_test

import (
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// TestWorkerStepBudgetParameter: worker_step_budget_ms reaches the
// workers (default 10 ms, 0 turns it off) and a bad value is refused
// without changing it.
func TestWorkerStepBudgetParameter(t *testing.T) {
	h := runtimetest.New(t, runtimetest.Options{Workers: 1})
	rt := h.RTs[0]
	if got := rt.WorkerStepBudget(); got != runtime.DefaultWorkerStepBudget {
		t.Fatalf("default budget %v, want %v", got, runtime.DefaultWorkerStepBudget)
	}
	for _, tc := range []struct {
		value   string
		want    time.Duration
		wantErr bool
	}{
		{"25", 25 * time.Millisecond, false},
		{"-1", 25 * time.Millisecond, true},
		{"soon", 25 * time.Millisecond, true},
		{"0", 0, false},
	} {
		err := rt.UpdateConfiguration(map[string]string{"worker_step_budget_ms": tc.value})
		if (err != nil) != tc.wantErr || rt.WorkerStepBudget() != tc.want {
			t.Errorf("worker_step_budget_ms %q: budget %v, error %v; want %v (error %v)", tc.value, rt.WorkerStepBudget(), err, tc.want, tc.wantErr)
		}
	}
}
