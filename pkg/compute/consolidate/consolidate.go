package consolidate

import "slices"

// Slice sorts us by compare, sums the diffs (reached through diff) of
// updates that compare equal into the first of them and drops those whose
// sum is zero, in place. The slots it no longer uses are cleared so that
// what they held can be collected.
func Slice[T any](us []T, compare func(a, b T) int, diff func(*T) *int64) []T {
	slices.SortFunc(us, compare)
	out := us[:0]
	for _, u := range us {
		if n := len(out); n > 0 && compare(out[n-1], u) == 0 {
			*diff(&out[n-1]) += *diff(&u)
			if *diff(&out[n-1]) == 0 {
				out = out[:n-1]
			}
			continue
		}
		if *diff(&u) != 0 {
			out = append(out, u)
		}
	}
	clear(us[len(out):])
	return out
}
