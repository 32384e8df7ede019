package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func ints(ns ...int64) []byte {
	ds := make([]row.Datum, len(ns))
	for i, n := range ns {
		ds[i] = row.Int64(n)
	}
	return row.Pack(ds...)
}

func TestFixpointRun(t *testing.T) {
	l, edges := plan.Local(1), plan.User(7)
	col, lit := expr.Column, func(n int64) expr.Expr { return expr.Literal(row.Int64(n)) }
	one := plan.NewConstant(row.RelationDesc{Names: []string{"n"}, Types: []row.ColumnType{{Type: row.TypeInt64}}},
		plan.ConstantRow{Datums: []row.Datum{row.Int64(1)}, Diff: 1})
	// n + 1 while n < 5
	count := plan.NewMfp(plan.NewGet(l), expr.MFP{Expressions: []expr.Expr{expr.Add(col(0), lit(1))},
		Predicates: []expr.Expr{expr.Lt(col(0), lit(5))}, Projection: []int{1}})
	closure := plan.NewMfp(plan.NewJoin(plan.NewGet(l), plan.NewGet(edges), []expr.Expr{col(1)}, []expr.Expr{col(0)}), expr.MFP{Projection: []int{0, 3}})
	cycle := []operators.ValDiff{{Val: ints(1, 2), Diff: 1}, {Val: ints(2, 3), Diff: 1}, {Val: ints(3, 1), Diff: 1}}
	tests := []struct {
		name    string
		p       plan.Plan
		inputs  func(*Fixpoint) [][]operators.ValDiff
		want    []operators.ValDiff
		wantErr string
	}{
		{"counting", plan.NewRecursive(l, "t", one, count, false, 10), nil,
			[]operators.ValDiff{{Val: ints(1), Diff: 1}, {Val: ints(2), Diff: 1}, {Val: ints(3), Diff: 1}, {Val: ints(4), Diff: 1}, {Val: ints(5), Diff: 1}}, ""},
		// Four evaluations of the step reach 5; the fifth finds nothing.
		{"limit just enough", plan.NewRecursive(l, "t", one, count, false, 5), nil, nil, ""},
		{"limit one short", plan.NewRecursive(l, "t", one, count, false, 4), nil, nil, `recursive query "t" did not reach a fixed point within 4 iterations`},
		{"closure of a cycle", plan.NewRecursive(l, "c", plan.NewGet(edges), closure, true, 10),
			func(fp *Fixpoint) [][]operators.ValDiff { return [][]operators.ValDiff{cycle, cycle} }, nil, ""},
		{"cycle under UNION ALL", plan.NewRecursive(l, "c", plan.NewGet(edges), closure, false, 10),
			func(fp *Fixpoint) [][]operators.ValDiff { return [][]operators.ValDiff{cycle, cycle} }, nil, "within 10 iterations"},
		{"negative base", plan.NewRecursive(l, "t", one, count, true, 10),
			func(*Fixpoint) [][]operators.ValDiff { return [][]operators.ValDiff{{{Val: ints(1), Diff: -1}}} }, nil, "negative multiplicity"},
		{"division by zero in the step", plan.NewRecursive(l, "t", one, plan.NewMfp(plan.NewGet(l), expr.MFP{Expressions: []expr.Expr{expr.Div(col(0), lit(0))}, Projection: []int{1}}), false, 10),
			nil, nil, "division by zero"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fp, err := CompileRecursive(tc.p.Recursive)
			if err != nil {
				t.Fatal(err)
			}
			in := [][]operators.ValDiff{{{Val: ints(1), Diff: 1}}}
			if tc.inputs != nil {
				in = tc.inputs(fp)
			}
			if len(in) != len(fp.Inputs) {
				t.Fatalf("%d inputs, the compiled step has %d", len(in), len(fp.Inputs))
			}
			got, err := fp.Run(in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "closure of a cycle" {
				if len(got) != 9 {
					t.Fatalf("closure of a 3-cycle has %d pairs, want 9: %v", len(got), got)
				}
				return
			}
			if tc.want != nil && !sameValDiffs(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFixpointLimitErrorIsCoded(t *testing.T) {
	l := plan.Local(1)
	p := plan.NewRecursive(l, "t", plan.NewConstant(row.RelationDesc{Names: []string{"n"}, Types: []row.ColumnType{{Type: row.TypeInt64}}},
		plan.ConstantRow{Datums: []row.Datum{row.Int64(1)}, Diff: 1}), plan.NewGet(l), false, 3)
	fp, err := CompileRecursive(p.Recursive)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fp.Run([][]operators.ValDiff{{{Val: ints(1), Diff: 1}}})
	var coded interface{ SQLState() string }
	if !errors.As(err, &coded) || coded.SQLState() != "54000" {
		t.Fatalf("err = %v, want SQLSTATE 54000", err)
	}
}

// A dropped dataflow abandons a long re-derivation between rounds.
func TestFixpointStops(t *testing.T) {
	l := plan.Local(1)
	p := plan.NewRecursive(l, "t", plan.NewConstant(row.RelationDesc{Names: []string{"n"}, Types: []row.ColumnType{{Type: row.TypeInt64}}},
		plan.ConstantRow{Datums: []row.Datum{row.Int64(1)}, Diff: 1}), plan.NewGet(l), false, 1<<40)
	fp, err := CompileRecursive(p.Recursive)
	if err != nil {
		t.Fatal(err)
	}
	polls := 0
	fp.Stop = func() bool { polls++; return polls > 3 }
	defer func() {
		if r := recover(); r != (stepAbandoned{}) {
			t.Fatalf("recovered %v, want stepAbandoned", r)
		}
	}()
	_, _ = fp.Run([][]operators.ValDiff{{{Val: ints(1), Diff: 1}}})
	t.Fatal("Run returned from an endless recursion")
}
