// Package report is the benchmark result: the JSON document other tools
// read, {"scenario", "quick", "machine", "arms": [{"name", <metrics>}]},
// and the markdown table printed beside it.
//
// Invariants:
//   - An arm's "name" comes first and its metrics follow in the order they
//     were added, so two runs of a scenario produce comparable files.
//   - A metric value is a stats.Latency (the JSON latency shape), an
//     integer, a float or a string; anything else is refused when added.
//   - In the table a value that is a lower bound (censored) is printed with
//     ">=", so no reader takes a cut-off request for a measured latency.
package report
