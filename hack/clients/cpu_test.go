package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestParseStatCPU: the CPU fields are counted after the command name,
// which may hold spaces and parentheses; children adds cutime and cstime.
func TestParseStatCPU(t *testing.T) {
	stat := "4242 (post gres) (x)) S 1 4242 4242 0 -1 4194560 900 0 0 0 120 30 7 5 20 0 1 0 100 1000 10 18446744073709551615\n"
	for _, tc := range []struct {
		children bool
		want     int64
	}{{false, 150}, {true, 162}} {
		got, err := parseStatCPU(stat, tc.children)
		if err != nil || got != tc.want {
			t.Errorf("parseStatCPU(children %v) = %d, %v; want %d", tc.children, got, err, tc.want)
		}
	}
	for _, bad := range []string{"4242 no name", "1 (a) S 1 2 3", "1 (a) S 1 2 3 4 5 6 7 8 9 10 x 30 7 5"} {
		if _, err := parseStatCPU(bad, false); err == nil {
			t.Errorf("parseStatCPU(%q): no error", bad)
		}
	}
}

// TestCPUPerTransaction: deltas are taken process by process and printed
// per transaction, with their sum.
func TestCPUPerTransaction(t *testing.T) {
	before := []procCPU{{"controller", 2 * time.Second}, {"replica", time.Second}}
	after := []procCPU{{"controller", 5 * time.Second}, {"replica", 3 * time.Second}}
	d := cpuDeltas(before, after)
	if d[0].cpu != 3*time.Second || d[1].cpu != 2*time.Second {
		t.Fatalf("deltas %v", d)
	}
	res := &benchResult{run: pgbenchRun{Transactions: 100000}, cpu: append(d, procCPU{"pgbench", time.Second})}
	var b bytes.Buffer
	printCPU(&b, "Tandem", res)
	for _, want := range []string{"controller 30.0 us", "replica 20.0 us", "pgbench 10.0 us", "total 60.0 us"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
