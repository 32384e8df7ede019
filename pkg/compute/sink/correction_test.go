package sink

import (
	"fmt"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

func ups(spec ...any) []Update {
	var out []Update
	for i := 0; i+2 < len(spec); i += 3 {
		out = append(out, Update{Row: []byte(spec[i].(string)), Time: frontier.Time(spec[i+1].(int)), Diff: int64(spec[i+2].(int))})
	}
	return out
}

func TestConsolidateAt(t *testing.T) {
	tests := []struct {
		name  string
		in    []Update
		floor frontier.Time
		want  string
	}{
		{"sums equal pairs", ups("a", 5, 1, "a", 5, 2), 0, "[a@5:3]"},
		{"cancels to nothing", ups("a", 5, 1, "a", 5, -1), 0, "[]"},
		{"advances to the floor", ups("a", 2, 1, "a", 4, -1, "b", 3, 1), 5, "[b@5:1]"},
		{"keeps later times apart", ups("b", 7, 1, "a", 5, 1, "a", 7, 1), 5, "[a@5:1 a@7:1 b@7:1]"},
		{"three-way cancel", ups("a", 1, 1, "a", 1, -1, "a", 1, 1), 0, "[a@1:1]"},
	}
	for _, tc := range tests {
		got := consolidateAt(tc.in, tc.floor)
		var s []string
		for _, u := range got {
			s = append(s, fmt.Sprintf("%s@%d:%d", u.Row, u.Time, u.Diff))
		}
		if fmt.Sprint(s) != tc.want && !(len(s) == 0 && tc.want == "[]") {
			t.Errorf("%s: consolidateAt = %v, want %s", tc.name, s, tc.want)
		}
	}
}
