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

	"github.com/tandemdb/tandem/pkg/compute/sink"
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
	sinkMetrics{m}.AppendFinished(sink.AppendSucceeded, 3, time.Millisecond)
	sinkMetrics{m}.ShardRead(sink.ReadAtStart)
	sinkMetrics{m}.SinkState("u5", 40*time.Millisecond, 7)
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
		"tandem_compute_sink_appends_total", "tandem_compute_sink_appended_updates_total",
		"tandem_compute_sink_append_duration_seconds", "tandem_compute_sink_shard_reads_total",
		"tandem_compute_sink_write_lag_ms", "tandem_compute_sink_persisted_rows",
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
	// Profiles are not on the internal port (--pprof-listen-addr serves
	// them on loopback only).
	if code, _ := get("/debug/pprof/"); code != 404 {
		t.Errorf("/debug/pprof/ on the internal port: %d, want 404", code)
	}
}

// TestSinkSeries checks the sink series a scrape shows, with their labels
// and values, and that a closed sink's per-sink series are deleted while
// the counters stay.
func TestSinkSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg, "maintenance")
	s := sinkMetrics{m}
	s.AppendFinished(sink.AppendSucceeded, 3, 2*time.Millisecond)
	s.AppendFinished(sink.AppendLostRace, 5, time.Millisecond)
	s.AppendFinished(sink.AppendFailed, 5, time.Millisecond)
	s.ShardRead(sink.ReadAtStart)
	s.ShardRead(sink.ReadAfterLostRace)
	s.SinkState("u5", 1500*time.Millisecond, 7)
	s.SinkState("u6", 0, 2)
	common := []string{
		`tandem_compute_sink_appended_updates_total{role="maintenance"} 3`,
		`tandem_compute_sink_appends_total{result="appended",role="maintenance"} 1`,
		`tandem_compute_sink_appends_total{result="error",role="maintenance"} 1`,
		`tandem_compute_sink_appends_total{result="lost_race",role="maintenance"} 1`,
		`tandem_compute_sink_append_duration_seconds_count{role="maintenance"} 3`,
		`tandem_compute_sink_append_duration_seconds_sum{role="maintenance"} 0.004`,
		`tandem_compute_sink_shard_reads_total{reason="lost_race",role="maintenance"} 1`,
		`tandem_compute_sink_shard_reads_total{reason="start",role="maintenance"} 1`,
		`tandem_compute_sink_persisted_rows{role="maintenance",sink="u6"} 2`,
		`tandem_compute_sink_write_lag_ms{role="maintenance",sink="u6"} 0`,
	}
	u5 := []string{
		`tandem_compute_sink_persisted_rows{role="maintenance",sink="u5"} 7`,
		`tandem_compute_sink_write_lag_ms{role="maintenance",sink="u5"} 1500`,
	}
	if diff := diffSeries(sinkSeries(t, reg), append(common, u5...)); diff != "" {
		t.Fatal(diff)
	}
	s.SinkClosed("u5")
	if diff := diffSeries(sinkSeries(t, reg), common); diff != "" {
		t.Fatalf("after u5 closed: %s", diff)
	}
	// Every sink series has HELP text.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "tandem_compute_sink_") && mf.GetHelp() == "" {
			t.Errorf("%s has no HELP", mf.GetName())
		}
	}
}

// sinkSeries scrapes reg in the text format and returns its
// tandem_compute_sink_ samples (histogram buckets left out).
func sinkSeries(t *testing.T, reg *prometheus.Registry) map[string]bool {
	t.Helper()
	rec := httptest.NewRecorder()
	internalMux(reg, &atomic.Bool{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	out := map[string]bool{}
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "tandem_compute_sink_") && !strings.Contains(line, "_bucket{") {
			out[line] = true
		}
	}
	return out
}

func diffSeries(got map[string]bool, want []string) string {
	var diff []string
	for _, w := range want {
		if !got[w] {
			diff = append(diff, "missing: "+w)
		}
		delete(got, w)
	}
	for g := range got {
		diff = append(diff, "unexpected: "+g)
	}
	return strings.Join(diff, "\n")
}
