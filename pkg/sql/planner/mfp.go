package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// rel is a relation being planned: a base plan, a pending MFP over the
// base's columns, and the scope naming the MFP's output columns. Maps,
// filters and projections compose into the pending MFP, so a query over
// one collection becomes a single Mfp over a Get (the shape fast-path
// detection looks for) instead of a chain of Mfp nodes.
type rel struct {
	base      plan.Plan
	baseArity int
	mfp       expr.MFP
	scope     *scope
	// subs are the subquery expressions already lowered over this rel,
	// so that lowering one again (a grouped query's second pass) reuses
	// the columns it added.
	subs map[*pg.SubLink]typed
	// origin, when set, is r's relation before the subquery columns
	// extend appended: the same rows, its first originArity columns
	// r's first. A filter or projection clears it (rows or columns
	// change).
	origin      *plan.Plan
	originArity int
	// readByApply is set when general decorrelation read the rel's rows
	// for a subquery's outer values (sharedrel.go).
	readByApply bool
}

// newRel wraps a plan whose output columns are named by s.
func newRel(p plan.Plan, s *scope) *rel {
	return &rel{base: p, baseArity: len(s.cols), mfp: expr.Identity(len(s.cols)), scope: s}
}

// plan returns the relation as a plan.
func (r *rel) plan() plan.Plan {
	if r.mfp.IsIdentity(r.baseArity) {
		return r.base
	}
	return plan.NewMfp(r.base, r.mfp)
}

// arity is the number of output columns.
func (r *rel) arity() int { return len(r.mfp.Projection) }

// toBase maps an expression over r's output columns to one over the
// columns of the pending MFP before projection.
func (r *rel) toBase(e expr.Expr) expr.Expr {
	return e.Substitute(func(c int) (expr.Expr, bool) {
		if c >= 0 && c < len(r.mfp.Projection) {
			return expr.Column(r.mfp.Projection[c]), true
		}
		return expr.Expr{}, false
	})
}

// filter keeps rows where every predicate (over r's output) is true.
func (r *rel) filter(preds ...expr.Expr) {
	if len(preds) > 0 {
		r.origin = nil
	}
	for _, p := range preds {
		r.mfp.Predicates = append(r.mfp.Predicates, r.toBase(p))
	}
}

// project replaces r's output by the given expressions over its current
// output, with s naming the new columns. Plain column references are
// projected without new expressions.
func (r *rel) project(es []expr.Expr, s *scope) {
	proj := make([]int, len(es))
	for i, e := range es {
		if e.Op == expr.OpColumn && e.Index >= 0 && e.Index < len(r.mfp.Projection) {
			proj[i] = r.mfp.Projection[e.Index]
			continue
		}
		r.mfp.Expressions = append(r.mfp.Expressions, r.toBase(e))
		proj[i] = r.baseArity + len(r.mfp.Expressions) - 1
	}
	r.mfp.Projection = proj
	r.scope = s
	r.origin = nil
}

// rowSource returns a plan with r's rows whose columns cols are r's, and
// its arity: the
// relation before its subquery columns when cols are all among its
// columns, so that a subquery's distinct outer values (apply.go) do not
// read the plans of the subqueries attached before it. Without shared
// bindings in the plan IR, each of those reads r's whole plan again, and
// a level with several correlated subqueries would grow by the square.
func (r *rel) rowSource(cols []int) (plan.Plan, int) {
	if !r.hasOrigin(cols) {
		return r.plan(), r.arity()
	}
	return *r.origin, r.originArity
}

// hasOrigin reports whether rowSource(cols) reads the relation before
// r's subquery columns.
func (r *rel) hasOrigin(cols []int) bool {
	if r.origin == nil {
		return false
	}
	for _, c := range cols {
		if c >= r.originArity {
			return false
		}
	}
	return true
}

// extend replaces r's relation by p, whose rows are r's rows followed by
// the columns cols. The scope grows in place: expressions already lowered
// over r stay valid, and every context holding the scope sees the new
// columns.
func (r *rel) extend(p plan.Plan, cols []column) {
	if r.origin == nil {
		o := r.plan()
		r.origin, r.originArity = &o, r.arity()
	}
	r.scope.cols = append(r.scope.cols, cols...)
	r.base, r.baseArity, r.mfp = p, len(r.scope.cols), expr.Identity(len(r.scope.cols))
}
