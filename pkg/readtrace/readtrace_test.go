package readtrace

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRecordObservesEachStageOnce: stages added twice are observed once
// with their sum; stages never added are not observed; a context without
// a trace records nothing.
func TestRecordObservesEachStageOnce(t *testing.T) {
	Observe(context.Background(), Planning, time.Now()) // no trace: nothing
	tr := New()
	ctx := With(context.Background(), tr)
	tr.Add(Controller, time.Millisecond)
	tr.Add(Controller, 2*time.Millisecond)
	Observe(ctx, Replica, time.Now())
	if !tr.IsRead() {
		t.Fatal("a trace with a replica stage is a read")
	}
	if _, ok := tr.Answered(); !ok {
		t.Error("the replica stage sets the answer time")
	}
	reg := prometheus.NewRegistry()
	h := NewHistogram(reg)
	h.Record(tr)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	sums := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				counts[l.GetValue()] = m.GetHistogram().GetSampleCount()
				sums[l.GetValue()] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	for _, s := range Stages() {
		want := uint64(0)
		if s == Controller || s == Replica {
			want = 1
		}
		if counts[s.String()] != want {
			t.Errorf("stage %s observed %d times, want %d", s, counts[s.String()], want)
		}
	}
	if sums["controller"] != 0.003 {
		t.Errorf("controller stage sum %v, want 0.003 (both additions)", sums["controller"])
	}
}
