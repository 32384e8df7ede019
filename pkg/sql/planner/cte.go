package planner

import (
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// cte is a planned common table expression: its plan and output columns.
// Every reference reads the same plan node (plans are immutable once
// built, so sharing the tree between references is safe); once the query
// level is planned, a CTE whose node it reads more than once is bound to
// a local id by a Let and computed once (bindCTEs).
type cte struct {
	plan plan.Plan
	cols []column
	// inline is set for a CTE computed at each reference: NOT
	// MATERIALIZED, or a plan that is only a projection or filter of a
	// collection (a copy costs nothing that sharing would save, and a
	// reference keeps the collection's own arrangements).
	inline bool
	// outer, set for a CTE of a correlated query level that names the
	// outer query's columns, is its definition: such a CTE has no plan
	// of its own, and each reference in the level's FROM list is planned
	// as a subquery in FROM against the level's outer values
	// (framedCTE). A reference anywhere else (a JOIN ... ON, a subquery
	// nested deeper) is refused.
	outer *pg.CommonTableExpr
}

// errOuterCTE is the error of a reference to a CTE that names outer
// columns, where the outer values do not reach (framedFrom plans the
// references they do).
var errOuterCTE = sqlerr.Unsupported("correlated subqueries reading a WITH query that names outer columns in a JOIN or a nested subquery")

// cteFrame is the WITH list of one query level, by name.
type cteFrame map[string]cte

// pushCTEs plans the WITH list of a query and makes its names visible to
// the rest of the query (and to subqueries in it) until pop is called.
// Each CTE sees the ones before it in the list, as in Postgres, and with
// RECURSIVE every one, itself included.
// corr is the level's correlation frame (nil when it is not correlated).
func (p *Planner) pushCTEs(wc *pg.WithClause, depth int, corr *corrFrame) (pop func(), err error) {
	frame := cteFrame{}
	p.ctes = append(p.ctes, frame)
	n := len(p.ctes)
	pop = func() { p.ctes = p.ctes[:n-1] }
	if err := p.planCTEs(wc, frame, depth, corr); err != nil {
		pop()
		return nil, err
	}
	return pop, nil
}

// planCTEs plans a WITH list into frame: in list order, or for WITH
// RECURSIVE in dependency order (every CTE sees every other there), a
// CTE that reads itself becoming a Recursive node (recursive.go).
func (p *Planner) planCTEs(wc *pg.WithClause, frame cteFrame, depth int, corr *corrFrame) error {
	ctes := make([]*pg.CommonTableExpr, len(wc.Ctes))
	seen := map[string]bool{}
	for i, node := range wc.Ctes {
		c := node.GetCommonTableExpr()
		if c == nil {
			return sqlerr.New(sqlerr.SyntaxError, "malformed WITH list")
		}
		if seen[c.Ctename] {
			return sqlerr.Errorf("42712", "WITH query name %q specified more than once", c.Ctename)
		}
		seen[c.Ctename] = true
		if c.Ctequery.GetSelectStmt() == nil {
			return sqlerr.Unsupported("data-modifying statements in WITH")
		}
		ctes[i] = c
	}
	order := make([]int, len(ctes))
	for i := range order {
		order[i] = i
	}
	self := make([]bool, len(ctes))
	if wc.Recursive {
		var err error
		if order, self, err = recursiveOrder(ctes); err != nil {
			return err
		}
	}
	for _, i := range order {
		c := ctes[i]
		sel := c.Ctequery.GetSelectStmt()
		if !self[i] && (c.SearchClause != nil || c.CycleClause != nil) {
			return sqlerr.New(sqlerr.SyntaxError, "WITH query is not recursive")
		}
		if self[i] {
			planned, err := p.planRecursiveCTE(c, sel, frame, depth)
			if err != nil {
				return err
			}
			frame[c.Ctename] = planned
			continue
		}
		r, err := p.planSubquery(sel, depth+1)
		if err != nil && corr != nil && (errors.Is(err, errOuterCTE) || isUndefinedName(err) && p.namesOuter(corr)) {
			frame[c.Ctename] = cte{outer: c}
			continue
		}
		if err != nil {
			return err
		}
		cols, err := cteColumns(c, r)
		if err != nil {
			return err
		}
		planned := r.plan()
		inline := c.Ctematerialized == pg.CTEMaterialize_CTEMaterializeNever || readsOnlyACollection(planned)
		frame[c.Ctename] = cte{plan: planned, cols: cols, inline: inline}
	}
	return nil
}

// readsOnlyACollection reports whether p is a Get, or a Map, Filter or
// Project of one.
func readsOnlyACollection(p plan.Plan) bool {
	if p.Mfp != nil && p.Mfp.Input != nil {
		p = *p.Mfp.Input
	}
	return p.Get != nil
}

// bindCTEs binds, in r's plan, every CTE of frame that the plan reads more
// than once (the same node at several references, PostgreSQL's
// materialised CTE) to a local id, so that it is computed once. A
// reference whose plan a rewrite changed (a filter pushed into it) is a
// different node, computed on its own, as before.
func (p *Planner) bindCTEs(r *rel, frame cteFrame) {
	only := map[any]bool{}
	for _, c := range frame {
		if !c.inline && c.outer == nil {
			only[c.plan.Node()] = true
		}
	}
	if len(only) == 0 {
		return
	}
	r.base = p.bindRepeated(r.base, only)
}

// lookupCTE finds an unqualified name among the CTEs in scope, innermost
// query level first. A CTE naming outer columns is errOuterCTE.
func (p *Planner) lookupCTE(rv *pg.RangeVar) (*rel, bool, error) {
	c, ok := p.findCTE(rv)
	switch {
	case !ok:
		return nil, false, nil
	case c.outer != nil:
		return nil, true, errOuterCTE
	}
	return newRel(c.plan, &scope{cols: append([]column(nil), c.cols...)}), true, nil
}

func (p *Planner) findCTE(rv *pg.RangeVar) (cte, bool) {
	if rv.Schemaname != "" || rv.Catalogname != "" {
		return cte{}, false
	}
	for i := len(p.ctes) - 1; i >= 0; i-- {
		if c, ok := p.ctes[i][rv.Relname]; ok {
			return c, true
		}
	}
	return cte{}, false
}

// framedCTE plans a reference, in a correlated level's FROM list, to a
// CTE naming outer columns: as the CTE's query in FROM, under the
// reference's alias (or the CTE's name and column aliases), against the
// level's outer values f.
func (p *Planner) framedCTE(rv *pg.RangeVar, depth int, f *corrFrame) (*rel, error) {
	c, ok := p.findCTE(rv)
	if !ok || c.outer == nil {
		return nil, errOuterCTE
	}
	alias := &pg.Alias{Aliasname: rv.Relname, Colnames: c.outer.Aliascolnames}
	if rv.Alias != nil {
		alias = &pg.Alias{Aliasname: rv.Alias.Aliasname, Colnames: rv.Alias.Colnames}
		if len(alias.Colnames) == 0 {
			alias.Colnames = c.outer.Aliascolnames
		}
	}
	return p.framedSubselect(&pg.RangeSubselect{Subquery: c.outer.Ctequery, Alias: alias}, depth, f)
}
