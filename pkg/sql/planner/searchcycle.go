package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// SEARCH and CYCLE clauses of a recursive CTE, planned as PostgreSQL 15
// rewrites them: as columns the recursion itself computes, after the
// CTE's own.
//
//   - SEARCH DEPTH FIRST BY a, b SET ord: ord is ARRAY[ROW(a, b)] in the
//     non-recursive term and the working row's ord || ROW(a, b) of the
//     new row in the recursive term, a record[] whose order (record_cmp
//     element by element, a prefix first) is depth-first order.
//   - SEARCH BREADTH FIRST BY a SET ord: ord is ROW(0, a), then
//     ROW(depth + 1, a) with depth the working row's, a record ordering
//     rows by depth first.
//   - CYCLE a, b SET mark [TO v DEFAULT d] USING path: path is the
//     record[] of ROW(a, b) along the way, mark is v when the new row's
//     ROW(a, b) is already on the working row's path (record_eq: NULL
//     fields match) and d otherwise, and a working row whose mark is v
//     is not expanded further, so that recursion over a cycle ends.
//
// The recursive term is planned with the self-reference exposing the
// added columns (the user's query may read them, * does not expand them,
// and a name clashing with a column of the CTE is ambiguous there,
// 42702, as in PostgreSQL)
// and with the working row's added columns appended to its select list;
// a map over its output computes the new row's. Everything stays a
// function of one working row and one new row, so the recursion is
// maintained as any other (recursive.go), retractions included.

// searchCycle is a CTE's SEARCH and CYCLE clauses resolved against its
// columns: the columns they read (by position) and the values they add.
type searchCycle struct {
	search *pg.CTESearchClause
	cycle  *pg.CTECycleClause
	// searchBy and cycleBy are the positions of the BY columns.
	searchBy, cycleBy []int
	// markOn and markOff are the CYCLE mark values (TO and DEFAULT), of
	// the type of the mark column.
	markOn, markOff row.Datum
}

// errSearchCycleSyntax is PostgreSQL's 42601 for a malformed clause.
func errSearchCycleSyntax(format string, args ...any) error {
	return sqlerr.Errorf(sqlerr.SyntaxError, format, args...)
}

// checkSearchCycleNames applies the checks PostgreSQL makes before it
// reads the query: the added columns' names must differ. Without the
// clauses it passes, as do the other checks here.
func checkSearchCycleNames(c *pg.CommonTableExpr) error {
	s, y := c.SearchClause, c.CycleClause
	if y != nil && y.CycleMarkColumn == y.CyclePathColumn {
		return errSearchCycleSyntax("cycle mark column name and cycle path column name are the same")
	}
	if s != nil && y != nil {
		switch s.SearchSeqColumn {
		case y.CycleMarkColumn:
			return errSearchCycleSyntax("search sequence column name and cycle mark column name are the same")
		case y.CyclePathColumn:
			return errSearchCycleSyntax("search sequence column name and cycle path column name are the same")
		}
	}
	return nil
}

// checkSearchCycleForm: with either clause both sides of the UNION must
// be plain SELECTs.
func checkSearchCycleForm(c *pg.CommonTableExpr, sel *pg.SelectStmt) error {
	if c.SearchClause == nil && c.CycleClause == nil {
		return nil
	}
	if sel.Larg.Op != pg.SetOperation_SETOP_NONE {
		return errSearchCycleSyntax("with a SEARCH or CYCLE clause, the left side of the UNION must be a SELECT")
	}
	if sel.Rarg.Op != pg.SetOperation_SETOP_NONE {
		return errSearchCycleSyntax("with a SEARCH or CYCLE clause, the right side of the UNION must be a SELECT")
	}
	return nil
}

// searchCycleStep resolves c's clauses against the CTE's columns and
// returns them, the columns they add and the recursive term that also
// reads the working row's added columns; nil and rarg without clauses.
func (p *Planner) searchCycleStep(c *pg.CommonTableExpr, rarg *pg.SelectStmt, cols []column) (*searchCycle, []column, *pg.SelectStmt, error) {
	if c.SearchClause == nil && c.CycleClause == nil {
		return nil, nil, rarg, nil
	}
	sc, err := p.resolveSearchCycle(c, cols)
	if err != nil {
		return nil, nil, nil, err
	}
	added, err := p.addedColumns(sc)
	if err != nil {
		return nil, nil, nil, err
	}
	step, err := stepWithAdded(c.Ctename, rarg, added)
	if err != nil {
		return nil, nil, nil, err
	}
	return sc, added, step, nil
}

