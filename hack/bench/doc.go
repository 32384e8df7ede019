// Command bench runs Tandem's benchmark scenarios side by side in one run
// and reports them the way the benchmark issue specifies:
//
//	go run ./hack/bench SCENARIO [--quick] [--out DIR] [--keep]
//
// Each scenario builds bin/controller and bin/replica, starts its own
// controller with the process orchestrator on free loopback ports and a
// fresh data directory, runs its arms, and writes DIR/SCENARIO.json
// ({"scenario","quick","machine","arms":[{"name",<metrics>}]}), a markdown
// table on stdout and SVG figures (DIR/SCENARIO-*.svg). Progress goes to
// stderr.
//
// Method (see docs/benchmarks.md): open-loop arrivals on a fixed schedule
// from pre-opened connections; each arm's capacity is measured first and
// the arm runs at about 30% of it, with the utilization reported; a
// warm-up is discarded; churn phases repeat; latencies go into log-linear
// histograms; a request cut off by the end of a phase is a lower bound
// ("censored": true), never a latency.
//
// A scenario whose feature the system does not support yet fails with a
// message naming the missing feature; it never reports a made-up number.
// The statistics live in internal/ packages with their own tests; nothing
// here starts processes from `go test`.
package main
