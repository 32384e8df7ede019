//go:build race

package dataflow

// raceEnabled: the race detector adds allocations of its own, so
// allocation counts are not checked under it.
const raceEnabled = true
