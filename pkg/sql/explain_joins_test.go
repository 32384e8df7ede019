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

// TestExplainShowsOuterJoinPushdown checks that filters above outer
// joins are planned as PostgreSQL plans them (planner/outerpush.go): a
// condition on the preserved side filters it below the join (the filter
// line comes after the Union), one that rejects the padded side's NULLs
// leaves no Union (LEFT became INNER; FULL became LEFT, one Negate), and
// one that keeps NULLs stays above the Union.
func TestExplainShowsOuterJoinPushdown(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, "CREATE TABLE t1 (a1 int, b1 int, x1 text); CREATE TABLE t2 (a2 int, b2 int, x2 text); CREATE TABLE t3 (a3 int, b3 int)")
	tests := []struct {
		sql string
		// before[i] must appear, and before before[i+1].
		before []string
		// count: substring -> occurrences.
		count map[string]int
	}{
		{"EXPLAIN SELECT * FROM t1 LEFT JOIN t2 ON a1 = a2 WHERE b1 = 5",
			[]string{"Union", "filter [(#1 = 5)]"}, map[string]int{"Union": 2, "Negate": 1}},
		{"EXPLAIN SELECT * FROM t2 RIGHT JOIN t1 ON a1 = a2 WHERE x1 <> 'a' AND b1 > 2",
			[]string{"Union", "filter [(#2 <> 'a'), (#1 > 2)]"}, map[string]int{"Negate": 1}},
		{"EXPLAIN SELECT * FROM t1 LEFT JOIN t2 ON a1 = a2 WHERE b2 = 5",
			[]string{"Join on", "filter [(#1 = 5)]"}, map[string]int{"Union": 0, "Negate": 0}},
		{"EXPLAIN SELECT * FROM t1 FULL JOIN t2 ON a1 = a2 WHERE b2 + b1 > 5",
			[]string{"Join on"}, map[string]int{"Union": 0, "Negate": 0}},
		{"EXPLAIN SELECT * FROM t1 FULL JOIN t2 ON a1 = a2 WHERE b2 IS NOT NULL",
			[]string{"Union"}, map[string]int{"Negate": 1}},
		{"EXPLAIN SELECT * FROM t1 LEFT JOIN t2 ON a1 = a2 WHERE b2 IS NULL",
			[]string{"filter [(#4 IS NULL)]", "Union"}, map[string]int{"Negate": 1}},
		{"EXPLAIN SELECT * FROM t1 LEFT JOIN t2 ON a1 = a2, t3 WHERE a3 = a1 AND b1 = 7",
			[]string{"Union", "filter [(#1 = 7)]"}, map[string]int{"Negate": 1}},
	}
	for _, tc := range tests {
		got := strings.Join(run(t, s, tc.sql), "\n")
		at := 0
		for _, w := range tc.before {
			i := strings.Index(got[at:], w)
			if i < 0 {
				t.Errorf("%s: no %q after offset %d in\n%s", tc.sql, w, at, got)
				break
			}
			at += i + len(w)
		}
		for w, n := range tc.count {
			if c := strings.Count(got, w); c != n {
				t.Errorf("%s: %d × %q, want %d, in\n%s", tc.sql, c, w, n, got)
			}
		}
	}
}
