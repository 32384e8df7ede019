package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandemdb/tandem/hack/bench/internal/load"
	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
)

func TestRunRejectsBadArguments(t *testing.T) {
	cases := [][]string{
		{},
		{"nosuch"},
		{"isolation", "extra"},
		{"--bogus-flag", "isolation"},
	}
	for _, args := range cases {
		var stderr bytes.Buffer
		err := run(context.Background(), args, io.Discard, &stderr)
		if !errors.Is(err, errUsage) {
			t.Errorf("run(%q) = %v, want a usage error before anything starts", args, err)
		}
	}
}

func TestWriteResult(t *testing.T) {
	dir := t.TempDir()
	res := &result{
		report: &report.Report{Scenario: "demo", Machine: "m", Arms: []*report.Arm{report.NewArm("a").Int("n", 1)}},
		figures: []figure{{"cdf", func(w io.Writer) error {
			return plot.CDF(w, "demo", []plot.Series{{Name: "a", Points: []plot.Point{{Ms: 1}}}})
		}}},
	}
	if err := writeResult(dir, "demo", res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenario string
		Arms     []map[string]any
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Scenario != "demo" || doc.Arms[0]["name"] != "a" {
		t.Fatalf("demo.json = %s (%v)", b, err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "demo-cdf.svg"))
	if err != nil || !strings.HasPrefix(string(svg), "<svg") {
		t.Fatalf("demo-cdf.svg: %v %q", err, svg)
	}
	res.figures = append(res.figures, res.figures[0])
	if err := writeResult(dir, "demo", res); err == nil {
		t.Fatal("duplicate figure names must be refused, not overwrite each other")
	}
}

func TestPhaseSelection(t *testing.T) {
	t0 := time.Unix(100, 0)
	churn := []phase{{"churn", t0.Add(10 * time.Second), t0.Add(20 * time.Second)}}
	samples := []load.Sample{
		{Scheduled: t0.Add(5 * time.Second), Latency: time.Millisecond}, // quiet
		{Scheduled: t0.Add(10 * time.Second), Latency: 2 * time.Second}, // churn start
		{Scheduled: t0.Add(19 * time.Second), Latency: 3 * time.Second, Censored: true},
		{Scheduled: t0.Add(20 * time.Second), Latency: time.Millisecond}, // end is exclusive
	}
	c := load.Collect(samples, inPhases(churn))
	got := c.Latency.Summary()
	if got.Count != 2 || !got.Censored || got.MaxMs != 3000 {
		t.Fatalf("churn summary %+v, want the two churn arrivals with the censored one as a bound", got)
	}
	lags := []timedLag{{t0, time.Second}, {t0.Add(15 * time.Second), 2 * time.Second}}
	if l := lagSummary(lags, churn); l.Count != 1 || l.MaxMs != 2000 {
		t.Fatalf("lag summary %+v, want only the observation inside the churn phase", l)
	}
}

func TestPointsSkipFailures(t *testing.T) {
	t0 := time.Unix(0, 0)
	pts := points([]load.Sample{
		{Scheduled: t0.Add(time.Second), Latency: 5 * time.Millisecond},
		{Scheduled: t0.Add(2 * time.Second), Latency: time.Millisecond, Err: errors.New("boom")},
		{Scheduled: t0.Add(3 * time.Second), Latency: time.Second, Censored: true},
	}, t0)
	if len(pts) != 2 || pts[0].T != 1 || pts[0].Ms != 5 || !pts[1].Censored {
		t.Fatalf("points %+v: want the success and the censored bound, not the failure", pts)
	}
}

func TestWatchWriter(t *testing.T) {
	var w watchWriter
	ch := w.await("\t7\t42\t")
	// A line split across writes, after an unrelated one.
	for _, chunk := range []string{"1795\t1\t7\t41\t100\n17", "96\t1\t7\t4", "2\t101\n"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-ch:
	default:
		t.Fatal("the awaited row arrived but was not signalled")
	}
	ch = w.await("\t8\t1\t")
	w.Write([]byte("1797\t1\t18\t1\t5\n"))
	select {
	case <-ch:
		t.Fatal("a row for group 18 must not match group 8")
	default:
	}
}

func TestParseVmRSS(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"Name:\treplica\nVmPeak:\t  900 kB\nVmRSS:\t  123456 kB\n", 123456 * 1024, true},
		{"Name:\tkthread\n", 0, false},
		{"VmRSS:\t  12x kB\n", 0, false},
	}
	for _, tc := range cases {
		got, err := parseVmRSS(strings.NewReader(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseVmRSS(%q) = %d, %v; want %d (ok=%v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
