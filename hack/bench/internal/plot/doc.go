// Package plot writes the benchmark's figures as standalone SVG with the
// standard library: latency over time with the load phases shaded, the
// latency CDF of each series, and a result against a swept parameter.
//
// Invariants:
//   - Output is deterministic for the same input (series and phases are
//     drawn in the order given), so committed figures diff cleanly.
//   - Latency axes are logarithmic: benchmark latencies span milliseconds
//     to many seconds and a linear axis would flatten everything but the
//     worst point.
//   - A censored point (a lower bound) is drawn as an upward triangle
//     (a hollow marker in a sweep), never as an ordinary dot, so it cannot
//     be read as a measurement.
//   - Figures stay small without hiding the tail: a timeline series with
//     more points than about three per two-pixel column keeps, per column,
//     its minimum, median and maximum and its largest censored bound
//     (Thin); a CDF drops moves under a quarter pixel. Every column's
//     maximum is drawn. Rethin applies the same to a figure written before
//     (go run ./hack/bench/thinsvg FILE.svg).
package plot
