package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// srfScope collects, then resolves, the set-returning function calls of
// a select list (and ORDER BY), which PostgreSQL 10+ evaluates after
// GROUP BY, HAVING and window functions and before DISTINCT, ORDER BY and
// LIMIT: each row of the query so far is followed by each row the call
// produces for it, and a row for which it produces none is dropped. The
// planner makes that a FlatMap, the plan of a function in FROM
// (tablefunc.go), over the query's relation at that point.
//
// A call nested in another's arguments (generate_series(1,
// generate_series(1, 3))) runs first: as PostgreSQL's ProjectSet nodes,
// each call has a level, one more than the deepest call in its
// arguments, and each level is a FlatMap over the one below, its calls
// in lockstep.
//
// The outputs are lowered once collecting (a call lowers its arguments
// and stands for a NULL of its type), then after each level's FlatMap is
// built they are lowered again: the built calls resolve to their
// columns, the others lower their arguments again over them. The last
// lowering resolves every call.
type srfScope struct {
	resolve bool
	calls   []*srfCall
	byNode  map[*pg.FuncCall]*srfCall
	// argLevel is the deepest level of the calls met while a call's
	// arguments are lowered (-1: none).
	argLevel int
}

// srfCall is one set-returning call of the select list.
type srfCall struct {
	call expr.TableCall
	col  column
	// level is one more than the deepest call in the arguments.
	level int
	// built is set once the call's FlatMap exists; at is then its column
	// in the relation after it.
	built bool
	at    int
}

// isSetReturning reports whether name is a set-returning function.
func isSetReturning(name string) bool {
	return unsupportedFunction(name) == "set-returning functions"
}

// setReturningCall lowers a set-returning function call: refused outside
// the select list (PostgreSQL's 0A000, "set-returning functions are not
// allowed in WHERE"), collected or resolved within it.
func (c *exprCtx) setReturningCall(fc *pg.FuncCall, name string) (typed, error) {
	s := c.srf
	if s == nil {
		return typed{}, sqlerr.Errorf(sqlerr.FeatureNotSupported, "set-returning functions are not allowed in %s", c.clauseName())
	}
	sc, ok := s.byNode[fc]
	if ok && sc.built {
		s.argLevel = max(s.argLevel, sc.level)
		return typed{e: expr.Column(sc.at), t: sc.col.typ, w: sc.col.w, mod: sc.col.mod}, nil
	}
	if s.resolve {
		return typed{}, sqlerr.Errorf(sqlerr.InternalError, "set-returning call %s not collected", name)
	}
	outer := s.argLevel
	s.argLevel = -1
	call, cols, err := c.tableCall(name, fc.Args)
	level := s.argLevel + 1
	s.argLevel = max(outer, level)
	if err != nil {
		return typed{}, err
	}
	if len(cols) != 1 {
		return typed{}, sqlerr.Unsupported("set-returning functions of several columns in the select list (function " + name + ")")
	}
	if !ok {
		if s.byNode == nil {
			s.byNode = map[*pg.FuncCall]*srfCall{}
		}
		// The same call written twice (in DISTINCT ON and ORDER BY) is
		// one column, as PostgreSQL matches equal expressions.
		if sc = s.same(call, level); sc == nil {
			sc = &srfCall{}
			s.calls = append(s.calls, sc)
		}
		s.byNode[fc] = sc
	}
	// Lowered again once the calls in its arguments are built.
	sc.call, sc.col, sc.level = call, cols[0], level
	return typed{e: expr.TypedNull(sc.col.typ.Type), t: sc.col.typ, w: sc.col.w, mod: sc.col.mod}, nil
}

// same is the collected call of level equal to call, or nil.
func (s *srfScope) same(call expr.TableCall, level int) *srfCall {
	for _, sc := range s.calls {
		if sc.level == level && !sc.built && sameTableCall(sc.call, call) {
			return sc
		}
	}
	return nil
}