// resolveSearchCycle resolves the clauses of c against the CTE's columns.
func (p *Planner) resolveSearchCycle(c *pg.CommonTableExpr, cols []column) (*searchCycle, error) {
	sc := &searchCycle{search: c.SearchClause, cycle: c.CycleClause}
	var err error
	if s := sc.search; s != nil {
		if sc.searchBy, err = byColumns("search", s.SearchColList, cols); err != nil {
			return nil, err
		}
	}
	if y := sc.cycle; y != nil {
		if sc.cycleBy, err = byColumns("cycle", y.CycleColList, cols); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// byColumns resolves a clause's column list: 42601 for a name that is
// not a column, 42701 for one named twice.
func byColumns(what string, list []*pg.Node, cols []column) ([]int, error) {
	idx := make([]int, 0, len(list))
	for _, n := range list {
		name := n.GetString_().GetSval()
		i := slices.IndexFunc(cols, func(c column) bool { return c.name == name })
		if i < 0 {
			return nil, errSearchCycleSyntax("%s column %q not in WITH query column list", what, name)
		}
		if slices.Contains(idx, i) {
			return nil, sqlerr.Errorf(sqlerr.DuplicateColumn, "%s column %q specified more than once", what, name)
		}
		if t := cols[i].typ.Type; t == row.TypeRecord || t == row.TypeRecordArray {
			return nil, sqlerr.Unsupported("records nested in records (" + what + " column " + name + ")")
		}
		idx = append(idx, i)
	}
	return idx, nil
}

// addedColumns returns the columns the clauses add, in PostgreSQL's
// order (the search sequence, then the cycle mark and path), lowering
// the mark values to their common type.
func (p *Planner) addedColumns(sc *searchCycle) ([]column, error) {
	var out []column
	if s := sc.search; s != nil {
		t := row.TypeRecordArray
		if s.SearchBreadthFirst {
			t = row.TypeRecord
		}
		out = append(out, column{name: s.SearchSeqColumn, typ: row.ColumnType{Type: t}})
	}
	if y := sc.cycle; y != nil {
		mark, err := p.cycleMarkValues(sc)
		if err != nil {
			return nil, err
		}
		out = append(out, mark, column{name: y.CyclePathColumn, typ: row.ColumnType{Type: row.TypeRecordArray}})
	}
	return out, nil
}

// cycleMarkValues sets sc.markOn and markOff to the TO and DEFAULT
// values (true and false when absent) at their common type, which
// PostgreSQL resolves as a CASE's (42804 when there is none), and returns
// the mark column.
func (p *Planner) cycleMarkValues(sc *searchCycle) (column, error) {
	y := sc.cycle
	on, off := y.CycleMarkValue, y.CycleMarkDefault
	if on == nil || off == nil {
		on, off = boolConst(true, -1), boolConst(false, -1)
	}
	c := &exprCtx{p: p, scope: &scope{}, clause: "CYCLE"}
	var col column
	for i, d := range []*row.Datum{&sc.markOn, &sc.markOff} {
		choose := pg.MakeCaseExprNode(nil, []*pg.Node{pg.MakeCaseWhenNode(boolConst(i == 0, -1), on, -1)}, -1)
		choose.GetCaseExpr().Defresult = off
		x, err := c.lower(choose)
		if err != nil {
			return column{}, err
		}
		if *d, err = x.e.Eval(nil); err != nil {
			return column{}, err
		}
		col = column{name: y.CycleMarkColumn, typ: row.ColumnType{Type: x.t.Type}, w: x.w, mod: x.mod}
	}
	if col.typ.Type == row.TypeNull {
		col.typ.Type = row.TypeText
	}
	col.typ.Nullable = sc.markOn.IsNull() || sc.markOff.IsNull()
	if _, err := expr.Call(expr.FuncNeq, expr.Literal(sc.markOn), expr.Literal(sc.markOff)).Type(nil); err != nil {
		return column{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "could not identify an equality operator for type %s", SQLTypeName(col.typ.Type, col.w, col.mod))
	}
	return col, nil
}

// boolConst is the constant true or false.
func boolConst(b bool, _ int32) *pg.Node {
	return &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Boolval{Boolval: &pg.Boolean{Boolval: b}}, Location: -1}}}
}

// nameClash is PostgreSQL's 42601 for an added column named as one of
// the CTE's.
func nameClash(sc *searchCycle, cols []column) error {
	if sc == nil {
		return nil
	}
	used := func(name string) bool {
		return slices.ContainsFunc(cols, func(c column) bool { return c.name == name })
	}
	if s := sc.search; s != nil && used(s.SearchSeqColumn) {
		return errSearchCycleSyntax("search sequence column name %q already used in WITH query column list", s.SearchSeqColumn)
	}
	if y := sc.cycle; y != nil {
		if used(y.CycleMarkColumn) {
			return errSearchCycleSyntax("cycle mark column name %q already used in WITH query column list", y.CycleMarkColumn)
		}
		if used(y.CyclePathColumn) {
			return errSearchCycleSyntax("cycle path column name %q already used in WITH query column list", y.CyclePathColumn)
		}
	}
	return nil
}

