// Package enginetest holds the engine's end-to-end property tests. Its
// tests are the product; this file is its only non-test code.
//
//   - TestEngineMatchesReference: random update streams and random plans
//     built from every plan operator (Get, Constant, Mfp, Join, Reduce with
//     every aggregate and DISTINCT, Distinct, Threshold, Union, Negate, TopK,
//     ArrangeBy, Window with every function and random frames, Recursive
//     with random steps and iteration limits) are run through the real runtime (runtime/runtimetest:
//     workers, exchange, arrangements, operators, peeks) on 1, 2 or 4
//     workers and 1 or 2 processes, with random batch boundaries, random
//     as_of, reads at random times (complete ones, and not yet complete ones
//     that must wait; whole-index and keyed), random compaction of the
//     exported index (a read before since must fail, reads at or after it
//     must be unchanged), sometimes a second dataflow importing the index,
//     and sometimes a subscribe sink. Every read must equal the reference
//     evaluator (package reference) over the inputs accumulated as of its
//     time, or fail when the reference says the read reports an error or
//     negative multiplicities; a subscribe's updates accumulated through
//     each time must equal the reference's collection at that time.
//   - TestRecursiveMatchesReference: WITH RECURSIVE shapes (transitive
//     closure, reachability, bounded and diverging walks) over a random
//     changing edge table through the runtime, compared like the above
//     (random Recursive nodes are also among the main property's plans).
//   - TestCompactionPreservesReads: a trace with random batches, merge work,
//     logical holds and a held physical cut; reads at or after since equal
//     the accumulated updates after every action, reads before it fail, and
//     the held cut is never merged away.
//   - TestOperatorsMatchReference: the same plans run directly on the
//     operators (package operators) over sharded traces (package trace),
//     without the runtime, compared with the reference at every time,
//     rows and errors exactly (multiplicities included).
//
// Both count what they compared and fail if no case ever compared rows or
// errors. Run them with
//
//	go test ./pkg/compute/enginetest/ [-rapid.checks=N] [-rapid.seed=S]
//
// (1000 cases each by default; `make test-engine-properties` runs more). A
// failure prints the shrunk case (plan as JSON, updates, the read) and the
// seed that replays it.
package enginetest
