// Package enginetest holds the engine's end-to-end property tests: random
// update streams and random plans built from every plan operator, run
// through the real runtime (workers, exchange, arrangements, operators,
// peeks) with random worker and process counts, random batch boundaries,
// random read times and random compaction, and compared at every read
// with the naive evaluator of package reference.
//
// The package has no non-test code besides this file: its tests are the
// product. Run them with
//
//	go test ./pkg/compute/enginetest/ [-rapid.checks=N] [-rapid.seed=S]
//
// A failure prints the shrunk counterexample (the plan, the updates and
// the read) and a seed to replay it.
package enginetest
