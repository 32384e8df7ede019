package server

import (
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// recordingMetrics keeps what the server reports.
type recordingMetrics struct {
	mu         sync.Mutex
	commands   map[string]int
	peeks      map[string]int
	reconciled [][3]int
	stages     map[string]int
}

func newRecordingMetrics() *recordingMetrics {
	return &recordingMetrics{commands: map[string]int{}, peeks: map[string]int{}, stages: map[string]int{}}
}

func (m *recordingMetrics) ReadStage(stage string, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stages[stage]++
}

func (m *recordingMetrics) CommandReceived(kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.commands[kind]++
}

func (m *recordingMetrics) PeekFinished(result string, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.peeks[result]++
}

func (m *recordingMetrics) Reconciled(reused, replaced, dropped int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reconciled = append(m.reconciled, [3]int{reused, replaced, dropped})
}

func (*recordingMetrics) Collections(int, int) {}

// TestMetricsCountReconciliationAndPeekResults pins the counts behind the
// replica's reconciliation and peek-duration metrics: one reconciliation per
// InitializationComplete with exact reused / replaced / dropped numbers
// (replaced: a collection asked for again, under an incompatible
// description), and one finished peek per terminal response, by result.
func TestMetricsCountReconciliationAndPeekResults(t *testing.T) {
	m := newRecordingMetrics()
	h := newHarnessWith(t, m)
	keep := testDataflow{Name: "keep", Indexes: []string{"u1"}, AsOf: 5, Plan: "p1"}
	change := testDataflow{Name: "change", Indexes: []string{"u2"}, AsOf: 5, Plan: "p2"}
	gone := testDataflow{Name: "gone", Indexes: []string{"u3"}, AsOf: 5, Plan: "p3"}
	old := h.ready("n1", &computepb.CreateInstance{PeekStashThreshold: 16, PeekStashChunkSize: 1 << 10}, keep, change, gone)
	h.rt.expect(t, "create keep", "create change", "create gone")

	small := []row.RowCount{{Row: row.Pack(row.Int64(1)), Count: 1}}
	large := []row.RowCount{{Row: row.Pack(row.Text("a row above the stash threshold")), Count: 1}}
	old.send(peekCmd(uuidN(1), "u1", 5))
	h.rt.expect(t, "peek "+uuidN(1))
	h.srv.Deliver(&PeekResult{UUID: uuidN(1), Rows: small})
	if old.recv().GetPeekResponse().GetRows() == nil {
		t.Fatal("want rows")
	}
	old.send(peekCmd(uuidN(2), "u1", 5))
	h.rt.expect(t, "peek "+uuidN(2))
	h.srv.Deliver(&PeekResult{UUID: uuidN(2), Rows: large})
	if st := old.recv().GetPeekResponse().GetStashed(); st == nil || !st.GetFinal() {
		t.Fatalf("want one final stashed chunk, got %v", st)
	}
	old.send(peekCmd(uuidN(3), "u404", 5)) // unknown index
	peekError(t, old.recv(), CodeUndefinedObject)
	old.send(peekCmd(uuidN(4), "u1", 5), cancelPeek(uuidN(4)))
	h.rt.expect(t, "peek "+uuidN(4), "cancel "+uuidN(4))
	if old.recv().GetPeekResponse().GetCanceled() == nil {
		t.Fatal("want canceled")
	}
	m.mu.Lock()
	peeks := map[string]int{}
	for k, v := range m.peeks {
		peeks[k] = v
	}
	m.mu.Unlock()
	// A stashed result is counted when its final chunk has gone, which the
	// sender reports back to the loop after sending it.
	deadline := time.Now().Add(5 * time.Second)
	for peeks[resultStashed] == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		m.mu.Lock()
		peeks[resultStashed] = m.peeks[resultStashed]
		m.mu.Unlock()
	}
	want := map[string]int{resultRows: 1, resultStashed: 1, resultError: 1, resultCanceled: 1}
	for k, v := range want {
		if peeks[k] != v {
			t.Errorf("peeks finished with %s: %d, want %d (all: %v)", k, peeks[k], v, peeks)
		}
	}

	s := h.open("n2")
	s.send(createInstance(&computepb.CreateInstance{}))
	h.rt.expect(t, "instance")
	changed := change
	changed.Plan = "p2-new"
	s.send(createDataflow(keep), createDataflow(changed), initDone())
	h.rt.expect(t, "compact u2 []", "compact u3 []", "create change")
	m.mu.Lock()
	got := m.reconciled
	m.mu.Unlock()
	if len(got) != 2 || got[0] != [3]int{0, 0, 0} || got[1] != [3]int{1, 1, 1} {
		t.Fatalf("reconciliations (reused, replaced, dropped) = %v, want [0 0 0] then [1 1 1]", got)
	}
}

// TestPeekRecordsReplicaStagesOnce: a peek answered by the runtime records
// the replica's command and runtime stages once each; one refused before
// the runtime (unknown index) records neither.
func TestPeekRecordsReplicaStagesOnce(t *testing.T) {
	m := newRecordingMetrics()
	h := newHarnessWith(t, m)
	s := h.ready("n1", &computepb.CreateInstance{}, testDataflow{Name: "d", Indexes: []string{"u1"}, AsOf: 5, Plan: "p1"})
	h.rt.expect(t, "create d")
	s.send(peekCmd(uuidN(1), "u404", 5))
	peekError(t, s.recv(), CodeUndefinedObject)
	s.send(peekCmd(uuidN(2), "u1", 5))
	h.rt.expect(t, "peek "+uuidN(2))
	h.srv.Deliver(&PeekResult{UUID: uuidN(2), Rows: []row.RowCount{{Row: row.Pack(row.Int64(1)), Count: 1}}})
	if s.recv().GetPeekResponse().GetRows() == nil {
		t.Fatal("want rows")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[string]int{stageCommand: 1, stageRuntime: 1}
	if len(m.stages) != len(want) || m.stages[stageCommand] != 1 || m.stages[stageRuntime] != 1 {
		t.Errorf("stages recorded %v, want %v", m.stages, want)
	}
}
