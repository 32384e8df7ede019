package main

import (
	"net/http"
	"sync/atomic"
	"time"
)

// maxStep is the longest worker step of one runtime since the last reset:
// the true maximum, which the step histogram's growing buckets (counted
// from process start) do not give. It is exported as
// tandem_compute_worker_max_step_seconds{role} and reset by
// POST /api/reset-max-step, so a benchmark reads the maximum of each of its
// phases.
type maxStep struct{ ns atomic.Int64 }

func (s *maxStep) observe(d time.Duration) {
	for {
		cur := s.ns.Load()
		if int64(d) <= cur || s.ns.CompareAndSwap(cur, int64(d)) {
			return
		}
	}
}

func (s *maxStep) seconds() float64 { return time.Duration(s.ns.Load()).Seconds() }

func (s *maxStep) reset() { s.ns.Store(0) }

// resetMaxStepHandler resets the maxima of every runtime of the process.
func resetMaxStepHandler(ms ...*maxStep) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST to reset", http.StatusMethodNotAllowed)
			return
		}
		for _, m := range ms {
			if m != nil {
				m.reset()
			}
		}
		_, _ = w.Write([]byte("ok\n"))
	}
}
