package testparams

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
		ok   bool
	}{
		{"", map[string]string{}, true},
		{"enable_compute_interactive_dataflows=on", map[string]string{"enable_compute_interactive_dataflows": "on"}, true},
		{" A=1 , b = two ,", map[string]string{"a": "1", "b": "two"}, true},
		{"a", nil, false},
		{"=1", nil, false},
		{"a=", nil, false},
		{"a=1,a=2", nil, false},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if (err == nil) != tt.ok || (tt.ok && !maps.Equal(got, tt.want)) {
			t.Errorf("Parse(%q) = %v, %v; want %v (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestInteractiveAndFlag(t *testing.T) {
	tests := []struct {
		env         string
		interactive bool
		flag        []string
	}{
		{"", false, nil},
		{"peek_walk_mode=inline", false, []string{"--system-parameter-default=peek_walk_mode=inline"}},
		{"enable_compute_interactive_dataflows=off", false, []string{"--system-parameter-default=enable_compute_interactive_dataflows=off"}},
		{"enable_compute_interactive_dataflows=yes", true, []string{"--system-parameter-default=enable_compute_interactive_dataflows=on"}},
		{"peek_routing=maintenance,enable_compute_interactive_dataflows=TRUE", true,
			[]string{"--system-parameter-default=enable_compute_interactive_dataflows=on,peek_routing=maintenance"}},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(EnvVar, tt.env)
			if got := Interactive(t); got != tt.interactive {
				t.Errorf("Interactive = %v, want %v", got, tt.interactive)
			}
			if got := Flag(t); !slices.Equal(got, tt.flag) {
				t.Errorf("Flag = %q, want %q", got, tt.flag)
			}
			want := map[bool]string{true: "on", false: "off"}[tt.interactive]
			if got := Expected(t); got != want {
				t.Errorf("Expected = %q, want %q", got, want)
			}
		})
	}
}

func TestParseRuntimes(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]float64
	}{
		{"solo", "# HELP x y\n" +
			"go_goroutines 12\n" +
			"tandem_compute_worker_step_duration_seconds_bucket{le=\"0.1\"} 3\n" +
			"tandem_compute_worker_step_duration_seconds_count 3\n" +
			"tandem_compute_runtime_peek_duration_seconds_count{result=\"rows\"} 2\n" +
			"tandem_compute_runtime_peek_duration_seconds_count{result=\"error\"} 1\n",
			map[string]float64{"solo": 3}},
		{"two runtimes", "go_goroutines 12\n" +
			"tandem_compute_worker_step_duration_seconds_count{role=\"maintenance\"} 40\n" +
			"tandem_compute_worker_step_duration_seconds_count{role=\"interactive\"} 9\n" +
			"tandem_compute_runtime_peek_duration_seconds_count{result=\"rows\",role=\"interactive\"} 5\n" +
			"tandem_compute_peek_duration_seconds_count{result=\"rows\",role=\"maintenance\"} 7\n",
			map[string]float64{"maintenance": 0, "interactive": 5}},
		{"no runtime", "go_goroutines 1\n", map[string]float64{}},
	}
	for _, tt := range tests {
		got, err := parseRuntimes(strings.NewReader(tt.text))
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("%s: runtimes %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	if _, err := parseRuntimes(strings.NewReader("tandem_compute_runtime_peek_duration_seconds_count{role=\"interactive\"} x\n")); err == nil {
		t.Error("a malformed sample was accepted")
	}
}

func TestRuntimesScrapesMetrics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, `tandem_compute_worker_step_duration_seconds_count{role="interactive"} 1`)
	}))
	defer srv.Close()
	got, err := Runtimes(context.Background(), strings.TrimPrefix(srv.URL, "http://"))
	if err != nil || !maps.Equal(got, map[string]float64{"interactive": 0}) {
		t.Fatalf("Runtimes = %v, %v", got, err)
	}
}
