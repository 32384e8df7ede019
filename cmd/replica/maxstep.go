package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

// maxStep is the longest worker step of one runtime since the last reset:
// the true maximum, which the step histogram's growing buckets (counted
// from process start) do not give. It is exported as
// tandem_compute_worker_max_step_seconds{role} and reset by
// POST /api/reset-max-step, so a benchmark reads the maximum of each of its
// phases. It also keeps that step's attribution (which operator, command
// or hook took longest in it), served by GET /api/max-step.
type maxStep struct {
	role string
	ns   atomic.Int64

	mu      sync.Mutex
	profile runtime.StepProfile // of the longest step, if profiled
	has     bool
}

func (s *maxStep) observe(d time.Duration) {
	for {
		cur := s.ns.Load()
		if int64(d) <= cur || s.ns.CompareAndSwap(cur, int64(d)) {
			return
		}
	}
}

// observeProfile records p as the longest step's attribution if its step is
// the longest so far. It runs after observe saw the same step, so a step
// equal to the maximum is the maximum; the cheap check keeps the lock off
// every other step.
func (s *maxStep) observeProfile(p runtime.StepProfile) {
	if int64(p.Total) < s.ns.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observe(p.Total)
	if int64(p.Total) >= s.ns.Load() {
		s.profile, s.has = p, true
	}
}

func (s *maxStep) seconds() float64 { return time.Duration(s.ns.Load()).Seconds() }

func (s *maxStep) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ns.Store(0)
	s.profile, s.has = runtime.StepProfile{}, false
}

// describe is one line: the role, the longest step and what took longest
// in it.
func (s *maxStep) describe() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := time.Duration(s.ns.Load())
	if !s.has || s.profile.Total != d {
		return fmt.Sprintf("%s: max step %v (not attributed)", s.role, d)
	}
	return fmt.Sprintf("%s: max step %v: %v", s.role, d, s.profile)
}

// describeAll describes every runtime's longest step, one line each.
func describeAll(ms []*maxStep) string {
	var b strings.Builder
	for _, m := range ms {
		if m != nil {
			b.WriteString(m.describe())
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// maxStepHandler serves GET /api/max-step: every runtime's longest step
// since the last reset and what took longest in it, as text.
func maxStepHandler(ms ...*maxStep) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "GET to read", http.StatusMethodNotAllowed)
			return
		}
		_, _ = w.Write([]byte(describeAll(ms)))
	}
}

// resetMaxStepHandler resets the maxima of every runtime of the process and
// answers with what they were (as GET /api/max-step would have).
func resetMaxStepHandler(ms ...*maxStep) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST to reset", http.StatusMethodNotAllowed)
			return
		}
		before := describeAll(ms)
		for _, m := range ms {
			if m != nil {
				m.reset()
			}
		}
		_, _ = w.Write([]byte("ok\n" + before))
	}
}
