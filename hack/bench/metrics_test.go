package main

import (
	"strings"
	"testing"
	"time"
)

func TestMaxStepByRole(t *testing.T) {
	text := `# HELP tandem_compute_worker_step_duration_seconds Duration of one worker run-loop step.
# TYPE tandem_compute_worker_step_duration_seconds histogram
tandem_compute_worker_step_duration_seconds_bucket{le="0.001",role="maintenance"} 10
tandem_compute_worker_step_duration_seconds_bucket{le="0.1",role="maintenance"} 12
tandem_compute_worker_step_duration_seconds_bucket{le="2.5",role="maintenance"} 13
tandem_compute_worker_step_duration_seconds_bucket{le="+Inf",role="maintenance"} 13
tandem_compute_worker_step_duration_seconds_sum{role="maintenance"} 1.7
tandem_compute_worker_step_duration_seconds_count{role="maintenance"} 13
tandem_compute_worker_step_duration_seconds_bucket{le="0.001",role="interactive"} 5
tandem_compute_worker_step_duration_seconds_bucket{le="0.1",role="interactive"} 5
tandem_compute_worker_step_duration_seconds_bucket{le="+Inf",role="interactive"} 5
tandem_compute_worker_step_duration_seconds_bucket{le="0.001",role="idle"} 0
tandem_compute_worker_step_duration_seconds_bucket{le="+Inf",role="idle"} 0
other_metric_bucket{le="1",role="maintenance"} 99
`
	got, err := maxStepByRole(strings.NewReader(text), stepMetric)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{"maintenance": 2500 * time.Millisecond, "interactive": time.Millisecond}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for role, d := range want {
		if got[role] != d {
			t.Errorf("role %s: max step %v, want %v", role, got[role], d)
		}
	}
}

func TestMaxStepByRoleRejectsGarbage(t *testing.T) {
	_, err := maxStepByRole(strings.NewReader(stepMetric+`_bucket{le="x",role="solo"} 3`+"\n"), stepMetric)
	if err == nil {
		t.Fatal("a non-numeric bucket bound must be an error, not a silent zero")
	}
}

func TestGaugeByRole(t *testing.T) {
	text := `# HELP tandem_compute_worker_max_step_seconds Longest step.
# TYPE tandem_compute_worker_max_step_seconds gauge
tandem_compute_worker_max_step_seconds{role="maintenance"} 1.25
tandem_compute_worker_max_step_seconds{role="interactive"} 0.004
tandem_compute_worker_max_step_seconds_other{role="maintenance"} 99
`
	got, err := gaugeByRole(strings.NewReader(text), maxStepGauge)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["maintenance"] != 1.25 || got["interactive"] != 0.004 {
		t.Fatalf("got %v", got)
	}
	solo, err := gaugeByRole(strings.NewReader(maxStepGauge+" 0.5\n"), maxStepGauge)
	if err != nil || solo[""] != 0.5 {
		t.Fatalf("a series without a role: %v %v", solo, err)
	}
	if _, err := gaugeByRole(strings.NewReader(maxStepGauge+`{role="solo"} x`+"\n"), maxStepGauge); err == nil {
		t.Fatal("a non-numeric value must be an error")
	}
}