// stepWithAdded returns a copy of the recursive term whose select list
// also reads the working row's added columns, through the name (or
// alias) the term gives the self-reference.
func stepWithAdded(name string, rarg *pg.SelectStmt, added []column) (*pg.SelectStmt, error) {
	step := proto.Clone(rarg).(*pg.SelectStmt)
	ref, ok := selfReference(name, step.FromClause)
	if !ok {
		return nil, errSearchCycleSyntax("with a SEARCH or CYCLE clause, the recursive reference to WITH query %q must be at the top level of its right-hand SELECT", name)
	}
	for _, col := range added {
		field := pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(ref), pg.MakeStrNode(col.name)}, -1)
		step.TargetList = append(step.TargetList, pg.MakeResTargetNodeWithVal(field, -1))
	}
	return step, nil
}

// selfReference finds the reference to name in a FROM list (through
// joins, not into subqueries) and returns the name it is read by.
func selfReference(name string, from []*pg.Node) (string, bool) {
	for _, n := range from {
		if rv := n.GetRangeVar(); rv != nil && rv.Relname == name && rv.Schemaname == "" && rv.Catalogname == "" {
			if rv.Alias != nil {
				return rv.Alias.Aliasname, true
			}
			return rv.Relname, true
		}
		if j := n.GetJoinExpr(); j != nil {
			if ref, ok := selfReference(name, []*pg.Node{j.Larg, j.Rarg}); ok {
				return ref, true
			}
		}
	}
	return "", false
}

// recordOf is ROW(columns at idx) over a row.
func recordOf(idx []int) expr.Expr {
	fields := make([]expr.Expr, len(idx))
	for i, c := range idx {
		fields[i] = expr.Column(c)
	}
	return expr.Call(expr.FuncRecord, fields...)
}

// baseAdded is the added columns' values for a row of the non-recursive
// term, whose first columns are the CTE's.
func (sc *searchCycle) baseAdded() []expr.Expr {
	var out []expr.Expr
	if s := sc.search; s != nil {
		if s.SearchBreadthFirst {
			fields := []expr.Expr{expr.Literal(row.Int64(0))}
			out = append(out, expr.Call(expr.FuncRecord, append(fields, recordOf(sc.searchBy).Args...)...))
		} else {
			out = append(out, expr.Call(expr.FuncArray, recordOf(sc.searchBy)))
		}
	}
	if sc.cycle != nil {
		out = append(out, expr.Literal(sc.markOff), expr.Call(expr.FuncArray, recordOf(sc.cycleBy)))
	}
	return out
}

// stepAdded is the added columns' values for a row of the recursive
// term: the CTE's columns of the new row, then the working row's added
// columns from position n on. keep, when set, is the filter that stops
// the expansion of a row already marked as a cycle.
func (sc *searchCycle) stepAdded(n int) (out []expr.Expr, keep *expr.Expr) {
	at := n
	if s := sc.search; s != nil {
		seq := expr.Column(at)
		at++
		if s.SearchBreadthFirst {
			depth := expr.Call(expr.FuncRecordField, seq, expr.Literal(row.Int64(1)), expr.TypedNull(row.TypeInt64))
			fields := []expr.Expr{expr.Call(expr.FuncAdd, depth, expr.Literal(row.Int64(1)))}
			out = append(out, expr.Call(expr.FuncRecord, append(fields, recordOf(sc.searchBy).Args...)...))
		} else {
			out = append(out, expr.Call(expr.FuncArrayCat, seq, expr.Call(expr.FuncArray, recordOf(sc.searchBy))))
		}
	}
	if sc.cycle != nil {
		mark, path := expr.Column(at), expr.Column(at+1)
		onPath := expr.Call(expr.FuncArrayCmpAny, recordOf(sc.cycleBy), path, expr.Literal(row.Int64(0)), expr.Literal(row.False))
		out = append(out,
			expr.Case([][2]expr.Expr{{onPath, expr.Literal(sc.markOn)}}, expr.Literal(sc.markOff)),
			expr.Call(expr.FuncArrayCat, path, expr.Call(expr.FuncArray, recordOf(sc.cycleBy))))
		k := expr.Call(expr.FuncNeq, mark, expr.Literal(sc.markOn))
		keep = &k
	}
	return out, keep
}

// withAdded maps r, whose first n columns are the CTE's (already of its
// types), to those columns followed by the added ones, computed by
// values over r's columns, keeping only rows that pass keep (if set).
func withAdded(r *rel, n int, values []expr.Expr, keep *expr.Expr, out *scope) plan.Plan {
	if keep != nil {
		r.filter(*keep)
	}
	es := make([]expr.Expr, 0, n+len(values))
	for i := range n {
		es = append(es, expr.Column(i))
	}
	r.project(append(es, values...), out)
	return r.plan()
}
