package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// readsOf counts the reads of id in a plan as a tree: a Let's value
// once, however many times its body reads it.
func readsOf(p *plan.Plan, id plan.GlobalID) int {
	n := 0
	if p.Get != nil && p.Get.ID == id {
		n++
	}
	for _, in := range p.Inputs() {
		n += readsOf(in, id)
	}
	return n
}

// TestCTEReadTwiceIsComputedOnce checks bindCTEs: a CTE that a query level
// reads more than once is bound by a Let and computed once (the table it
// reads is read once, where each reference used to read it), a CTE read once, NOT
// MATERIALIZED, or only a filter of a table is computed at its reference,
// and every plan answers as before (the reference evaluator, and
// cte_shared.slt against PostgreSQL).
func TestCTEReadTwiceIsComputedOnce(t *testing.T) {
	const agg = "c AS %s (SELECT k, count(*) AS n FROM t GROUP BY k)"
	with := func(mat, body string) string {
		return "WITH " + strings.Replace(agg, "%s", mat, 1) + " " + body
	}
	tests := []struct {
		name       string
		sql        string
		tableReads int
		let        bool
	}{
		{"join of two references", with("", "SELECT x.k, y.n FROM c x JOIN c y ON x.k = y.n"), 1, true},
		{"union of two references", with("", "SELECT k FROM c UNION ALL SELECT n FROM c"), 1, true},
		{"reference in a subquery", with("", "SELECT k FROM c WHERE n = (SELECT max(n) FROM c)"), 1, true},
		{"read once", with("", "SELECT k FROM c WHERE n > 1"), 1, false},
		{"not materialized", with("NOT MATERIALIZED", "SELECT x.k FROM c x JOIN c y ON x.k = y.n"), 2, false},
		{"a filter of a table", "WITH f AS (SELECT k FROM t WHERE k > 0) SELECT a.k FROM f a JOIN f b ON a.k = b.k", 2, false},
	}
	tRows := []row.Row{
		row.Pack(row.Int64(1), row.Text("a")), row.Pack(row.Int64(1), row.Text("b")),
		row.Pack(row.Int64(2), row.Text("c")), row.Pack(row.Null(), row.Text("d")),
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := planSQL(t, &Planner{Catalog: subqueryCatalog()}, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			if got := readsOf(&q.Plan, subqueryCatalog()["t"].ID); got != tc.tableReads {
				t.Errorf("t read %d times, want %d:\n%s", got, tc.tableReads, Explain(q))
			}
			if got := strings.Contains(Explain(q), "With l"); got != tc.let {
				t.Errorf("EXPLAIN shows a binding: %v, want %v:\n%s", got, tc.let, Explain(q))
			}
			rows, errs := evalRows(t, tc.sql, tRows, nil)
			if len(errs) > 0 {
				t.Fatalf("errors %v", errs)
			}
			inlined := strings.Replace(tc.sql, "AS (", "AS NOT MATERIALIZED (", 1)
			want, _ := evalRows(t, inlined, tRows, nil)
			if !slices.Equal(rows, want) {
				t.Errorf("bound plan answers %v, computed at each reference %v", rows, want)
			}
		})
	}
}
