package main

import (
	"errors"
	"testing"
	"time"

	"github.com/tandemdb/tandem/hack/bench/internal/load"
)

func TestCountVictims(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	quiet := phase{"quiet", at(0), at(10)}
	injections := []phase{{"skewed", at(20), at(21)}, {"skewed", at(30), at(30.5)}}
	threshold := ms(10)
	tests := []struct {
		name        string
		sample      load.Sample
		wantVictims int
		wantQuiet   int
	}{
		{"fast during injection", load.Sample{Scheduled: at(20.2), Latency: ms(5)}, 0, 0},
		{"slow during injection", load.Sample{Scheduled: at(20.2), Latency: ms(300)}, 1, 0},
		{"at the threshold is not a victim", load.Sample{Scheduled: at(20.2), Latency: ms(10)}, 0, 0},
		{"scheduled before, outstanding into it", load.Sample{Scheduled: at(19.9), Latency: ms(200)}, 1, 0},
		{"slow but finished before it", load.Sample{Scheduled: at(19.0), Latency: ms(200)}, 0, 0},
		{"slow after it ended", load.Sample{Scheduled: at(21.1), Latency: ms(200)}, 0, 0},
		{"second injection", load.Sample{Scheduled: at(30.1), Latency: ms(50)}, 1, 0},
		{"slow in quiet is the noise floor", load.Sample{Scheduled: at(5), Latency: ms(50)}, 0, 1},
		{"censored lower bound above threshold", load.Sample{Scheduled: at(20.5), Latency: ms(40), Censored: true}, 1, 0},
		{"failed request is not a latency", load.Sample{Scheduled: at(20.5), Latency: ms(400), Err: errors.New("boom")}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, q := countVictims([]load.Sample{tc.sample}, injections, quiet, threshold)
			if v != tc.wantVictims || q != tc.wantQuiet {
				t.Errorf("countVictims = (%d, %d), want (%d, %d)", v, q, tc.wantVictims, tc.wantQuiet)
			}
		})
	}
}

func TestParseWalkSample(t *testing.T) {
	tests := []struct {
		line      string
		placement string
		value     float64
		ok        bool
	}{
		{`tandem_compute_peek_walks_total{placement="inline"} 12`, "inline", 12, true},
		{`tandem_compute_peek_walks_total{placement="offloaded",role="maintenance"} 3`, "offloaded", 3, true},
		{`tandem_compute_peek_walks_total{role="maintenance",placement="offloaded"} 4 1700000000`, "offloaded", 4, true},
		{`# HELP tandem_compute_peek_walks_total Index peek walks`, "", 0, false},
		{`tandem_compute_peek_walks_total{role="x"} 4`, "", 0, false},
		{`tandem_compute_worker_step_duration_seconds_count{role="x"} 4`, "", 0, false},
	}
	for _, tc := range tests {
		p, v, ok := parseWalkSample(tc.line)
		if p != tc.placement || v != tc.value || ok != tc.ok {
			t.Errorf("parseWalkSample(%q) = (%q, %v, %v), want (%q, %v, %v)", tc.line, p, v, ok, tc.placement, tc.value, tc.ok)
		}
	}
}

func TestLookupIndex(t *testing.T) {
	tests := []struct{ plan, want string }{
		{"Fast path: lookup of 1 key(s) in index u16 on u15\n  filter [(#0 = 1)]\n", "u16"},
		{"Fast path: scan of index u16 on u15\n", ""},
		{"", ""},
	}
	for _, tc := range tests {
		if got := lookupIndex(tc.plan); got != tc.want {
			t.Errorf("lookupIndex(%q) = %q, want %q", tc.plan, got, tc.want)
		}
	}
}
