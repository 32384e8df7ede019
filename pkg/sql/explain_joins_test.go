package sql_test

import (
	"strings"
	"testing"
)

// TestExplainShowsJoinPlanning checks that EXPLAIN shows the planner's
// rewrites as a user sees them: a three-table comma join with
// equalities as keyed joins with each table's filter below them, and
// `WHERE rn <= k` over row_number() as a TopK under the Window (a
// rank() filter stays a full window).
func TestExplainShowsJoinPlanning(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, "CREATE TABLE t1 (a1 int, b1 int, x1 text); CREATE TABLE t2 (a2 int, b2 int, x2 text); CREATE TABLE t3 (a3 int, b3 int, x3 text)")
	tests := []struct {
		sql       string
		want, not []string
	}{
		{"EXPLAIN SELECT x1, x2, x3 FROM t1, t2, t3 WHERE a1 = b2 AND a2 = 6 AND b3 = a1",
			[]string{"Join on [#1] = [#0]", "filter [(#0 = 6)]"}, []string{"Cross join"}},
		{"EXPLAIN SELECT x1 FROM t1, t2 WHERE a1 > 3",
			[]string{"Cross join (no keys)", "filter [(#0 > 3)]"}, nil},
		{"EXPLAIN SELECT * FROM (SELECT a1, row_number() OVER (PARTITION BY b1 ORDER BY a1) AS rn FROM t1) s WHERE rn <= 2",
			[]string{"Window", "TopK group_by=[1]", "limit=2"}, nil},
		{"EXPLAIN SELECT * FROM (SELECT a1, rank() OVER (PARTITION BY b1 ORDER BY a1) AS r FROM t1) s WHERE r <= 2",
			[]string{"Window"}, []string{"TopK"}},
	}
	for _, tc := range tests {
		got := strings.Join(run(t, s, tc.sql), "\n")
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: no %q in\n%s", tc.sql, w, got)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: %q in\n%s", tc.sql, n, got)
			}
		}
	}
}
