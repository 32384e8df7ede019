package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// nestedSubqueries returns a query with subqueries nested depth levels
// deep, each correlated by inequalities (general decorrelation) with the
// level just outside it and the one two levels out, cycling through
// EXISTS, NOT IN and a scalar subquery.
func nestedSubqueries(depth int) string {
	var cond func(i int) string
	cond = func(i int) string {
		if i > depth {
			return "true"
		}
		tbl, val := "t", "v"
		if i%2 == 1 {
			tbl, val = "s", "w"
		}
		corr := fmt.Sprintf("a%d.k < a%d.k + 2", i, i-1)
		if i >= 2 {
			corr += fmt.Sprintf(" AND a%d.k <> a%d.k", i, i-2)
		}
		where := corr + " AND " + cond(i+1)
		outerVal := "v"
		if (i-1)%2 == 1 {
			outerVal = "w"
		}
		switch i % 3 {
		case 1:
			return fmt.Sprintf("EXISTS (SELECT 1 FROM %s a%d WHERE %s)", tbl, i, where)
		case 2:
			return fmt.Sprintf("a%d.%s NOT IN (SELECT a%d.%s FROM %s a%d WHERE %s)", i-1, outerVal, i, val, tbl, i, where)
		default:
			return fmt.Sprintf("a%d.k <= (SELECT max(a%d.k) FROM %s a%d WHERE %s)", i-1, i, tbl, i, where)
		}
	}
	return "SELECT a0.k FROM t a0 WHERE " + cond(1)
}

// TestNestedSubqueriesGrowThePlanBySums checks sharedrel.go: each level
// of nesting adds about as many plan nodes as the one before (the outer
// relation is bound once and read by name), where copying it into every
// read doubled the plan per level.
func TestNestedSubqueriesGrowThePlanBySums(t *testing.T) {
	var sizes []int
	for depth := 1; depth <= 8; depth++ {
		sizes = append(sizes, planSizeOf(t, nestedSubqueries(depth)))
	}
	t.Logf("plan nodes for depth 1..8: %v", sizes)
	// Levels cycle through three forms: compare growth over three levels.
	for d := 4; d+3 < len(sizes); d++ {
		before, after := sizes[d]-sizes[d-3], sizes[d+3]-sizes[d]
		if after > before+before/4 {
			t.Errorf("plan nodes %v: depth %d..%d adds %d, depth %d..%d adds %d: not growing by a sum",
				sizes, d-2, d+1, before, d+1, d+4, after)
		}
	}
}

// TestNestedSubqueriesShareTheOuterRelation checks that the plan of a
// depth-6 query binds what it reads twice: it has Lets, each read by its
// body, EXPLAIN shows them, and the plan type-checks (no Get of a binding
// outside its Let) and evaluates (nested_subqueries.slt compares answers
// with PostgreSQL).
func TestNestedSubqueriesShareTheOuterRelation(t *testing.T) {
	sql := nestedSubqueries(6)
	var tRows, sRows []row.Row
	for k := range int64(6) {
		tRows = append(tRows, row.Pack(row.Int64(k), row.Text(string(rune('a'+k%3)))))
		sRows = append(sRows, row.Pack(row.Int64(k+1), row.Null()))
	}
	evalRows(t, sql, tRows, sRows)
	q, err := planSQL(t, &Planner{Catalog: subqueryCatalog()}, sql)
	if err != nil {
		t.Fatal(err)
	}
	lets := 0
	var walk func(p *plan.Plan)
	walk = func(p *plan.Plan) {
		if p.Let != nil {
			lets++
			if !p.Let.Body.Reads(p.Let.ID) {
				t.Errorf("let %s is not read by its body", p.Let.ID)
			}
		}
		for _, in := range p.Inputs() {
			walk(in)
		}
	}
	walk(&q.Plan)
	if lets == 0 {
		t.Fatalf("no Let in\n%s", Explain(q))
	}
	if !strings.Contains(Explain(q), "With l") {
		t.Errorf("EXPLAIN does not show the binding:\n%s", Explain(q))
	}
}
