// Package readtrace times the stages of one read as it goes through the
// controller process: the front door (pgwire), planning, admission,
// timestamp selection, the compute controller, the replica round trip and
// the response to the client. The front door puts a Trace in the
// statement's context; each layer adds the time of its stage to it
// (Observe); when the statement ends, the front door records the trace of
// a read (one that reached a replica) in a Histogram, once per stage.
//
// Invariants: a Trace is safe for concurrent use; adding to a nil Trace (a
// context without one) records nothing; Record observes every stage the
// trace saw exactly once, with the sum of its durations.
//
// The package imports nothing of Tandem, so every layer may use it.
package readtrace
