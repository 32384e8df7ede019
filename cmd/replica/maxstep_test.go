package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestMaxStepGaugeAndReset checks tandem_compute_worker_max_step_seconds:
// the true longest step per role (not a histogram bucket), reset for every
// runtime of the process by POST /api/reset-max-step and only by POST.
func TestMaxStepGaugeAndReset(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, im := newMetrics(reg, "maintenance"), newMetrics(reg, "interactive")
	mux := internalMux(reg, &atomic.Bool{}, m.maxStep, im.maxStep)
	scrape := func() map[string]string {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		out := map[string]string{}
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			if name, val, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "tandem_compute_worker_max_step_seconds{") {
				out[name] = val
			}
		}
		return out
	}
	for _, d := range []time.Duration{3 * time.Millisecond, 1700 * time.Millisecond, 40 * time.Millisecond} {
		runtimeMetrics{m}.WorkerStep(0, d)
	}
	runtimeMetrics{im}.WorkerStep(1, 2*time.Millisecond)
	got := scrape()
	if got[`tandem_compute_worker_max_step_seconds{role="maintenance"}`] != "1.7" || got[`tandem_compute_worker_max_step_seconds{role="interactive"}`] != "0.002" {
		t.Fatalf("max steps %v, want maintenance 1.7 and interactive 0.002", got)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/reset-max-step", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET reset: status %d, want 405", rec.Code)
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/reset-max-step", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("POST reset: status %d", rec.Code)
	}
	runtimeMetrics{m}.WorkerStep(0, 5*time.Millisecond)
	got = scrape()
	if got[`tandem_compute_worker_max_step_seconds{role="maintenance"}`] != "0.005" || got[`tandem_compute_worker_max_step_seconds{role="interactive"}`] != "0" {
		t.Fatalf("max steps after reset %v, want maintenance 0.005 and interactive 0", got)
	}
}
