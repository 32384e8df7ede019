package main

import (
	"testing"

	"github.com/tandemdb/tandem/hack/bench/internal/stats"
)

// TestUpdateLineMatchesTheInsertion: the update-lag watch waits for the
// row that carries a group's new count, not for the retraction of the old
// one, nor for another group whose digits contain it.
func TestUpdateLineMatchesTheInsertion(t *testing.T) {
	cases := []struct {
		line string
		want bool
	}{
		{"1796\t1\t3\t101\n", true},
		{"1796\t-1\t3\t100\n", false}, // the old count's retraction
		{"1796\t1\t3\t1010\n", false}, // a count that starts with the same digits
		{"1796\t1\t13\t101\n", false}, // another group
		{"1\t1\t3\t101\n", true},      // a small timestamp is not taken for the diff
	}
	for _, tc := range cases {
		var w watchWriter
		ch := w.await(updateLine(3, 101))
		if _, err := w.Write([]byte(tc.line)); err != nil {
			t.Fatal(err)
		}
		got := false
		select {
		case <-ch:
			got = true
		default:
		}
		if got != tc.want {
			t.Errorf("line %q matched = %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestLatencyRatio(t *testing.T) {
	if r, ok := latencyRatio(stats.Latency{P50Ms: 30, Count: 5}, stats.Latency{P50Ms: 10, Count: 5}); !ok || r != 3 {
		t.Fatalf("ratio = %v, %v; want 3", r, ok)
	}
	for _, b := range []stats.Latency{{}, {P50Ms: 0, Count: 3}} {
		if _, ok := latencyRatio(stats.Latency{P50Ms: 30, Count: 5}, b); ok {
			t.Errorf("ratio over %+v reported; a phase without samples has no ratio", b)
		}
	}
	if _, ok := latencyRatio(stats.Latency{}, stats.Latency{P50Ms: 10, Count: 5}); ok {
		t.Error("ratio of an empty phase reported")
	}
}

func TestSubscribeScenarioIsRegistered(t *testing.T) {
	if scenarios()["subscribe"] == nil {
		t.Fatal("go run ./hack/bench subscribe must run the subscribe scenario")
	}
}
