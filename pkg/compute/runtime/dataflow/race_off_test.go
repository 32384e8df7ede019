//go:build !race

package dataflow

// raceEnabled: see race_on_test.go.
const raceEnabled = false
