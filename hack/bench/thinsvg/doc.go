// Command thinsvg rewrites benchmark figures written before the plots
// thinned their input (hack/bench/internal/plot.Rethin), in place:
//
//	go run ./hack/bench/thinsvg docs/bench/isolation-timeline.svg ...
//
// Timeline series keep, per two-pixel column, their minimum, median and
// maximum and their largest censored bound; CDF paths drop moves of less
// than a quarter pixel. A figure already thin is left as it is. Each file
// is written to a temporary file beside it and renamed over it only when
// the rewrite succeeded, so a failure never leaves half a figure.
package main
