package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// answerPending answers one pending peek of process 0 with no rows; false
// when none is pending.
func (f *fakeReplica) answerPending() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for uuid := range f.pending {
		delete(f.pending, uuid)
		p := f.procs[0]
		go p.send(&computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: &computepb.PeekResponse{
			Uuid: uuid, Result: &computepb.PeekResponse_Rows{Rows: &computepb.PeekRows{}}}}})
		return true
	}
	return false
}

// answerOne waits for a pending peek and answers it.
func (h *harness) answerOne(f *fakeReplica) {
	h.t.Helper()
	h.eventually("a pending peek to answer", f.answerPending)
}

func (f *fakeReplica) peaks() (pending, maxPending int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending), f.maxPending
}

// admissionHarness is setupIndex with metrics and the admission bounds set.
func admissionHarness(t *testing.T, peeks, oneShots, queue int) (*harness, *fakeReplica, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	h := newHarnessWith(t, func(cfg *Config) { cfg.Metrics = NewMetrics(reg) })
	f := h.addReplica("r1", 1)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	f.report("u1", frontier.At(5000))
	h.eventually("u1 write frontier", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[5000]" })
	h.c.SetParameter(ParamMaxConcurrentPeeks, strconv.Itoa(peeks))
	h.c.SetParameter(ParamMaxConcurrentOneShotReads, strconv.Itoa(oneShots))
	h.c.SetParameter(ParamMaxQueuedReads, strconv.Itoa(queue))
	return h, f, reg
}

// admissionMetric is the value of an admission series of cluster
// "default" and kind (0 when the series does not exist).
func admissionMetric(t *testing.T, reg *prometheus.Registry, name string, kind readKind) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["cluster"] == "default" && labels["kind"] == kind.String() {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

// read issues one read of kind on the harness's cluster.
func (h *harness) read(ctx context.Context, kind readKind) error {
	if kind == readOneShot {
		_, err := h.c.PeekDataflow(ctx, "default", testDataflow(h.c.AllocateTransientID().String(), []string{"u1"}, nil), Serializable, nil)
		return err
	}
	_, err := h.c.Peek(ctx, PeekRequest{Cluster: "default", Target: gid("u1"), Isolation: Serializable})
	return err
}

// TestAdmissionBoundsConcurrentReads issues many more reads than the
// bound at once and counts, at the replica, how many are ever pending
// together: never more than the bound, and every read is answered.
func TestAdmissionBoundsConcurrentReads(t *testing.T) {
	for _, tc := range []struct {
		kind  readKind
		limit int
		reads int
	}{
		{readPeek, 3, 24},
		{readOneShot, 2, 12},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			h, f, m := admissionHarness(t, 3, 2, 100)
			errs := make(chan error, tc.reads)
			for range tc.reads {
				go func() { errs <- h.read(context.Background(), tc.kind) }()
			}
			h.eventually("every read running or queued, the running ones pending at the replica", func() bool {
				st := h.c.Admission("default")[tc.kind.String()]
				pending, _ := f.peaks()
				return st.Running+st.Queued == tc.reads && pending == st.Running
			})
			if st := h.c.Admission("default")[tc.kind.String()]; st.Running != tc.limit {
				t.Fatalf("%d reads running (%d queued), want the bound %d", st.Running, st.Queued, tc.limit)
			}
			if got := admissionMetric(t, m, "tandem_controller_read_admission_running", tc.kind); got != float64(tc.limit) {
				t.Errorf("running gauge %v, want %d", got, tc.limit)
			}
			if got := admissionMetric(t, m, "tandem_controller_read_admission_queued", tc.kind); got != float64(tc.reads-tc.limit) {
				t.Errorf("queued gauge %v, want %d", got, tc.reads-tc.limit)
			}
			for done := range tc.reads {
				h.answerOne(f)
				if err := <-errs; err != nil {
					t.Fatalf("read %d: %v", done, err)
				}
			}
			if _, maxPending := f.peaks(); maxPending != tc.limit {
				t.Errorf("at most %d reads pending at the replica at once, want exactly the bound %d", maxPending, tc.limit)
			}
			if st := h.c.Admission("default")[tc.kind.String()]; st != (AdmissionState{}) {
				t.Errorf("admission after every read ended: %+v", st)
			}
			if got := admissionMetric(t, m, "tandem_controller_read_admission_running", tc.kind); got != 0 {
				t.Errorf("running gauge %v after every read ended", got)
			}
		})
	}
}

