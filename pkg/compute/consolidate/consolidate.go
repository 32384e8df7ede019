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

// Difference walks two sorted slices in step, in ascending order: removed
// is called for each element only in prev, added for each element only in
// next, and same for each pair that compares equal (the two consolidated
// collections' difference is then next - prev).
func Difference[T any](prev, next []T, cmp func(a, b T) int, removed, added func(T), same func(p, n T)) {
	i, j := 0, 0
	for i < len(prev) || j < len(next) {
		var c int
		switch {
		case i == len(prev):
			c = 1
		case j == len(next):
			c = -1
		default:
			c = cmp(prev[i], next[j])
		}
		switch {
		case c < 0:
			removed(prev[i])
			i++
		case c > 0:
			added(next[j])
			j++
		default:
			same(prev[i], next[j])
			i++
			j++
		}
	}
}
