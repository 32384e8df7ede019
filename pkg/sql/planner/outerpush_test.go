package planner

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestRejectsNulls checks which conditions may turn an outer join into
// an inner one: those that are NULL or false when the padded side's
// columns (here #2 and #3) are NULL.
func TestRejectsNulls(t *testing.T) {
	c := expr.Column
	lit := func(v int64) expr.Expr { return expr.Literal(row.Int64(v)) }
	padded := inRange(2, 4)
	tests := []struct {
		name string
		e    expr.Expr
		want bool
	}{
		{"padded column compared", expr.Eq(c(2), lit(1)), true},
		{"preserved column only", expr.Eq(c(0), lit(1)), false},
		{"arithmetic over both", expr.Gt(expr.Add(c(0), c(3)), lit(1)), true},
		{"IS NOT NULL", expr.Not(expr.IsNull(c(3))), true},
		{"IS NULL keeps NULLs", expr.IsNull(c(3)), false},
		{"NOT of a comparison", expr.Not(expr.Eq(c(2), lit(1))), true},
		{"AND with one rejecting arm", expr.And(expr.IsNull(c(0)), expr.Lt(c(2), lit(1))), true},
		{"OR with a NULL-keeping arm", expr.Or(expr.IsNull(c(2)), expr.Lt(c(2), lit(1))), false},
		{"OR of rejecting arms", expr.Or(expr.Gt(c(2), lit(3)), expr.Lt(c(3), lit(1))), true},
		{"OR with a preserved-side arm", expr.Or(expr.Eq(c(0), lit(1)), expr.Lt(c(2), lit(1))), false},
		{"COALESCE hides NULLs", expr.Lt(expr.Coalesce(c(2), lit(0)), lit(5)), false},
		{"cast of a padded column", expr.Eq(expr.Cast(c(2), row.TypeInt64), lit(1)), true},
	}
	for _, tc := range tests {
		if got := rejectsNulls(tc.e, padded); got != tc.want {
			t.Errorf("%s: rejectsNulls = %v, want %v", tc.name, got, tc.want)
		}
	}
}
