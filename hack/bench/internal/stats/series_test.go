package stats

import (
	"encoding/json"
	"testing"
	"time"
)

func TestSeriesSummaryCensoring(t *testing.T) {
	msd := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type want struct {
		p50, p99, max       float64
		count               uint64
		censored            bool
		p50LB, p99LB, maxLB bool
	}
	cases := []struct {
		name     string
		exact    []time.Duration
		censored []time.Duration
		want     want
	}{
		{
			name: "no censoring",
			exact: func() (v []time.Duration) {
				for i := 1; i <= 100; i++ {
					v = append(v, msd(i))
				}
				return
			}(),
			want: want{p50: 50, p99: 99, max: 100, count: 100},
		},
		{
			// A request cut off after 5 s dominates the max but is a bound:
			// the metric must say so rather than report 5000 ms as a latency.
			name: "one late cutoff above everything",
			exact: func() (v []time.Duration) {
				for i := 1; i <= 99; i++ {
					v = append(v, msd(i))
				}
				return
			}(),
			censored: []time.Duration{msd(5000)},
			want:     want{p50: 50, p99: 99, max: 5000, count: 100, censored: true, maxLB: true},
		},
		{
			// A bound below the median could hide a request that really
			// sits above it, so every percentile becomes a lower bound.
			name:     "cutoff below the median",
			exact:    []time.Duration{msd(10), msd(20), msd(30), msd(40)},
			censored: []time.Duration{msd(1)},
			want:     want{p50: 20, p99: 40, max: 40, count: 5, censored: true, p50LB: true, p99LB: true, maxLB: true},
		},
		{
			name:     "everything censored",
			censored: []time.Duration{msd(100), msd(200)},
			want:     want{p50: 100, p99: 200, max: 200, count: 2, censored: true, p50LB: true, p99LB: true, maxLB: true},
		},
		{
			name: "empty",
			want: want{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s Series
			for _, d := range tc.exact {
				s.Record(d)
			}
			for _, d := range tc.censored {
				s.RecordCensored(d)
			}
			got := s.Summary()
			// Bucketing may round up by under 1%.
			near := func(a, b float64) bool { return a >= b && a <= b*(1+1.0/subBuckets)+1e-9 }
			if !near(got.P50Ms, tc.want.p50) || !near(got.P99Ms, tc.want.p99) || got.MaxMs != tc.want.max {
				t.Errorf("p50/p99/max = %v/%v/%v, want %v/%v/%v", got.P50Ms, got.P99Ms, got.MaxMs, tc.want.p50, tc.want.p99, tc.want.max)
			}
			if got.Count != tc.want.count || got.Censored != tc.want.censored {
				t.Errorf("count/censored = %d/%v, want %d/%v", got.Count, got.Censored, tc.want.count, tc.want.censored)
			}
			if got.P50LowerBound != tc.want.p50LB || got.P99LowerBound != tc.want.p99LB || got.MaxLowerBound != tc.want.maxLB {
				t.Errorf("lower-bound flags p50/p99/max = %v/%v/%v, want %v/%v/%v",
					got.P50LowerBound, got.P99LowerBound, got.MaxLowerBound, tc.want.p50LB, tc.want.p99LB, tc.want.maxLB)
			}
		})
	}
}

func TestSeriesMergeKeepsCensoring(t *testing.T) {
	var a, b Series
	a.Record(time.Millisecond)
	b.RecordCensored(time.Second)
	a.Merge(&b)
	if got := a.Summary(); !got.Censored || got.Count != 2 || got.MaxMs != 1000 {
		t.Fatalf("merged summary %+v lost the censored repeat", got)
	}
}

func TestLatencyJSONShape(t *testing.T) {
	var s Series
	s.Record(1500 * time.Microsecond)
	s.RecordCensored(3 * time.Second)
	b, err := json.Marshal(s.Summary())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := []string{"p50_ms", "p99_ms", "max_ms", "count", "censored"}
	if len(m) != len(keys) {
		t.Fatalf("latency JSON %s has %d keys, want exactly %v", b, len(m), keys)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Fatalf("latency JSON %s lacks %q", b, k)
		}
	}
	if m["censored"] != true || m["max_ms"] != 3000.0 {
		t.Fatalf("latency JSON %s: want censored true and max_ms 3000", b)
	}
}
