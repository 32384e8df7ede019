package report

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tandemdb/tandem/hack/bench/internal/stats"
)

func latency(values []time.Duration, censored ...time.Duration) stats.Latency {
	var s stats.Series
	for _, v := range values {
		s.Record(v)
	}
	for _, c := range censored {
		s.RecordCensored(c)
	}
	return s.Summary()
}

func isolationReport() *Report {
	ms := time.Millisecond
	return &Report{
		Scenario: "isolation",
		Quick:    true,
		Machine:  "2 CPUs",
		Arms: []*Arm{
			NewArm("solo").
				Latency("introspection", latency([]time.Duration{2 * ms, 3 * ms}, 9*time.Second)).
				Latency("point_read", latency([]time.Duration{ms, ms, 4 * ms})).
				Float("max_step_ms", 812.5).
				Float("utilization", 0.3),
			NewArm("two_runtime").
				Latency("introspection", latency([]time.Duration{2 * ms})).
				Latency("point_read", latency([]time.Duration{ms})).
				Float("max_step_ms", 790).
				Int("errors", 0),
		},
	}
}

// The issue fixes the JSON shape other tools read; this pins it.
func TestJSONShape(t *testing.T) {
	var buf bytes.Buffer
	if err := isolationReport().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	for _, k := range []string{"scenario", "quick", "machine", "arms"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("top level lacks %q", k)
		}
	}
	if doc["scenario"] != "isolation" || doc["quick"] != true {
		t.Errorf("scenario/quick = %v/%v", doc["scenario"], doc["quick"])
	}
	arms := doc["arms"].([]any)
	if len(arms) != 2 {
		t.Fatalf("%d arms, want 2", len(arms))
	}
	solo := arms[0].(map[string]any)
	if solo["name"] != "solo" {
		t.Errorf("first arm name %v", solo["name"])
	}
	intro := solo["introspection"].(map[string]any)
	want := []string{"p50_ms", "p99_ms", "max_ms", "count", "censored"}
	if len(intro) != len(want) {
		t.Errorf("latency metric %v, want exactly keys %v", intro, want)
	}
	if intro["censored"] != true || intro["max_ms"] != 9000.0 || intro["count"] != 3.0 {
		t.Errorf("introspection metric %v: want the 9 s cutoff as a censored max", intro)
	}
	if pr := solo["point_read"].(map[string]any); pr["censored"] != false {
		t.Errorf("point_read %v marked censored without any cutoff", pr)
	}
	// "name" first, then metrics in insertion order.
	raw := buf.String()
	order := []string{`"name": "solo"`, `"introspection"`, `"point_read"`, `"max_step_ms"`, `"utilization"`}
	last := -1
	for _, k := range order {
		i := strings.Index(raw, k)
		if i <= last {
			t.Fatalf("key %s out of order in\n%s", k, raw)
		}
		last = i
	}
}

func TestJSONRoundTrip(t *testing.T) {
	r := isolationReport()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := back.WriteJSON(&again); err != nil {
		t.Fatal(err)
	}
	if buf.String() != again.String() {
		t.Fatalf("round trip changed the document:\n%s\nvs\n%s", buf.String(), again.String())
	}
	if v, _ := back.Arms[1].Get("errors"); v != int64(0) {
		t.Errorf("integer metric came back as %T %v", v, v)
	}
}

func TestArmRejectsNameMetric(t *testing.T) {
	if _, err := json.Marshal(NewArm("x").Int("name", 1)); err == nil {
		t.Fatal("a metric called name would shadow the arm's name; want an error")
	}
	if _, err := json.Marshal(NewArm("")); err == nil {
		t.Fatal("an arm without a name must not be written")
	}
}

func TestMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := isolationReport().WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"| arm | introspection | point_read | max_step_ms | utilization | errors |",
		"| solo |",
		">=9000 (3), 1 censored", // a censored max is shown as a bound
		"| two_runtime |",
		"812", // scalar metric
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(strings.Split(out, "| two_runtime |")[1], ">=") {
		t.Errorf("uncensored arm shows a lower bound:\n%s", out)
	}
}

func TestMachineParsing(t *testing.T) {
	cpu, err := os.Open("testdata/cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	mem, err := os.Open("testdata/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	got := describe(2, cpuModel(cpu), memTotalBytes(mem), "linux", "amd64")
	if want := "2 CPUs, AMD EPYC 7B13, 23.4 GiB RAM, linux/amd64"; got != want {
		t.Fatalf("machine %q, want %q", got, want)
	}
}
