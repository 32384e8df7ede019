// Package stats holds the benchmark harness's latency statistics: a
// log-linear bucketed histogram in the HDR style and a Series that records
// exact and censored latencies and summarises them as the JSON latency
// metric {p50_ms, p99_ms, max_ms, count, censored}.
//
// Invariants:
//   - A bucketed value is never under-reported: a quantile is the upper
//     edge of its bucket (clipped to the exact maximum), so the relative
//     error is at most 1/128 and always upward.
//   - The maximum is exact, not bucketed.
//   - A censored observation (a request still outstanding when its phase
//     ended) is only ever a lower bound. It enters the summary as that bound
//     and marks the metric censored, so no reader can mistake it for a
//     completed request's latency.
package stats
