// Package consolidate sums the diffs of equal updates, the one step every
// collection of (data, time, diff) updates takes before it is stored, sent
// or compared: after Slice, no two updates compare equal and no diff is
// zero, so two consolidated collections are equal exactly when their
// slices are.
package consolidate
