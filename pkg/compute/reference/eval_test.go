package reference

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

var (
	src1 = plan.User(1)
	src2 = plan.User(2)
)

func ints(vs ...int64) row.Row {
	ds := make([]row.Datum, len(vs))
	for i, v := range vs {
		ds[i] = row.Int64(v)
	}
	return row.Pack(ds...)
}

// render formats a collection as sorted "(row) xN" lines joined by "; ".
func render(c Collection) string {
	return strings.TrimSuffix(strings.ReplaceAll(c.String(), "\n", "; "), "; ")
}

func TestEvalPlan(t *testing.T) {
	// src1(a, b): (1, 10) x2, (2, 20), (2, 0); src2(a, c): (1, 5), (3, 7).
	env := map[plan.GlobalID]Result{
		src1: {Rows: Collection{string(ints(1, 10)): 2, string(ints(2, 20)): 1, string(ints(2, 0)): 1}, Errors: Collection{}},
		src2: {Rows: Collection{string(ints(1, 5)): 1, string(ints(3, 7)): 1}, Errors: Collection{}},
	}
	get1, get2 := plan.NewGet(src1), plan.NewGet(src2)
	col := expr.Column
	lim := func(n int64) *int64 { return &n }
	tests := []struct {
		name     string
		p        plan.Plan
		want     string
		wantErrs string
	}{
		{"get", get2, "(1, 5) x1; (3, 7) x1", ""},
		{"mfp filter project", plan.NewMfp(get1, expr.MFP{Predicates: []expr.Expr{expr.Gt(col(1), expr.Literal(row.Int64(5)))}, Projection: []int{1}}),
			"(10) x2; (20) x1", ""},
		{"mfp division by zero", plan.NewMfp(get1, expr.MFP{Expressions: []expr.Expr{expr.Div(col(0), col(1))}, Projection: []int{2}}),
			"(0) x3", "(22012, division by zero) x1"},
		{"join", plan.NewJoin(get1, get2, []expr.Expr{col(0)}, []expr.Expr{col(0)}), "(1, 10, 1, 5) x2", ""},
		{"reduce", plan.NewReduce(get1, []expr.Expr{col(0)},
			plan.Aggregate{Func: plan.AggCountStar}, plan.Aggregate{Func: plan.AggSum, Expr: col(1)},
			plan.Aggregate{Func: plan.AggMin, Expr: col(1)}, plan.Aggregate{Func: plan.AggAvg, Expr: col(1)},
			plan.Aggregate{Func: plan.AggCount, Expr: col(1), Distinct: true}),
			"(1, 2, 20, 10, 10, 1) x1; (2, 2, 20, 0, 10, 2) x1", ""},
		{"reduce key error", plan.NewReduce(get1, []expr.Expr{expr.Div(col(0), col(1))}, plan.Aggregate{Func: plan.AggCountStar}),
			"(0, 3) x1", "(22012, division by zero) x1"},
		{"distinct", plan.NewDistinct(plan.NewMfp(get1, expr.MFP{Projection: []int{0}})), "(1) x1; (2) x1", ""},
		{"negate union threshold", plan.NewThreshold(plan.NewUnion(get1, plan.NewNegate(plan.NewConstant(
			row.RelationDesc{Names: []string{"a", "b"}, Types: []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}}},
			plan.ConstantRow{Datums: []row.Datum{row.Int64(1), row.Int64(10)}, Diff: 1},
			plan.ConstantRow{Datums: []row.Datum{row.Int64(2), row.Int64(0)}, Diff: 3})))),
			"(1, 10) x1; (2, 20) x1", ""},
		{"distinct of negative", plan.NewDistinct(plan.NewNegate(get2)), "", "(XX000, distinct: negative multiplicity in input) x2"},
		{"topk", plan.NewTopK(get1, []int{0}, []plan.ColumnOrder{{Column: 1, Desc: true}}, lim(1), 0), "(1, 10) x1; (2, 20) x1", ""},
		{"topk offset", plan.NewTopK(get1, nil, []plan.ColumnOrder{{Column: 1}}, lim(2), 1), "(1, 10) x2", ""},
		{"topk no limit", plan.NewTopK(get1, nil, []plan.ColumnOrder{{Column: 1}}, nil, 3), "(2, 20) x1", ""},
		{"arrange by", plan.NewArrangeBy(get2, []expr.Expr{col(1)}), "(1, 5) x1; (3, 7) x1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EvalPlan(&tt.p, env)
			if err != nil {
				t.Fatal(err)
			}
			if g := render(got.Rows); g != tt.want {
				t.Errorf("rows:\n got  %s\n want %s", g, tt.want)
			}
			if g := render(got.Errors); g != tt.wantErrs {
				t.Errorf("errors:\n got  %s\n want %s", g, tt.wantErrs)
			}
		})
	}
}

func TestEvaluateDataflow(t *testing.T) {
	desc := plan.DataflowDescription{
		ID:            plan.User(10),
		SourceImports: []plan.SourceImport{{ID: src1}},
		ObjectsToBuild: []plan.Build{{ID: plan.User(11), Plan: plan.NewMfp(plan.NewGet(src1),
			expr.MFP{Expressions: []expr.Expr{expr.Div(expr.Column(0), expr.Column(1))}, Projection: []int{0, 2}})}},
		IndexExports: []plan.IndexExport{{ID: plan.User(12), On: plan.User(11), Key: []expr.Expr{expr.Div(expr.Literal(row.Int64(4)), expr.Column(0))}}},
		AsOf:         frontier.At(0),
		Until:        frontier.Closed(),
		Class:        plan.ClassMaintained,
	}
	upds := []Update{{ints(2, 1), 1, 1}, {ints(0, 1), 2, 1}, {ints(3, 0), 3, 2}, {ints(2, 1), 4, -1}}
	for _, tt := range []struct {
		t          frontier.Time
		rows, errs string
	}{
		{0, "", ""},
		{1, "(2, 2) x1", ""},
		{2, "(2, 2) x1", "(22012, division by zero) x1"},
		{3, "(2, 2) x1", "(22012, division by zero) x3"},
		{4, "", "(22012, division by zero) x3"},
	} {
		out, err := Evaluate(&desc, map[plan.GlobalID]Result{src1: {Rows: AsOf(upds, tt.t), Errors: Collection{}}})
		if err != nil {
			t.Fatal(err)
		}
		idx := out[plan.User(12)]
		if g := render(idx.Rows); g != tt.rows {
			t.Errorf("at %d rows: got %s want %s", tt.t, g, tt.rows)
		}
		if g := render(idx.Errors); g != tt.errs {
			t.Errorf("at %d errors: got %s want %s", tt.t, g, tt.errs)
		}
	}
	if _, err := Evaluate(&desc, nil); err == nil {
		t.Error("missing input: want error")
	}
}
