package planner

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Outer aggregates. In PostgreSQL an aggregate belongs to the query level
// of the columns its arguments name: in
//
//	SELECT a, (SELECT max(t.b) FROM s WHERE s.x = a) FROM t GROUP BY a
//	SELECT a FROM t GROUP BY a HAVING EXISTS (SELECT 1 FROM s WHERE s.y > max(t.b))
//
// max(t.b) is an aggregate of the outer query (over each group of t),
// which the subquery reads as a value, like an outer column. The planner
// finds such calls in the subqueries of a level's select list, HAVING and
// ORDER BY before it plans the level, replaces each with a reference to a
// column no query can spell, makes the level a grouped one if it was not,
// and adds the call to its aggregates; the aggregation's output, which
// the subqueries are planned over, names that column.
//
// Only aggregates one level up are taken, and only when every column
// their arguments name is certainly not the subquery's own: qualified by
// a name the subquery's FROM does not define, or unqualified and absent
// from every table of that FROM (all of them catalog tables). Other
// forms stay refused (refuseOuterAggregate).

// hoistable are the aggregates moved out; others (FILTER, ORDER BY,
// string_agg...) stay refused when outer.
var hoistable = map[string]bool{"count": true, "sum": true, "min": true, "max": true,
	"avg": true, "bool_and": true, "bool_or": true, "every": true}

// outerAggregate is one call moved out of a subquery: its name in the
// level's aggregation output, and the call itself.
type outerAggregate struct {
	name string
	call *pg.Node
}

// hoistOuterAggregates finds the outer aggregates of sel's subqueries
// (over the level's scope in) and replaces them in place; it refuses
// those it cannot move.
func (p *Planner) hoistOuterAggregates(sel *pg.SelectStmt, in *scope) ([]outerAggregate, error) {
	var (
		out     []outerAggregate
		refused error
	)
	items := append(append(sortNodes(sel.SortClause), sel.TargetList...), sel.HavingClause)
	for _, it := range items {
		walkExpr(it, func(n *pg.Node) bool {
			if sl := n.GetSubLink(); sl != nil {
				if sub := sl.Subselect.GetSelectStmt(); sub != nil {
					out = p.hoistFrom(sub, in, out, &refused)
				}
			}
			return true
		})
	}
	return out, refused
}

// hoistFrom replaces the outer aggregates of one subquery level. A call
// replaced by an earlier planning of the same statement (a level is
// planned again when one way of decorrelating it is refused) is found by
// its name and counted again.
func (p *Planner) hoistFrom(sub *pg.SelectStmt, in *scope, out []outerAggregate, refused *error) []outerAggregate {
	// The subquery's names, looked up once it has an aggregate to check.
	var (
		own      fromNames
		complete bool
		looked   bool
	)
	lookup := func() {
		if !looked {
			own, complete = p.fromNames(sub.FromClause)
			// Its own WITH names may shadow tables.
			complete = complete && sub.WithClause == nil
			looked = true
		}
	}
	parts := append(append([]*pg.Node{sub.WhereClause, sub.HavingClause}, sub.TargetList...), sortNodes(sub.SortClause)...)
	for _, part := range parts {
		walkExpr(part, func(n *pg.Node) bool {
			if cr := n.GetColumnRef(); cr != nil {
				if _, col, _, err := columnRefName(cr); err == nil && p.outerAggs[col] != nil {
					out = append(out, outerAggregate{name: col, call: p.outerAggs[col]})
				}
				return true
			}
			fc := n.GetFuncCall()
			if fc == nil || fc.Over != nil || len(fc.Args) == 0 || fc.AggStar {
				return true
			}
			name, err := funcName(fc)
			if err != nil || !isAggregate(name) {
				return true
			}
			if lookup(); !onlyOuterColumns(fc.Args, own, complete, in) {
				return false
			}
			if !hoistable[name] || fc.AggFilter != nil || len(fc.AggOrder) > 0 {
				*refused = sqlerr.Unsupported(name + " (or FILTER, ORDER BY) over only outer columns in a subquery")
				return false
			}
			if p.outerAggs == nil {
				p.outerAggs = map[string]*pg.Node{}
			}
			ref := fmt.Sprintf("?outer aggregate %d?", len(p.outerAggs)+1)
			p.outerAggs[ref] = &pg.Node{Node: n.Node}
			n.Node = pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(ref)}, fc.Location).Node
			out = append(out, outerAggregate{name: ref, call: p.outerAggs[ref]})
			return false
		})
	}
	return out
}

// fromNames are the names a FROM list defines (aliases and table names)
// and its tables' columns.
type fromNames struct {
	tables  map[string]bool
	columns map[string]bool
}

