package enginetest

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// letPlans are Let shapes over the edge table B(a, c) (see graphPlans):
// a value read twice, a value read by nothing (whose division by zero
// must not reach the output), nested lets, and lets inside a recursive
// step, one over the working table and one over the edges.
func letPlans(edges plan.GlobalID) map[string]plan.Plan {
	l, v, w := plan.Local(1), plan.Local(2), plan.Local(3)
	col := expr.Column
	one := expr.Literal(row.Int64(1))
	// Edges a -> c with a < c + 1, and a column 1 / (a - c) that fails on
	// self-loops.
	forward := plan.NewMfp(plan.NewGet(edges), expr.Identity(2).
		Map(expr.Div(one, expr.Sub(col(0), col(1)))).
		Filter(expr.Lt(col(0), expr.Add(col(1), one))))
	paths2 := func(p plan.Plan, q plan.Plan) plan.Plan {
		return plan.NewMfp(plan.NewJoin(p, q, []expr.Expr{col(1)}, []expr.Expr{col(0)}), expr.MFP{Projection: []int{0, 3}})
	}
	return map[string]plan.Plan{
		"twice":  plan.NewLet(v, forward, plan.NewJoin(plan.NewGet(v), plan.NewGet(v), []expr.Expr{col(1)}, []expr.Expr{col(0)})),
		"unused": plan.NewLet(v, forward, plan.NewDistinct(plan.NewGet(edges))),
		"nested": plan.NewLet(v, plan.NewGet(edges),
			plan.NewLet(w, plan.NewDistinct(paths2(plan.NewGet(v), plan.NewGet(v))),
				plan.NewUnion(paths2(plan.NewGet(w), plan.NewGet(v)), plan.NewNegate(plan.NewGet(w)), plan.NewGet(v)))),
		"in step": plan.NewRecursive(l, "closure", plan.NewGet(edges),
			plan.NewLet(v, plan.NewGet(l),
				plan.NewLet(w, plan.NewGet(edges),
					plan.NewUnion(paths2(plan.NewGet(v), plan.NewGet(w)), paths2(plan.NewGet(v), plan.NewMfp(plan.NewGet(w), expr.MFP{Projection: []int{1, 0}}))))),
			true, 8),
	}
}

// TestLetMatchesReference maintains Let shapes over a random, changing
// graph through the real runtime and compares every read with the
// reference evaluator, which evaluates a Let as the tree it stands for.
func TestLetMatchesReference(t *testing.T) {
	names := []string{"twice", "unused", "nested", "in step"}
	checkShapes(t, 7000, checks()/8, func(rt *rapid.T, g *planGen) plan.Plan {
		return letPlans(g.ids[1])[rapid.SampledFrom(names).Draw(rt, "let_shape")]
	})
}
