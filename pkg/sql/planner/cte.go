package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// cte is a planned common table expression: its plan and output columns.
// Every reference reads the same plan (the IR has no shared bindings, so
// each reference computes it again; plans are immutable once built, so
// sharing the tree between references is safe).
type cte struct {
	plan plan.Plan
	cols []column
}

// cteFrame is the WITH list of one query level, by name.
type cteFrame map[string]cte

// pushCTEs plans the WITH list of a query and makes its names visible to
// the rest of the query (and to subqueries in it) until pop is called.
// Each CTE sees the ones before it in the list, as in Postgres; a CTE
// cannot see itself (that would be WITH RECURSIVE).
func (p *Planner) pushCTEs(wc *pg.WithClause, depth int) (pop func(), err error) {
	if wc.Recursive {
		return nil, sqlerr.Unsupported("WITH RECURSIVE")
	}
	frame := cteFrame{}
	p.ctes = append(p.ctes, frame)
	n := len(p.ctes)
	pop = func() { p.ctes = p.ctes[:n-1] }
	for _, node := range wc.Ctes {
		c := node.GetCommonTableExpr()
		if c == nil {
			pop()
			return nil, sqlerr.New(sqlerr.SyntaxError, "malformed WITH list")
		}
		if _, dup := frame[c.Ctename]; dup {
			pop()
			return nil, sqlerr.Errorf("42712", "WITH query name %q specified more than once", c.Ctename)
		}
		sel := c.Ctequery.GetSelectStmt()
		if sel == nil {
			pop()
			return nil, sqlerr.Unsupported("data-modifying statements in WITH")
		}
		if c.SearchClause != nil || c.CycleClause != nil {
			pop()
			return nil, sqlerr.Unsupported("SEARCH and CYCLE clauses")
		}
		r, err := p.planSubquery(sel, depth+1)
		if err != nil {
			pop()
			return nil, err
		}
		if len(c.Aliascolnames) > r.arity() {
			pop()
			return nil, sqlerr.Errorf("42P10", "WITH query %q has %d columns available but %d columns specified",
				c.Ctename, r.arity(), len(c.Aliascolnames))
		}
		cols := make([]column, len(r.scope.cols))
		for i, col := range r.scope.cols {
			cols[i] = column{name: col.name, typ: col.typ, w: col.w, mod: col.mod}
			if i < len(c.Aliascolnames) {
				cols[i].name = c.Aliascolnames[i].GetString_().GetSval()
			}
		}
		frame[c.Ctename] = cte{plan: r.plan(), cols: cols}
	}
	return pop, nil
}

// lookupCTE finds an unqualified name among the CTEs in scope, innermost
// query level first.
func (p *Planner) lookupCTE(rv *pg.RangeVar) (*rel, bool) {
	if rv.Schemaname != "" || rv.Catalogname != "" {
		return nil, false
	}
	for i := len(p.ctes) - 1; i >= 0; i-- {
		if c, ok := p.ctes[i][rv.Relname]; ok {
			return newRel(c.plan, &scope{cols: append([]column(nil), c.cols...)}), true
		}
	}
	return nil, false
}
