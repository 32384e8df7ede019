package render

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// incShape is a recursion over an edge table for the incremental tests:
// its plan, and which of the compiled fixpoint's inputs are the edge
// table (the others are fixed: their contents come from constRows).
type incShape struct {
	name      string
	p         plan.Plan
	edgeInput []bool
	constRows map[int][]byte
}

func incShapes(limit int64) []incShape {
	l, edges := plan.Local(1), plan.User(7)
	col, lit := expr.Column, func(n int64) expr.Expr { return expr.Literal(row.Int64(n)) }
	intDesc := row.RelationDesc{Names: []string{"n"}, Types: []row.ColumnType{{Type: row.TypeInt64}}}
	root := plan.NewConstant(intDesc, plan.ConstantRow{Datums: []row.Datum{row.Int64(0)}, Diff: 1})
	// (a, b) -> (a, e.dst) for r.b = e.src
	closure := plan.NewMfp(plan.NewJoin(plan.NewGet(l), plan.NewGet(edges), []expr.Expr{col(1)}, []expr.Expr{col(0)}), expr.MFP{Projection: []int{0, 3}})
	// n -> e.dst for e.src = n (the edge table on the left)
	reach := plan.NewMfp(plan.NewJoin(plan.NewGet(edges), plan.NewGet(l), []expr.Expr{col(0)}, []expr.Expr{col(0)}), expr.MFP{Projection: []int{1}})
	// (n, d) -> (e.dst, d + 1) while d < 4
	bounded := plan.NewMfp(plan.NewJoin(plan.NewGet(l), plan.NewGet(edges), []expr.Expr{col(0)}, []expr.Expr{col(0)}),
		expr.MFP{Expressions: []expr.Expr{expr.Add(col(1), lit(1))}, Predicates: []expr.Expr{expr.Lt(col(1), lit(4))}, Projection: []int{3, 4}})
	rootDepth := plan.NewConstant(row.RelationDesc{Names: []string{"n", "d"}, Types: []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}}},
		plan.ConstantRow{Datums: []row.Datum{row.Int64(0), row.Int64(0)}, Diff: 1})
	// forward and backward edges: a union of two arms over the binding
	both := plan.NewUnion(reach, plan.NewMfp(plan.NewJoin(plan.NewGet(l), plan.NewGet(edges), []expr.Expr{col(0)}, []expr.Expr{col(1)}), expr.MFP{Projection: []int{1}}))
	// reach, failing with division by zero on reaching node 5
	failing := plan.NewMfp(reach, expr.MFP{Expressions: []expr.Expr{expr.Div(lit(10), expr.Sub(col(0), lit(5)))}, Projection: []int{0}})
	one := ints(0)
	zero := ints(0, 0)
	return []incShape{
		{"closure", plan.NewRecursive(l, "c", plan.NewGet(edges), closure, true, limit), []bool{true, true}, nil},
		{"reach", plan.NewRecursive(l, "r", root, reach, true, limit), []bool{false, true}, map[int][]byte{0: one}},
		{"bounded depth", plan.NewRecursive(l, "b", rootDepth, bounded, true, limit), []bool{false, true}, map[int][]byte{0: zero}},
		{"union of arms", plan.NewRecursive(l, "u", root, both, true, limit), []bool{false, true, true}, map[int][]byte{0: one}},
		{"step error", plan.NewRecursive(l, "f", root, failing, true, limit), []bool{false, true}, map[int][]byte{0: one}},
	}
}

// outputState accumulates an operator's output changes.
type outputState struct {
	rows map[string]int64
	errs map[string]int64
}

func (o *outputState) apply(ds []outDelta) {
	for _, d := range ds {
		m, k := o.rows, string(d.val)
		if d.err != nil {
			m, k = o.errs, d.err.Error()
		}
		if m[k] += d.diff; m[k] == 0 {
			delete(m, k)
		}
	}
}

// TestIncrementalFixpointDifferential applies random edge inserts,
// deletes and updates (several seeds) to incrementally maintained
// recursions and checks after every change that the accumulated output
// equals Fixpoint.Run's from-scratch result over the same inputs,
// errors included.
func TestIncrementalFixpointDifferential(t *testing.T) {
	for _, limit := range []int64{3, 100} {
		for _, sh := range incShapes(limit) {
			for seed := uint64(1); seed <= 6; seed++ {
				t.Run(fmt.Sprintf("%s/limit=%d/seed=%d", sh.name, limit, seed), func(t *testing.T) {
					runDifferential(t, sh, seed, 150)
				})
			}
		}
	}
}

func runDifferential(t *testing.T, sh incShape, seed uint64, steps int) {
	if !sh.p.Recursive.Incremental() {
		t.Fatalf("%s is not planned incremental", sh.name)
	}
	fp, err := CompileRecursive(sh.p.Recursive)
	if err != nil {
		t.Fatal(err)
	}
	if len(fp.Inputs) != len(sh.edgeInput) {
		t.Fatalf("%d inputs, want %d", len(fp.Inputs), len(sh.edgeInput))
	}
	r := rand.New(rand.NewPCG(seed, 99))
	s := newIncFix(fp)
	out := outputState{rows: map[string]int64{}, errs: map[string]int64{}}
	edges := map[string]int64{}
	nodes := 3 + r.IntN(8)
	var first []change
	for i, v := range sh.constRows {
		first = append(first, change{input: i, val: v, diff: 1})
	}
	edge := func() []byte { return ints(int64(r.IntN(nodes)), int64(r.IntN(nodes))) }
	for step := 0; step < steps; step++ {
		var delta []operators.ValDiff
		switch k := r.IntN(10); {
		case k < 5 || len(edges) == 0:
			for range 1 + r.IntN(3) {
				delta = append(delta, operators.ValDiff{Val: edge(), Diff: 1})
			}
		case k < 8:
			delta = append(delta, operators.ValDiff{Val: []byte(anyKey(r, edges)), Diff: -1})
		default: // update: one edge replaced by another at the same time
			delta = append(delta, operators.ValDiff{Val: []byte(anyKey(r, edges)), Diff: -1}, operators.ValDiff{Val: edge(), Diff: 1})
		}
		delta = operators.Consolidate(delta)
		changes := first
		first = nil
		for _, d := range delta {
			if edges[string(d.Val)] += d.Diff; edges[string(d.Val)] == 0 {
				delete(edges, string(d.Val))
			}
			for i, isEdge := range sh.edgeInput {
				if isEdge {
					changes = append(changes, change{input: i, val: d.Val, diff: d.Diff})
				}
			}
		}
		out.apply(s.Apply(changes))
		want, wantErr := fp.Run(s.contents())
		if msg := compareOutput(out, want, wantErr); msg != "" {
			t.Fatalf("step %d (%d edges, change %v): %s", step, len(edges), delta, msg)
		}
	}
}

