// Package plot writes the benchmark's figures as standalone SVG with the
// standard library: latency over time with the load phases shaded, and the
// latency CDF of each series.
//
// Invariants:
//   - Output is deterministic for the same input (series and phases are
//     drawn in the order given), so committed figures diff cleanly.
//   - Latency axes are logarithmic: benchmark latencies span milliseconds
//     to many seconds and a linear axis would flatten everything but the
//     worst point.
//   - A censored point (a lower bound) is drawn as an upward triangle,
//     never as an ordinary dot, so it cannot be read as a measurement.
package plot
