package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
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

// TestMaxStepAttribution: GET /api/max-step names what took longest in
// each runtime's longest step (here an operator of a hydrating index) and
// POST /api/reset-max-step answers with it before forgetting it.
func TestMaxStepAttribution(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, im := newMetrics(reg, "maintenance"), newMetrics(reg, "interactive")
	mux := internalMux(reg, &atomic.Bool{}, m.maxStep, im.maxStep)
	step := func(rm runtimeMetrics, p runtime.StepProfile) {
		rm.WorkerStep(p.Worker, p.Total)
		rm.StepProfile(p)
	}
	step(runtimeMetrics{m}, runtime.StepProfile{Worker: 1, Total: 300 * time.Millisecond, Operators: 290 * time.Millisecond,
		Longest: dataflow.PartOperator, LongestTime: 280 * time.Millisecond, Dataflow: "big_idx", DataflowSeq: 7, Operator: "Arrange export u20#1", OperatorIndex: 2})
	step(runtimeMetrics{m}, runtime.StepProfile{Worker: 0, Total: 20 * time.Millisecond, Longest: dataflow.PartHook, LongestTime: 19 * time.Millisecond})
	step(runtimeMetrics{im}, runtime.StepProfile{Worker: 0, Total: 4 * time.Millisecond, Longest: dataflow.PartCommand, LongestTime: 3 * time.Millisecond, Command: "build", Dataflow: "one-shot t1"})
	get := func(method, path string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s %s: status %d", method, path, rec.Code)
		}
		return rec.Body.String()
	}
	body := get(http.MethodGet, "/api/max-step")
	for _, want := range []string{
		`maintenance: max step 300ms: worker 1 step 300ms`,
		`longest operator "Arrange export u20#1" (#2, schedule 0) of dataflow "big_idx" (7) for 280ms`,
		`interactive: max step 4ms: `, `longest command build of dataflow "one-shot t1" (0) for 3ms`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /api/max-step:\n%s\nwant %q", body, want)
		}
	}
	if reset := get(http.MethodPost, "/api/reset-max-step"); !strings.Contains(reset, `"Arrange export u20#1"`) {
		t.Errorf("POST /api/reset-max-step answered %q, want the maxima it reset", reset)
	}
	if body := get(http.MethodGet, "/api/max-step"); !strings.Contains(body, "maintenance: max step 0s (not attributed)") {
		t.Errorf("after reset:\n%s", body)
	}
}
