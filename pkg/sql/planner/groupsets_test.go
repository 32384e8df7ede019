package planner

import "testing"

func TestGroupingMask(t *testing.T) {
	tests := []struct {
		keys, set []int
		want      int64
	}{
		{[]int{0}, []int{0, 1}, 0},
		{[]int{0}, []int{1}, 1},
		{[]int{0, 1}, nil, 3},
		{[]int{0, 1}, []int{0}, 1},
		{[]int{0, 1}, []int{1}, 2},
		{[]int{1, 0, 1}, []int{0}, 5},
	}
	for _, tc := range tests {
		if got := groupingMask(tc.keys, tc.set); got != tc.want {
			t.Errorf("groupingMask(%v, %v) = %d, want %d", tc.keys, tc.set, got, tc.want)
		}
	}
}
