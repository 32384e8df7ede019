package planner

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// windowTopKLimit returns the limit of a TopK directly under a Window in
// p, or -1 when there is none.
func windowTopKLimit(p plan.Plan) int64 {
	if p.Window != nil && p.Window.Input.TopK != nil && p.Window.Input.TopK.Limit != nil {
		return *p.Window.Input.TopK.Limit
	}
	for _, in := range p.Inputs() {
		if l := windowTopKLimit(*in); l >= 0 {
			return l
		}
	}
	return -1
}

func TestWindowTopK(t *testing.T) {
	const rn = "row_number() OVER (PARTITION BY v ORDER BY f DESC, k)"
	tests := []struct {
		name  string
		sql   string
		limit int64 // -1: the Window stays a full window
	}{
		{"rn <= k", "SELECT * FROM (SELECT k, v, " + rn + " AS rn FROM kv) s WHERE rn <= 2", 2},
		{"rn < k", "SELECT * FROM (SELECT k, v, " + rn + " AS rn FROM kv) s WHERE rn < 3", 2},
		{"rn = 1", "SELECT k FROM (SELECT k, v, " + rn + " AS rn FROM kv) s WHERE rn = 1", 1},
		{"k >= rn", "SELECT k FROM (SELECT k, " + rn + " AS rn FROM kv) s WHERE 4 >= rn", 4},
		{"k > rn", "SELECT k FROM (SELECT k, " + rn + " AS rn FROM kv) s WHERE 4 > rn", 3},
		{"between: the smallest bound", "SELECT k FROM (SELECT k, " + rn + " AS rn FROM kv) s WHERE rn BETWEEN 2 AND 3 AND rn <= 5", 3},
		{"no row can pass", "SELECT k FROM (SELECT k, " + rn + " AS rn FROM kv) s WHERE rn <= 0", 0},
		{"without PARTITION BY", "SELECT k FROM (SELECT k, row_number() OVER (ORDER BY k) AS rn FROM kv) s WHERE rn <= 2", 2},
		{"with rank and a ROWS running sum beside it",
			"SELECT * FROM (SELECT k, " + rn + " AS rn, rank() OVER (PARTITION BY v ORDER BY f DESC, k) AS r, " +
				"sum(k) OVER (PARTITION BY v ORDER BY f DESC, k ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s FROM kv) s WHERE rn <= 2", 2},
		{"rank counts ties", "SELECT * FROM (SELECT k, rank() OVER (PARTITION BY v ORDER BY f) AS r FROM kv) s WHERE r <= 2", -1},
		{"dense_rank counts ties", "SELECT * FROM (SELECT k, dense_rank() OVER (PARTITION BY v ORDER BY f) AS r FROM kv) s WHERE r = 1", -1},
		{"a RANGE sum reads later peers",
			"SELECT * FROM (SELECT k, " + rn + " AS rn, sum(k) OVER (PARTITION BY v ORDER BY f DESC, k) AS s FROM kv) s WHERE rn <= 2", -1},
		{"lead reads later rows",
			"SELECT * FROM (SELECT k, " + rn + " AS rn, lead(k) OVER (PARTITION BY v ORDER BY f DESC, k) AS l FROM kv) s WHERE rn <= 2", -1},
		{"count(*) over the partition", "SELECT * FROM (SELECT k, " + rn + " AS rn, count(*) OVER (PARTITION BY v) AS n FROM kv) s WHERE rn <= 2", -1},
		{"a lower bound", "SELECT k FROM (SELECT k, " + rn + " AS rn FROM kv) s WHERE rn > 2", -1},
		{"a disjunction", "SELECT k FROM (SELECT k, v, " + rn + " AS rn FROM kv) s WHERE rn <= 2 OR v = 'x'", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := planSQL(t, &Planner{Catalog: testCatalog()}, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			if got := windowTopKLimit(q.Plan); got != tc.limit {
				t.Errorf("top-k limit %d, want %d\n%s", got, tc.limit, Explain(q))
			}
		})
	}
}
