package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestShareOver(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	c := func(m, i float64) map[string]float64 { return map[string]float64{"maintenance": m, "interactive": i} }
	// quiet [0,10), churn [10,20), quiet [20,30), churn [30,40)
	scrapes := []routedScrape{
		{at: at(0), counts: c(5, 100)}, // earlier peeks (setup, capacity) are not in any phase
		{at: at(10), counts: c(5, 190)},
		{at: at(20), counts: c(65, 210)},
		{at: at(30), counts: c(65, 300)},
		{at: at(40), counts: c(105, 320)},
	}
	quiet := []phase{{"quiet", at(0), at(10)}, {"quiet", at(20), at(30)}}
	churn := []phase{{"churn", at(10), at(20)}, {"churn", at(30), at(40)}}
	tests := []struct {
		name                   string
		scrapes                []routedScrape
		phases                 []phase
		maint, inter, fraction float64
		noFraction             bool
		wantErr                string
	}{
		{name: "quiet phases: all interactive", scrapes: scrapes, phases: quiet, maint: 0, inter: 180, fraction: 1},
		{name: "churn phases summed", scrapes: scrapes, phases: churn, maint: 100, inter: 40, fraction: 40.0 / 140},
		{name: "one phase", scrapes: scrapes, phases: churn[:1], maint: 60, inter: 20, fraction: 0.25},
		{name: "no peeks: no fraction", scrapes: []routedScrape{{at: at(0), counts: c(3, 3)}, {at: at(10), counts: c(3, 3)}}, phases: quiet[:1], noFraction: true},
		{name: "a role first seen at the end", scrapes: []routedScrape{{at: at(0), counts: map[string]float64{"maintenance": 2}}, {at: at(10), counts: c(2, 8)}}, phases: quiet[:1], inter: 8, fraction: 1},
		{name: "missing boundary", scrapes: scrapes[:3], phases: churn, wantErr: "not read at both ends"},
		{name: "counter reset", scrapes: []routedScrape{{at: at(0), counts: c(50, 50)}, {at: at(10), counts: c(1, 60)}}, phases: quiet[:1], wantErr: "went backwards"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := shareOver(tc.scrapes, tc.phases)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("shareOver error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.counts["maintenance"] != tc.maint || s.counts["interactive"] != tc.inter {
				t.Errorf("counts = %v, want maintenance %v, interactive %v", s.counts, tc.maint, tc.inter)
			}
			f, ok := s.fraction("interactive")
			if ok == tc.noFraction {
				t.Fatalf("fraction ok = %v, want %v", ok, !tc.noFraction)
			}
			if ok && math.Abs(f-tc.fraction) > 1e-9 {
				t.Errorf("interactive fraction = %v, want %v", f, tc.fraction)
			}
			if m, ok := s.fraction("maintenance"); ok && math.Abs(m+f-1) > 1e-9 {
				t.Errorf("fractions %v + %v do not sum to 1", m, f)
			}
		})
	}
}

func TestParseCounterSampleRouted(t *testing.T) {
	tests := []struct {
		line  string
		role  string
		value float64
		ok    bool
	}{
		{`tandem_compute_peeks_routed_total{role="interactive"} 1234`, "interactive", 1234, true},
		{`tandem_compute_peeks_routed_total{role="maintenance"} 7e+06`, "maintenance", 7e6, true},
		{`# TYPE tandem_compute_peeks_routed_total counter`, "", 0, false},
		{`tandem_compute_peeks_routed_total_other{role="interactive"} 3`, "", 0, false},
		{`tandem_compute_peeks_routed_total{role="interactive"} NaNx`, "", 0, false},
	}
	for _, tc := range tests {
		r, v, ok := parseCounterSample(tc.line, routedMetric, "role")
		if r != tc.role || v != tc.value || ok != tc.ok {
			t.Errorf("parseCounterSample(%q) = (%q, %v, %v), want (%q, %v, %v)", tc.line, r, v, ok, tc.role, tc.value, tc.ok)
		}
	}
}

func TestScrapeAtBoundaries(t *testing.T) {
	var mu sync.Mutex
	served := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served++
		n := served
		mu.Unlock()
		// Each read finds 10 more interactive peeks than the last.
		fmt.Fprintf(w, "# TYPE %s counter\n%s{role=\"interactive\"} %d\n%s{role=\"maintenance\"} 1\n", routedMetric, routedMetric, 10*n, routedMetric)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	now := time.Now()
	at := func(ms int) time.Time { return now.Add(time.Duration(ms) * time.Millisecond) }
	// Adjacent phases share a boundary, which is read once.
	phases := []phase{{"quiet", at(20), at(60)}, {"churn", at(60), at(100)}, {"quiet", at(100), at(140)}}
	e := &env{stderr: io.Discard, began: now}
	scrapes, err := scrapeAtBoundaries(context.Background(), e, []string{addr}, phases)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	requests := served
	mu.Unlock()
	if len(scrapes) != 4 || requests != 4 {
		t.Fatalf("%d scrapes (%d requests), want 4: one per distinct boundary", len(scrapes), requests)
	}
	for i, s := range scrapes {
		if time.Now().Before(s.at) || s.late < 0 {
			t.Errorf("scrape %d at %v recorded before its boundary", i, s.at)
		}
		if i > 0 && !scrapes[i-1].at.Before(s.at) {
			t.Errorf("scrapes out of order: %v then %v", scrapes[i-1].at, s.at)
		}
	}
	share, err := shareOver(scrapes, phases[1:2])
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := share.fraction("interactive"); !ok || f != 1 || share.total != 10 {
		t.Errorf("churn share = %+v (fraction %v), want 10 peeks, all interactive", share, f)
	}

	// A run that ends before a boundary is an error, not a short read.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := scrapeAtBoundaries(ctx, e, []string{addr}, []phase{{"quiet", time.Now().Add(time.Hour), time.Now().Add(2 * time.Hour)}}); err == nil {
		t.Error("a cancelled run must fail the boundary reads")
	}
}