func sameTableCall(a, b expr.TableCall) bool {
	if a.Func != b.Func || len(a.Args) != len(b.Args) {
		return false
	}
	for i := range a.Args {
		if !a.Args[i].Equal(b.Args[i]) {
			return false
		}
	}
	return true
}

// buildSRFs adds the FlatMap of the collected calls of the lowest level
// not built yet to r, and readies s to resolve them to its columns (s
// resolves every call once the last level is built). Several calls run
// in lockstep (expr.TableRowsFrom), the shorter padded with NULLs, as in
// PostgreSQL 10+.
func buildSRFs(r *rel, s *srfScope) *rel {
	level := -1
	for _, sc := range s.calls {
		if !sc.built && (level < 0 || sc.level < level) {
			level = sc.level
		}
	}
	var calls []*srfCall
	last := true
	for _, sc := range s.calls {
		switch {
		case sc.built:
		case sc.level == level:
			calls = append(calls, sc)
		default:
			last = false
		}
	}
	call := calls[0].call
	if len(calls) > 1 {
		tcs := make([]expr.TableCall, len(calls))
		widths := make([]int, len(calls))
		for i, sc := range calls {
			tcs[i], widths[i] = sc.call, 1
		}
		call = expr.RowsFrom(tcs, widths)
	}
	cols := make([]column, len(calls))
	for i, sc := range calls {
		sc.at, sc.built = r.arity()+i, true
		if len(calls) > 1 {
			sc.col.typ.Nullable = true
		}
		cols[i] = column{name: "?set-returning?", typ: sc.col.typ, w: sc.col.w, mod: sc.col.mod, hidden: true}
	}
	out := newRel(plan.NewFlatMap(r.plan(), call, false), r.scope.concat(&scope{cols: cols}))
	// Subqueries of the select list attached to r keep their columns.
	out.subs = r.subs
	s.resolve = last
	return out
}

// hasSetReturning reports whether the expressions call a set-returning
// function outside subqueries.
func hasSetReturning(nodes []*pg.Node) bool { return callsOf(nodes, isSetReturning) }

// checkSRFPlacement refuses set-returning calls where PostgreSQL does,
// all 0A000: in the arguments of aggregates and window functions and
// under CASE and COALESCE (which would run them conditionally).
func checkSRFPlacement(nodes []*pg.Node) error {
	var err error
	for _, n := range nodes {
		walkExpr(n, func(m *pg.Node) bool {
			if err != nil {
				return false
			}
			err = srfPlacement(m)
			return err == nil
		})
	}
	return err
}

func srfPlacement(m *pg.Node) error {
	switch v := m.Node.(type) {
	case *pg.Node_CaseExpr:
		if hasSetReturning([]*pg.Node{v.CaseExpr.Arg, v.CaseExpr.Defresult}) || hasSetReturning(v.CaseExpr.Args) {
			return srfNotAllowed("CASE")
		}
	case *pg.Node_CoalesceExpr:
		if hasSetReturning(v.CoalesceExpr.Args) {
			return srfNotAllowed("COALESCE")
		}
	case *pg.Node_FuncCall:
		name, err := funcName(v.FuncCall)
		if err != nil || !hasSetReturning(v.FuncCall.Args) {
			return nil
		}
		if v.FuncCall.Over != nil {
			return sqlerr.New(sqlerr.FeatureNotSupported, "window function calls cannot contain set-returning function calls")
		}
		if isAggregate(name) {
			return sqlerr.New(sqlerr.FeatureNotSupported, "aggregate function calls cannot contain set-returning function calls")
		}
	}
	return nil
}

func srfNotAllowed(where string) error {
	return sqlerr.Errorf(sqlerr.FeatureNotSupported, "set-returning functions are not allowed in %s", where)
}

// fresh empties s for a collecting lowering of the outputs (nil stays
// nil: the query has no set-returning calls).
func (s *srfScope) fresh() *srfScope {
	if s == nil {
		return nil
	}
	*s = srfScope{argLevel: -1}
	return s
}
