package replica

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

// niceOf reads a thread's nice value (field 19 of /proc/self/task/<tid>/stat).
func niceOf(t *testing.T, tid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(fields[19-3])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMaintenanceWorkersRunAtLowerPriority: in a two-runtime process with
// MaintenanceNice, the maintenance runtime's worker threads run at the
// process's nice value plus it, and the interactive runtime's at the
// process's own; a Solo process ignores it (its reads run on its workers).
func TestMaintenanceWorkersRunAtLowerPriority(t *testing.T) {
	base := niceOf(t, os.Getpid())
	for _, two := range []bool{false, true} {
		t.Run(fmt.Sprintf("two=%v", two), func(t *testing.T) {
			f := &fabrics{fail: runtime.Role(-1)}
			p, err := New(Config{Workers: 2, Processes: 1, TwoRuntimes: two, MaintenanceNice: 7, Fabric: f.connect,
				Metrics: func(runtime.Role) runtime.Metrics { return nopMetrics{} }, Log: logr.Discard()})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			p.Start(ctx)
			defer func() { cancel(); p.Stop(); p.Close() }()
			for _, rt := range p.Runtimes {
				want := base
				if rt.Role() == runtime.Maintenance {
					want = min(base+7, 19)
				}
				deadline := time.Now().Add(30 * time.Second) // bounds a failing run only
				tids := rt.WorkerThreadIDs()
				for ; anyZero(tids); tids = rt.WorkerThreadIDs() {
					if time.Now().After(deadline) {
						t.Fatalf("%s workers never started", rt.Role())
					}
					time.Sleep(time.Millisecond)
				}
				// A worker records its thread id after setting its priority.
				for _, tid := range tids {
					if got := niceOf(t, tid); got != want {
						t.Errorf("%s worker thread %d: nice %d, want %d", rt.Role(), tid, got, want)
					}
				}
			}
		})
	}
}

// anyZero reports whether any id is still 0 (a worker not yet running).
func anyZero(ids []int) bool {
	for _, id := range ids {
		if id == 0 {
			return true
		}
	}
	return false
}
