package consolidate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
)

type upd struct {
	row  string
	diff int64
}

func byRow(a, b upd) int   { return cmp.Compare(a.row, b.row) }
func diffOf(u *upd) *int64 { return &u.diff }

func TestSlice(t *testing.T) {
	tests := []struct {
		name string
		in   []upd
		want []upd
	}{
		{"empty", nil, []upd{}},
		{"sorted and summed", []upd{{"b", 1}, {"a", 2}, {"b", 3}}, []upd{{"a", 2}, {"b", 4}}},
		{"cancelling pair dropped", []upd{{"a", 1}, {"b", 1}, {"a", -1}}, []upd{{"b", 1}}},
		{"zero diff dropped", []upd{{"a", 0}}, []upd{}},
		{"cancel then reappear", []upd{{"a", 1}, {"a", -1}, {"a", 1}}, []upd{{"a", 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got := Slice(in, byRow, diffOf)
			if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Fatalf("Slice(%v) = %v, want %v", tt.in, got, tt.want)
			}
			for _, u := range in[len(got):] {
				if u != (upd{}) {
					t.Fatalf("unused slot not cleared: %v", in)
				}
			}
		})
	}
}

func TestDifference(t *testing.T) {
	for _, tc := range []struct {
		name       string
		prev, next []int
		want       string
	}{
		{"both empty", nil, nil, ""},
		{"all added", nil, []int{1, 2}, "+1 +2 "},
		{"all removed", []int{1, 2}, nil, "-1 -2 "},
		{"interleaved", []int{1, 3, 5}, []int{2, 3, 6}, "-1 +2 =3 -5 +6 "},
		{"duplicates pair up", []int{4, 4}, []int{4}, "=4 -4 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got strings.Builder
			Difference(tc.prev, tc.next, func(a, b int) int { return a - b },
				func(v int) { fmt.Fprintf(&got, "-%d ", v) },
				func(v int) { fmt.Fprintf(&got, "+%d ", v) },
				func(p, n int) { fmt.Fprintf(&got, "=%d ", n) })
			if got.String() != tc.want {
				t.Errorf("Difference(%v, %v) = %q, want %q", tc.prev, tc.next, got.String(), tc.want)
			}
		})
	}
}