func anyKey(r *rand.Rand, m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		keys = append(keys, k)
	}
	// map order is random; sort for a reproducible pick
	slices.Sort(keys)
	return keys[r.IntN(len(keys))]
}

func compareOutput(got outputState, want []operators.ValDiff, wantErr error) string {
	if wantErr != nil {
		if len(got.rows) != 0 || len(got.errs) != 1 || got.errs[wantErr.Error()] != 1 {
			return fmt.Sprintf("want only the error %q, got %d rows and errors %v", wantErr, len(got.rows), got.errs)
		}
		return ""
	}
	if len(got.errs) != 0 {
		return fmt.Sprintf("want %d rows, got errors %v", len(want), got.errs)
	}
	if len(got.rows) != len(want) {
		return fmt.Sprintf("got %d rows, want %d", len(got.rows), len(want))
	}
	for _, w := range want {
		if got.rows[string(w.Val)] != w.Diff {
			return fmt.Sprintf("row %v: got multiplicity %d, want %d", row.Row(w.Val), got.rows[string(w.Val)], w.Diff)
		}
	}
	return ""
}

// incWork applies changes and returns the rows the fixpoint touched and
// the output change.
func incWork(t *testing.T, s *incFix, changes ...change) (int64, []outDelta) {
	t.Helper()
	before := s.work
	out := s.Apply(changes)
	if !s.valid {
		t.Fatal("incremental state invalid after the change")
	}
	return s.work - before, out
}

func edgeChange(src, dst, diff int64) change {
	return change{input: 1, val: ints(src, dst), diff: diff}
}

// graphWork builds the reachability recursion from node 0 over a graph of
// n edges (a chain 0 -> 1 -> ... -> n, or a tree where node i's parent is
// i/2) and returns the work of: inserting one edge below the last node,
// deleting it again, and deleting the edge above a part of 100 nodes.
func graphWork(t *testing.T, n int64, tree bool) [3]int64 {
	sh := incShapes(1 << 30)[1] // reach
	fp, err := CompileRecursive(sh.p.Recursive)
	if err != nil {
		t.Fatal(err)
	}
	s := newIncFix(fp)
	parent := func(i int64) int64 { return i - 1 }
	if tree {
		parent = func(i int64) int64 { return i / 2 }
	}
	build := []change{{input: 0, val: ints(0), diff: 1}}
	for i := int64(1); i <= n; i++ {
		build = append(build, edgeChange(parent(i), i, 1))
	}
	if _, out := incWork(t, s, build...); int64(len(out)) != n+1 {
		t.Fatalf("built %d rows, want %d", len(out), n+1)
	}
	var w [3]int64
	var out []outDelta
	if w[0], out = incWork(t, s, edgeChange(n, n+1, 1)); len(out) != 1 || out[0].diff != 1 {
		t.Fatalf("insert: output %v, want one new row", out)
	}
	if w[1], out = incWork(t, s, edgeChange(n, n+1, -1)); len(out) != 1 || out[0].diff != -1 {
		t.Fatalf("delete: output %v, want one row retracted", out)
	}
	// The part below the cut: the last 100 nodes of the chain, or the
	// subtree of 100 nodes hung below the last node of the tree.
	cut := [2]int64{n - 100, n - 99}
	if tree {
		for i := int64(1); i <= 100; i++ {
			incWork(t, s, edgeChange(n+i-1, n+i, 1))
		}
		cut = [2]int64{n, n + 1}
	}
	if w[2], out = incWork(t, s, edgeChange(cut[0], cut[1], -1)); len(out) != 100 {
		t.Fatalf("delete above 100 nodes: %d rows retracted, want 100", len(out))
	}
	return w
}

// TestIncrementalFixpointWork checks that a change costs work in
// proportion to the derivations it changes, not to the size of the
// result: one edge inserted below a chain or a tree of 10k or 100k edges,
// the same edge deleted, and an edge above a part of 100 nodes deleted
// cost the same number of touched rows at both sizes.
func TestIncrementalFixpointWork(t *testing.T) {
	for _, tree := range []bool{false, true} {
		small, large := graphWork(t, 10_000, tree), graphWork(t, 100_000, tree)
		t.Logf("tree=%v: work at 10k edges %v, at 100k edges %v", tree, small, large)
		if small != large {
			t.Errorf("tree=%v: work at 10k edges %v, at 100k edges %v: want equal", tree, small, large)
		}
		if small[0] > 20 || small[1] > 20 || small[2] > 100*20 {
			t.Errorf("tree=%v: work %v: want at most 20 rows per changed derivation", tree, small)
		}
	}
}
