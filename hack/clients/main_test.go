package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParsePgbench(t *testing.T) {
	for _, tc := range []struct {
		file    string
		want    pgbenchRun
		wantErr bool
	}{
		{file: "pgbench-select.txt", want: pgbenchRun{Transactions: 742, Failed: 0, LatencyMs: 160.764, TPS: 24.881125}},
		{file: "pgbench-failed.txt", want: pgbenchRun{Transactions: 32084, Failed: 3, LatencyMs: 3.740, TPS: 1069.619481}},
		{file: "pgbench-aborted.txt", wantErr: true},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := parsePgbench(string(b))
		if (err != nil) != tc.wantErr {
			t.Fatalf("%s: error %v, want error %v", tc.file, err, tc.wantErr)
		}
		if !tc.wantErr && got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.file, got, tc.want)
		}
	}
}

func TestParseLoadAvg(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    loadAvg
		wantErr bool
	}{
		{in: "31.48 28.95 18.43 9/1203 28711\n", want: loadAvg{31.48, 28.95, 18.43}},
		{in: "0.00 0.01 0.05 1/100 1", want: loadAvg{0, 0.01, 0.05}},
		{in: "1.0 2.0", wantErr: true},
		{in: "x 1 2 1/1 1", wantErr: true},
	} {
		got, err := parseLoadAvg(tc.in)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("parseLoadAvg(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestStageDeltas: the mean per read of each stage is taken over the reads
// between the two scrapes only, in readtrace's stage order.
func TestStageDeltas(t *testing.T) {
	before := parseStages(`# HELP tandem_read_stage_seconds ...
tandem_read_stage_seconds_bucket{stage="replica",le="1e-05"} 0
tandem_read_stage_seconds_sum{stage="replica"} 1.5
tandem_read_stage_seconds_count{stage="replica"} 10
tandem_read_stage_seconds_sum{stage="pgwire"} 0.01
tandem_read_stage_seconds_count{stage="pgwire"} 10
tandem_compute_read_stage_seconds_sum{stage="pgwire"} 99
tandem_compute_read_stage_seconds_count{stage="pgwire"} 1
`, "tandem_read_stage_seconds")
	after := parseStages(`tandem_read_stage_seconds_sum{stage="replica"} 3.5
tandem_read_stage_seconds_count{stage="replica"} 110
tandem_read_stage_seconds_sum{stage="pgwire"} 0.11
tandem_read_stage_seconds_count{stage="pgwire"} 110
tandem_read_stage_seconds_sum{stage="planning"} 0
tandem_read_stage_seconds_count{stage="planning"} 0
`, "tandem_read_stage_seconds")
	got := stageDeltas(controllerStages, before, after)
	want := []stageTime{
		{stage: "pgwire", count: 100, mean: time.Millisecond},
		{stage: "planning", count: 0, mean: 0},
		{stage: "replica", count: 100, mean: 20 * time.Millisecond},
	}
	if len(got) != len(want) {
		t.Fatalf("stageDeltas = %+v, want %+v", got, want)
	}
	for i := range got {
		// Float sums: compare to the microsecond.
		if got[i].stage != want[i].stage || got[i].count != want[i].count || (got[i].mean-want[i].mean).Abs() > time.Microsecond {
			t.Errorf("stage %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestFlagValue(t *testing.T) {
	args := []string{"/bin/replica", "--controller-listen-addr=127.0.0.1:1", "--internal-http-listen-addr=127.0.0.1:2", "--log-level", "info", ""}
	for _, tc := range []struct{ flag, want string }{
		{"--internal-http-listen-addr", "127.0.0.1:2"},
		{"--log-level", "info"},
		{"--internal-http", ""},
		{"--missing", ""},
	} {
		if got := flagValue(args, tc.flag); got != tc.want {
			t.Errorf("flagValue(%s) = %q, want %q", tc.flag, got, tc.want)
		}
	}
}

func TestParseDrivers(t *testing.T) {
	d, err := parseDrivers("python=/usr/bin/python3\nnode_path=/c/node-pg-8.23.1/node_modules\n")
	if err != nil || d.python != "/usr/bin/python3" || d.nodePath != "/c/node-pg-8.23.1/node_modules" {
		t.Errorf("parseDrivers = %+v, %v", d, err)
	}
	if _, err := parseDrivers("python=/usr/bin/python3\n"); err == nil {
		t.Error("parseDrivers without node_path: no error")
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"--duration=5s", "--scale=1", "--clients=2"}, os.Stderr)
	if err != nil || o.bench.duration != 5*time.Second || o.bench.scale != 1 || o.bench.clients != 2 {
		t.Errorf("parseFlags = %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"--duration=10ms"}, {"--scale=0"}, {"extra"}} {
		if _, err := parseFlags(bad, os.Stderr); err == nil {
			t.Errorf("parseFlags(%q): no error", bad)
		}
	}
}

func TestNotHydrated(t *testing.T) {
	for _, tc := range []struct {
		status  string
		want    int
		wantErr bool
	}{
		{status: `{"clusters":[{"name":"default","replicas":[{"name":"r1","connected":true,"hydrated":["u19"],"not_hydrated":["u21"]}]}]}`, want: 1},
		{status: `{"clusters":[{"replicas":[{"connected":true,"hydrated":["u19","u21"]}]},{"replicas":[{"connected":true,"not_hydrated":[]}]}]}`, want: 0},
		{status: `{"clusters":[{"replicas":[{"connected":false}]}]}`, wantErr: true},
		{status: `not json`, wantErr: true},
	} {
		got, err := notHydrated([]byte(tc.status))
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("notHydrated(%s) = %d, %v; want %d (error %v)", tc.status, got, err, tc.want, tc.wantErr)
		}
	}
}