// TestAdmissionRefusesWhenQueueFull fills the lane and its queue; the next
// read is refused at once with 53000 and never reaches the replica.
func TestAdmissionRefusesWhenQueueFull(t *testing.T) {
	h, f, m := admissionHarness(t, 1, 1, 2)
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- h.read(context.Background(), readPeek) }()
	}
	h.eventually("one running, two queued", func() bool {
		return h.c.Admission("default")["peek"] == AdmissionState{Running: 1, Queued: 2}
	})
	err := h.read(context.Background(), readPeek)
	var pe *PeekError
	if !errors.As(err, &pe) || pe.SQLState != CodeInsufficientResources {
		t.Fatalf("read beyond the queue: %v, want a PeekError with SQLSTATE 53000", err)
	}
	if got := admissionMetric(t, m, "tandem_controller_read_admission_refused_total", readPeek); got != 1 {
		t.Errorf("refused counter %v, want 1", got)
	}
	// One-shot reads have their own lane: not refused.
	h.c.SetParameter(ParamMaxConcurrentOneShotReads, "0")
	oneShot := make(chan error, 1)
	go func() { oneShot <- h.read(context.Background(), readOneShot) }()
	for range 4 {
		h.answerOne(f)
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("admitted read: %v", err)
		}
	}
	if err := <-oneShot; err != nil {
		t.Errorf("one-shot read beside a full peek lane: %v", err)
	}
}

// TestAdmissionTimeoutWhileQueued: a read whose context ends while it
// waits leaves the queue having taken no hold and sent nothing, and the
// slot it waited for goes to the next read.
func TestAdmissionTimeoutWhileQueued(t *testing.T) {
	h, f, m := admissionHarness(t, 1, 1, 10)
	holds := h.c.OutstandingReadHolds()
	first := make(chan error, 1)
	go func() { first <- h.read(context.Background(), readPeek) }()
	h.eventually("first read pending", func() bool { p, _ := f.peaks(); return p == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan error, 1)
	go func() { queued <- h.read(ctx, readPeek) }()
	h.eventually("second read queued", func() bool { return h.c.Admission("default")["peek"].Queued == 1 })
	if got := h.c.OutstandingReadHolds(); got != holds+1 {
		t.Errorf("holds %d while one read runs and one waits, want %d (the running read's only)", got, holds+1)
	}
	cancel() // as statement_timeout would
	if err := <-queued; !errors.Is(err, context.Canceled) {
		t.Fatalf("queued read after its context ended: %v", err)
	}
	if got := h.c.Admission("default")["peek"]; got != (AdmissionState{Running: 1}) {
		t.Errorf("admission after the timeout: %+v, want one running, none queued", got)
	}
	if got := admissionMetric(t, m, "tandem_controller_read_admission_abandoned_total", readPeek); got != 1 {
		t.Errorf("abandoned counter %v, want 1", got)
	}
	third := make(chan error, 1)
	go func() { third <- h.read(context.Background(), readPeek) }()
	h.eventually("third read queued", func() bool { return h.c.Admission("default")["peek"].Queued == 1 })
	h.answerOne(f)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	h.eventually("third read admitted", func() bool { p, _ := f.peaks(); return p == 1 })
	h.answerOne(f)
	if err := <-third; err != nil {
		t.Fatal(err)
	}
	if _, maxPending := f.peaks(); maxPending != 1 {
		t.Errorf("%d reads pending at once at the replica, want 1", maxPending)
	}
	if got := h.c.OutstandingReadHolds(); got != holds {
		t.Errorf("holds %d after every read, want %d", got, holds)
	}
}

// TestAdmissionRaisedLimitAdmitsWaiting: raising the bound admits queued
// reads at once; 0 turns it off.
func TestAdmissionRaisedLimitAdmitsWaiting(t *testing.T) {
	h, f, _ := admissionHarness(t, 1, 1, 10)
	errs := make(chan error, 5)
	for range 5 {
		go func() { errs <- h.read(context.Background(), readPeek) }()
	}
	h.eventually("one running", func() bool { return h.c.Admission("default")["peek"] == AdmissionState{Running: 1, Queued: 4} })
	for _, step := range []struct {
		limit   string
		running int
	}{{"3", 3}, {"0", 5}} {
		h.c.SetParameter(ParamMaxConcurrentPeeks, step.limit)
		h.eventually(fmt.Sprintf("%d pending after the limit became %s", step.running, step.limit), func() bool {
			p, _ := f.peaks()
			return p == step.running
		})
	}
	for range 5 {
		h.answerOne(f)
	}
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
