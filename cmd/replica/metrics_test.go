package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestEverySeriesHasRole(t *testing.T) {
	for _, role := range []string{"solo", "maintenance", "interactive"} {
		t.Run(role, func(t *testing.T) { checkSeriesRole(t, role) })
	}
}

// checkSeriesRole checks that every compute series of a runtime carries its
// role label, except Solo's, which carry none.
func checkSeriesRole(t *testing.T, role string) {
	reg := prometheus.NewRegistry()
	registerProcessCollectors(reg)
	m := newMetrics(reg, role)
	want := role
	if role == "solo" {
		want = ""
	}
	serverMetrics{m}.CommandReceived("peek")
	serverMetrics{m}.PeekFinished("rows", time.Millisecond)
	serverMetrics{m}.Reconciled(1, 2, 3)
	serverMetrics{m}.Collections(4, 5)
	runtimeMetrics{m}.WorkerStep(0, time.Microsecond)
	runtimeMetrics{m}.Command("peek")
	runtimeMetrics{m}.PeekFinished("rows", time.Millisecond)
	runtimeMetrics{m}.ArrangementMaintenance(0, 250*time.Millisecond)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		seen[mf.GetName()] = true
		for _, mt := range mf.GetMetric() {
			role := ""
			for _, l := range mt.GetLabel() {
				if l.GetName() == "role" {
					role = l.GetValue()
				}
			}
			if strings.HasPrefix(mf.GetName(), "tandem_") && role != want {
				t.Errorf("%s has role %q, want %q", mf.GetName(), role, want)
			}
		}
	}
	for _, name := range []string{
		"tandem_compute_commands_total", "tandem_compute_worker_step_duration_seconds",
		"tandem_compute_peek_duration_seconds", "tandem_compute_collections",
		"tandem_compute_reconciliation_dataflows_total", "go_goroutines",
		"tandem_compute_arrangement_maintenance_seconds_total",
	} {
		if !seen[name] {
			t.Errorf("metric %s missing", name)
		}
	}
}

func TestInternalEndpoints(t *testing.T) {
	reg := prometheus.NewRegistry()
	newMetrics(reg, "maintenance")
	var ready atomic.Bool
	srv := httptest.NewServer(internalMux(reg, &ready))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz %d", code)
	}
	if code, _ := get("/readyz"); code != 503 {
		t.Errorf("/readyz before ready: %d", code)
	}
	ready.Store(true)
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz when ready: %d", code)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, `tandem_compute_collections{hydration="hydrated",role="maintenance"}`) {
		t.Errorf("/metrics %d", code)
	}
	if code, _ := get("/debug/pprof/"); code != 200 {
		t.Errorf("/debug/pprof/ %d", code)
	}
}
