package reference

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestEvalRecursive(t *testing.T) {
	l := plan.Local(1)
	col, lit := expr.Column, func(n int64) expr.Expr { return expr.Literal(row.Int64(n)) }
	// src1 is an edge table (a -> b): a 3-cycle, a duplicate edge and a
	// tail; src2 holds one row whose key fails to divide.
	env := map[plan.GlobalID]Result{
		src1: {Rows: Collection{string(ints(1, 2)): 2, string(ints(2, 3)): 1, string(ints(3, 1)): 1, string(ints(3, 4)): 1}, Errors: Collection{}},
		src2: {Rows: Collection{string(ints(0)): 1}, Errors: Collection{string(ErrorRow(&evalError{"22012", "division by zero"})): 1}},
	}
	one := plan.NewConstant(row.RelationDesc{Names: []string{"n"}, Types: []row.ColumnType{{Type: row.TypeInt64}}},
		plan.ConstantRow{Datums: []row.Datum{row.Int64(1)}, Diff: 2})
	count := plan.NewMfp(plan.NewGet(l), expr.MFP{Expressions: []expr.Expr{expr.Add(col(0), lit(1))},
		Predicates: []expr.Expr{expr.Lt(col(0), lit(3))}, Projection: []int{1}})
	closure := plan.NewMfp(plan.NewJoin(plan.NewGet(l), plan.NewGet(src1), []expr.Expr{col(1)}, []expr.Expr{col(0)}), expr.MFP{Projection: []int{0, 3}})
	tests := []struct {
		name       string
		p          plan.Plan
		rows, errs string
	}{
		{"UNION ALL keeps multiplicities", plan.NewRecursive(l, "t", one, count, false, 10), "(1) x2; (2) x2; (3) x2", ""},
		{"UNION dedupes the base", plan.NewRecursive(l, "t", one, count, true, 10), "(1) x1; (2) x1; (3) x1", ""},
		{"closure over a cycle", plan.NewRecursive(l, "c", plan.NewGet(src1), closure, true, 10),
			"(1, 1) x1; (1, 2) x1; (1, 3) x1; (1, 4) x1; (2, 1) x1; (2, 2) x1; (2, 3) x1; (2, 4) x1; (3, 1) x1; (3, 2) x1; (3, 3) x1; (3, 4) x1", ""},
		{"limit exact: two rounds add rows, the third adds none", plan.NewRecursive(l, "t", one, count, false, 3), "(1) x2; (2) x2; (3) x2", ""},
		{"limit one round short", plan.NewRecursive(l, "t", one, count, false, 2), "", `54000 recursive query "t" did not reach a fixed point within 2 iterations`},
		{"cycle under UNION ALL", plan.NewRecursive(l, "c", plan.NewGet(src1), closure, false, 10), "", "54000 recursive query \"c\" did not reach"},
		{"an error in the step replaces the result", plan.NewRecursive(l, "t", one,
			plan.NewMfp(plan.NewGet(l), expr.MFP{Expressions: []expr.Expr{expr.Add(col(0), lit(1))},
				Predicates: []expr.Expr{expr.Lt(col(0), lit(5)), expr.Lt(expr.Div(lit(1), expr.Sub(col(0), lit(2))), lit(100))}, Projection: []int{1}}), false, 10),
			"", "22012 division by zero"},
		{"errors of a binding-free input pass through", plan.NewRecursive(l, "t", one,
			plan.NewMfp(plan.NewJoin(plan.NewGet(l), plan.NewGet(src2), nil, nil), expr.MFP{Predicates: []expr.Expr{expr.Lt(col(0), lit(0))}, Projection: []int{0}}), false, 10),
			"(1) x2", "22012 division by zero"},
		{"negative base", plan.NewRecursive(l, "t", plan.NewNegate(one), count, false, 10), "", "XX000 recursive: negative multiplicity in input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.p.Desc(plan.MapEnv(map[plan.GlobalID]row.RelationDesc{
				src1: {Names: []string{"a", "b"}, Types: []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}}},
				src2: {Names: []string{"z"}, Types: []row.ColumnType{{Type: row.TypeInt64}}},
			})); err != nil {
				t.Fatalf("invalid test plan: %v", err)
			}
			res, err := EvalPlan(&tc.p, env)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(res.Rows); got != tc.rows {
				t.Errorf("rows %q, want %q", got, tc.rows)
			}
			var errs []string
			for _, e := range res.Errs() {
				errs = append(errs, e.(*evalError).code+" "+e.(*evalError).msg)
			}
			if got := strings.Join(errs, "; "); !strings.HasPrefix(got, tc.errs) || (tc.errs == "") != (got == "") {
				t.Errorf("errors %q, want %q", got, tc.errs)
			}
		})
	}
}