// fromNames returns the names items define; complete is false when an
// item is not a catalog table, so that its columns are unknown.
func (p *Planner) fromNames(items []*pg.Node) (names fromNames, complete bool) {
	f := fromNames{tables: map[string]bool{}, columns: map[string]bool{}}
	complete = true
	var add func(n *pg.Node)
	add = func(n *pg.Node) {
		switch {
		case n.GetRangeVar() != nil:
			rv := n.GetRangeVar()
			f.tables[rv.Relname] = true
			if rv.Alias != nil {
				f.tables[rv.Alias.Aliasname] = true
			}
			if c, ok := p.findCTE(rv); ok {
				for _, col := range c.cols {
					f.columns[col.name] = true
				}
				return
			}
			rel, err := p.Catalog.Resolve(rv.Schemaname, rv.Relname)
			if err != nil {
				complete = false // a CTE, or an error the planner reports
				return
			}
			for i := range rel.Desc.Arity() {
				f.columns[rel.Desc.Name(i)] = true
			}
		case n.GetJoinExpr() != nil:
			j := n.GetJoinExpr()
			if j.Alias != nil {
				f.tables[j.Alias.Aliasname] = true
			}
			add(j.Larg)
			add(j.Rarg)
		default:
			complete = false
			if rs := n.GetRangeSubselect(); rs != nil && rs.Alias != nil {
				f.tables[rs.Alias.Aliasname] = true
			}
			if rf := n.GetRangeFunction(); rf != nil && rf.Alias != nil {
				f.tables[rf.Alias.Aliasname] = true
			}
		}
	}
	for _, it := range items {
		add(it)
	}
	return f, complete
}

// onlyOuterColumns reports whether args name at least one column, every
// one of them in scope in and certainly not a column of the subquery
// (own, complete: fromNames), with no subquery or aggregate inside.
func onlyOuterColumns(args []*pg.Node, own fromNames, complete bool, in *scope) bool {
	named, ok := 0, true
	for _, a := range args {
		walkExpr(a, func(n *pg.Node) bool {
			if !ok {
				return false
			}
			switch {
			case n.GetSubLink() != nil:
				ok = false
			case n.GetFuncCall() != nil:
				if name, err := funcName(n.GetFuncCall()); err != nil || isAggregate(name) || n.GetFuncCall().Over != nil {
					ok = false
				}
			case n.GetColumnRef() != nil:
				table, col, _, err := columnRefName(n.GetColumnRef())
				switch {
				case err != nil:
					ok = false
				case table != "" && own.tables[table]:
					ok = false
				case table == "" && (!complete || own.columns[col]):
					ok = false
				default:
					// This level's own column: one of a level further out
					// makes the aggregate that level's (not taken).
					if _, err := in.resolveLevel(table, col, false); err != nil {
						ok = false
					}
					named++
				}
			}
			return ok
		})
	}
	return ok && named > 0
}

// registerOuterAggregates adds the hoisted calls to agg's aggregates (c
// lowers over the level's input) and names their aggregation output
// columns; a call computed from several (avg: a sum over a count) is an
// expression over them, added as a column after the aggregation
// (appendOuterExprs).
func (a *aggScope) registerOuterAggregates(c *exprCtx, hoisted []outerAggregate) error {
	for _, h := range hoisted {
		x, ok, err := a.match(c, h.call)
		if err != nil {
			return err
		}
		if !ok {
			return sqlerr.Unsupported("this aggregate over only outer columns in a subquery")
		}
		if x.e.Op == expr.OpColumn {
			if a.outerCols == nil {
				a.outerCols = map[int]string{}
			}
			a.outerCols[x.e.Index] = h.name
			continue
		}
		t := x.t
		t.Nullable = true
		a.outerExprs = append(a.outerExprs, outerExpr{name: h.name, e: x.e, t: t})
	}
	return nil
}

// outerExpr is a moved aggregate computed from aggregation output
// columns.
type outerExpr struct {
	name string
	e    expr.Expr
	t    row.ColumnType
}

// appendOuterExprs adds the moved aggregates that are expressions to r,
// the aggregation's output, as named columns after its own.
func (a *aggScope) appendOuterExprs(r *rel) {
	if len(a.outerExprs) == 0 {
		return
	}
	n := r.arity()
	exprs := make([]expr.Expr, len(a.outerExprs))
	cols := make([]column, len(a.outerExprs))
	if a.outerCols == nil {
		a.outerCols = map[int]string{}
	}
	for i, o := range a.outerExprs {
		exprs[i] = o.e
		cols[i] = column{name: o.name, typ: o.t, unstarred: true}
		a.outerCols[n+i] = o.name
	}
	r.extend(plan.NewMfp(r.plan(), appendLiterals(n, exprs)), cols)
}

// typingInput is the relation a subquery of the level is planned over to
// learn its type in the first pass, before the aggregation exists: the
// input, with each moved aggregate as a NULL column of its type under its
// name.
func (a *aggScope) typingInput() (*rel, *scope) {
	if len(a.outerCols) == 0 && len(a.outerExprs) == 0 {
		return a.inputRel, a.input
	}
	n := a.inputRel.arity()
	cols := append([]column(nil), a.input.cols...)
	var nulls []expr.Expr
	add := func(name string, t row.ColumnType) {
		t.Nullable = true
		nulls = append(nulls, expr.TypedNull(t.Type))
		cols = append(cols, column{name: name, typ: t, unstarred: true})
	}
	for i := len(a.keys); i < len(a.keys)+len(a.aggs); i++ {
		if name, ok := a.outerCols[i]; ok {
			add(name, a.aggs[i-len(a.keys)].out)
		}
	}
	for _, o := range a.outerExprs {
		add(o.name, o.t)
	}
	s := &scope{cols: cols}
	return newRel(plan.NewMfp(a.inputRel.plan(), appendLiterals(n, nulls)), s), s
}
