package stats

import (
	"math"
	"time"
)

// Latency is the JSON shape of every latency metric in a report.
// When Censored is true, at least one observation was still outstanding
// when its phase ended; it is counted at its lower bound, so MaxMs (and any
// percentile flagged in the json:"-" fields) is a lower bound, not a value.
type Latency struct {
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
	Count    uint64  `json:"count"`
	Censored bool    `json:"censored"`

	// Which reported values are lower bounds; for the markdown table
	// (shown as ">=") and not part of the JSON contract.
	P50LowerBound bool `json:"-"`
	P99LowerBound bool `json:"-"`
	MaxLowerBound bool `json:"-"`
	// CensoredCount is how many of Count are lower bounds.
	CensoredCount uint64 `json:"-"`
}

// Series accumulates the latencies of one metric: completed requests as
// values, requests cut off by the end of a phase as lower bounds. The zero
// value is empty and ready to use; not safe for concurrent use.
type Series struct {
	exact    Histogram
	censored Histogram
	// minCensored is the smallest censored lower bound recorded.
	minCensored time.Duration
}

// Record adds a completed request's latency.
func (s *Series) Record(d time.Duration) { s.exact.Record(d) }

// RecordCensored adds a request that had been outstanding for at least
// lowerBound when its phase ended.
func (s *Series) RecordCensored(lowerBound time.Duration) {
	if lowerBound < 0 {
		lowerBound = 0
	}
	if s.censored.Count() == 0 || lowerBound < s.minCensored {
		s.minCensored = lowerBound
	}
	s.censored.Record(lowerBound)
}

// Merge adds every observation of o to s (repeats of one arm).
func (s *Series) Merge(o *Series) {
	if o.censored.Count() > 0 && (s.censored.Count() == 0 || o.minCensored < s.minCensored) {
		s.minCensored = o.minCensored
	}
	s.exact.Merge(&o.exact)
	s.censored.Merge(&o.censored)
}

// Count is the number of observations, censored included.
func (s *Series) Count() uint64 { return s.exact.Count() + s.censored.Count() }

// CensoredCount is the number of censored observations.
func (s *Series) CensoredCount() uint64 { return s.censored.Count() }

// Summary reports p50, p99 and max over all observations, a censored one
// standing at its lower bound. A percentile stays exact when every censored
// bound lies above it: those requests' true latencies are larger still, so
// they cannot move it. Otherwise it is flagged as a lower bound.
func (s *Series) Summary() Latency {
	var all Histogram
	all.Merge(&s.exact)
	all.Merge(&s.censored)
	l := Latency{
		P50Ms:         ms(all.Quantile(0.50)),
		P99Ms:         ms(all.Quantile(0.99)),
		MaxMs:         ms(all.Max()),
		Count:         all.Count(),
		Censored:      s.censored.Count() > 0,
		CensoredCount: s.censored.Count(),
	}
	if l.Censored {
		l.P50LowerBound = s.minCensored <= all.Quantile(0.50)
		l.P99LowerBound = s.minCensored <= all.Quantile(0.99)
		l.MaxLowerBound = true
	}
	return l
}

// Quantile exposes a quantile over all observations for callers that need
// more than the summary (e.g. a quiet-phase p99 used as a threshold).
func (s *Series) Quantile(q float64) time.Duration {
	var all Histogram
	all.Merge(&s.exact)
	all.Merge(&s.censored)
	return all.Quantile(q)
}

// ms converts to milliseconds rounded to microseconds, which keeps the
// JSON readable without hiding anything the buckets resolve.
func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}
