package runtime_test

import (
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// maintenanceMetrics records ArrangementMaintenance reports.
type maintenanceMetrics struct {
	mu      sync.Mutex
	total   time.Duration
	reports int
}

func (*maintenanceMetrics) WorkerStep(int, time.Duration)      {}
func (*maintenanceMetrics) Command(string)                     {}
func (*maintenanceMetrics) PeekFinished(string, time.Duration) {}
func (m *maintenanceMetrics) ArrangementMaintenance(_ int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d <= 0 {
		m.reports = -1 << 30 // a non-positive report is a bug: poison the count
	}
	m.total += d
	m.reports++
}

func (m *maintenanceMetrics) get() (time.Duration, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total, m.reports
}

// TestArrangementMaintenanceReported: the time workers spend in arrange
// operators reaches the metrics while an index is fed, and no report is
// ever zero or negative.
func TestArrangementMaintenanceReported(t *testing.T) {
	m := &maintenanceMetrics{}
	h := runtimetest.New(t, runtimetest.Options{Workers: 2, Metrics: m})
	tbl := h.Table(src)
	h.MustCreate(indexDesc(0))
	deadline := time.Now().Add(10 * time.Second)
	ts := frontier.Time(1)
	for {
		var ups []dataflow.Update
		for k := range int64(2000) {
			ups = append(ups, kv(int64(ts)*10_000+k, k+1, ts, 1))
		}
		if err := tbl.Append(ups, frontier.At(ts+1)); err != nil {
			t.Fatal(err)
		}
		ts++
		if total, n := m.get(); n > 0 && total > 0 {
			break
		}
		if time.Now().After(deadline) {
			total, n := m.get()
			t.Fatalf("no arrangement maintenance reported after %d appends: total %v over %d reports", ts, total, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, n := m.get(); n < 0 {
		t.Fatal("a non-positive maintenance duration was reported")
	}
}
