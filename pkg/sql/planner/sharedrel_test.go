package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/reference"
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

// TestJoinPlanningKeepsLetValuesWhole checks joinorder.go's handling of a
// Let: a cluster reading the binding is planned (its equality becomes a
// join key, the binding's description being known), the filter lands on
// that use of the binding only, and the value, which another use reads
// unfiltered, is left whole: the rewritten plan answers as the original.
func TestJoinPlanningKeepsLetValuesWhole(t *testing.T) {
	cat := subqueryCatalog()
	tID, sID := cat["t"].ID, cat["s"].ID
	descs := map[plan.GlobalID]row.RelationDesc{tID: cat["t"].Desc, sID: cat["s"].Desc}
	l := plan.Local(1)
	value := plan.NewGet(tID)
	joined := plan.NewMfp(plan.NewJoin(plan.NewGet(l), plan.NewGet(sID), nil, nil),
		expr.Identity(4).Filter(expr.Eq(expr.Column(0), expr.Column(2)), expr.Gt(expr.Column(0), expr.Literal(row.Int64(1)))).Project(0, 1))
	p := plan.NewLet(l, value, plan.NewUnion(joined, plan.NewGet(l)))
	jp := &joinPlanner{env: plan.MapEnv(descs)}
	got := jp.rewrite(p)
	if got.Let == nil || *got.Let.Value != value {
		t.Fatalf("the value changed:\n%s", explainPlan(got))
	}
	keyed := false
	var walk func(q *plan.Plan)
	walk = func(q *plan.Plan) {
		if q.Join != nil && len(q.Join.LeftKey) > 0 {
			keyed = true
		}
		for _, in := range q.Inputs() {
			walk(in)
		}
	}
	walk(got.Let.Body)
	if !keyed {
		t.Errorf("the join over the binding was not planned (no keys):\n%s", explainPlan(got))
	}
	env := map[plan.GlobalID]reference.Result{}
	for id, rows := range map[plan.GlobalID][]row.Row{
		tID: {row.Pack(row.Int64(1), row.Text("a")), row.Pack(row.Int64(2), row.Text("b")), row.Pack(row.Int64(3), row.Null())},
		sID: {row.Pack(row.Int64(2), row.Text("x")), row.Pack(row.Int64(3), row.Text("y"))},
	} {
		res := reference.Result{Rows: reference.Collection{}, Errors: reference.Collection{}}
		for _, r := range rows {
			res.Rows[string(r)]++
		}
		env[id] = res
	}
	want, err := reference.EvalPlan(&p, env)
	if err != nil {
		t.Fatal(err)
	}
	have, err := reference.EvalPlan(&got, env)
	if err != nil {
		t.Fatal(err)
	}
	if !have.Rows.Equal(want.Rows) {
		t.Errorf("rewritten plan answers\n%s\nwant\n%s\n%s", have.Rows, want.Rows, explainPlan(got))
	}
}

func explainPlan(p plan.Plan) string {
	var sb strings.Builder
	writePlan(&sb, 0, &p)
	return sb.String()
}
