// Package frontier holds Tandem's notion of time: Time is uint64 milliseconds
// since the Unix epoch, totally ordered. A Frontier is either one time or
// closed (the empty antichain); times strictly before the frontier are
// complete, times at or beyond it may still change. Holds is a counted
// multiset of times (a MutableAntichain specialised to a total order) whose
// frontier is its least time with a positive count.
//
// Invariants: a closed frontier is beyond every time; Meet is the minimum and
// Join the maximum under that order; Holds never reports a frontier for a
// time whose count went negative (that is a bug, and it panics loudly in
// tests through Validate).
package frontier
