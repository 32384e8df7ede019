package enginetest

import (
	"flag"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// graphPlans are WITH RECURSIVE shapes over the edge table B(a, c) (an
// edge a -> c; c may be NULL), whose random updates over a tiny node
// domain make graphs with cycles, self-loops and duplicate edges, edges
// inserted and deleted at random times.
func graphPlans(edges plan.GlobalID) map[string]func(limit int64) plan.Plan {
	l := plan.Local(1)
	col, lit := expr.Column, func(n int64) expr.Expr { return expr.Literal(row.Int64(n)) }
	// r(x, y) JOIN edges(a, c) ON r.y = edges.a: columns x, y, a, c.
	extend := plan.NewJoin(plan.NewGet(l), plan.NewGet(edges), []expr.Expr{col(1)}, []expr.Expr{col(0)})
	return map[string]func(int64) plan.Plan{
		// Transitive closure: (a, c) UNION (r.x, e.c) over r.y = e.a.
		"closure": func(limit int64) plan.Plan {
			return plan.NewRecursive(l, "closure", plan.NewGet(edges), plan.NewMfp(extend, expr.MFP{Projection: []int{0, 3}}), true, limit)
		},
		// Nodes reachable from node 1.
		"reachable": func(limit int64) plan.Plan {
			base := plan.NewConstant(row.RelationDesc{Names: []string{"n"}, Types: []row.ColumnType{{Type: row.TypeInt64}}},
				plan.ConstantRow{Datums: []row.Datum{row.Int64(1)}, Diff: 1})
			step := plan.NewMfp(plan.NewJoin(plan.NewGet(l), plan.NewGet(edges), []expr.Expr{col(0)}, []expr.Expr{col(0)}), expr.MFP{Projection: []int{2}})
			return plan.NewRecursive(l, "reachable", base, step, true, limit)
		},
		// Walks of at most 3 edges, each counted (UNION ALL): (x, y, hops).
		"walks": func(limit int64) plan.Plan {
			base := plan.NewMfp(plan.NewGet(edges), expr.MFP{Expressions: []expr.Expr{lit(1)}, Projection: []int{0, 1, 2}})
			step := plan.NewMfp(plan.NewJoin(plan.NewGet(l), plan.NewGet(edges), []expr.Expr{col(1)}, []expr.Expr{col(0)}),
				expr.MFP{
					Expressions: []expr.Expr{expr.Add(col(2), lit(1))},
					Predicates:  []expr.Expr{expr.Lt(col(2), lit(3))},
					Projection:  []int{0, 4, 5},
				})
			return plan.NewRecursive(l, "walks", base, step, false, limit)
		},
		// Unbounded walks: cycles make UNION ALL diverge, so the view is
		// in error (the iteration limit) exactly while the graph has a
		// cycle reachable from an edge, and recovers when it goes.
		"diverging": func(limit int64) plan.Plan {
			return plan.NewRecursive(l, "diverging", plan.NewGet(edges), plan.NewMfp(extend, expr.MFP{Projection: []int{0, 3}}), false, limit)
		},
	}
}

// TestRecursiveMatchesReference maintains WITH RECURSIVE shapes over a
// random, changing graph through the real runtime (workers, processes,
// exchange, the fixpoint operator, index reads at random times, subscribe
// sinks) and compares every read with the reference evaluator: the
// maintained fixed point must follow inserts and deletes of edges,
// retracting derived rows that lose their last derivation.
func TestRecursiveMatchesReference(t *testing.T) {
	names := []string{"closure", "reachable", "walks", "diverging"}
	// A quarter of -rapid.checks cases keeps the default run short (each
	// case runs a dataflow); longer runs scale with the flag.
	checkShapes(t, 5000, checks()/4, func(rt *rapid.T, g *planGen) plan.Plan {
		shape := rapid.SampledFrom(names).Draw(rt, "recursive_shape")
		limit := int64(rapid.SampledFrom([]int{3, 8, 100}).Draw(rt, "limit"))
		return graphPlans(g.ids[1])[shape](limit)
	})
}

// checkShapes runs budget cases, each a plan drawn by draw over random
// changing sources, through the real runtime (workers, processes,
// exchange, index reads at random times, subscribe sinks) and compares
// every read with the reference evaluator; ids count up from firstID.
func checkShapes(t *testing.T, firstID uint64, budget int, draw func(rt *rapid.T, g *planGen) plan.Plan) {
	engines := make([]*engine, len(shapes))
	var stats coverage
	nextID := firstID
	fresh := func() plan.GlobalID { nextID++; return plan.User(nextID) }
	cases := 0
	rapid.Check(t, func(rt *rapid.T) {
		if cases++; cases > budget {
			return
		}
		si := rapid.IntRange(0, len(shapes)-1).Draw(rt, "shape")
		if engines[si] == nil || len(engines[si].h.Fatal()) > 0 {
			engines[si] = newEngine(t, shapes[si], &stats, fresh)
		}
		fx := newFixture(rt, engines[si], fresh, func(g *planGen) plan.Plan { return draw(rt, g) })
		fx.run(rt)
	})
	t.Logf("reads compared: %d (%d with rows, %d reporting errors); subscribe times compared: %d",
		stats.reads, stats.withRows, stats.withErrors, stats.subscribed)
	if stats.reads > 50 && (stats.withRows == 0 || stats.withErrors == 0) {
		t.Errorf("the generated cases never compared rows or never compared errors: the property is vacuous")
	}
}

// checks is the -rapid.checks setting (1000 by default).
func checks() int {
	if f := flag.Lookup("rapid.checks"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil {
			return n
		}
	}
	return 1000
}
