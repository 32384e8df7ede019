package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Subqueries of rows: (a, b) op ANY / ALL (S), IN and NOT IN, and
// (a, b) op (S) with S one row. S is read as a derived table whose
// columns get names no query can spell, so that the compared
// expressions, placed inside the rewritten subquery, still resolve to
// the enclosing query's columns (a correlation, which decorrelation
// handles as for any subquery):
//
//	(a, b) op ANY (S)   CASE WHEN EXISTS (SELECT FROM (S) s(x, y) WHERE (a, b) op (x, y)) THEN true
//	                         WHEN EXISTS (... WHERE ((a, b) op (x, y)) IS NULL) THEN NULL
//	                         ELSE false END
//	(a, b) op ALL (S)   the same with IS FALSE deciding false, else true
//	(a, b) op (S)       (a, b) op ((SELECT x FROM (S) s(x, y)), (SELECT y ...))
//
// which is PostgreSQL's rule: ANY is true when the comparison holds for
// some row of S, NULL when it holds for none but is NULL for some, false
// otherwise (over no rows too); IN is = ANY and NOT IN is <> ALL. The
// scalar form keeps the one-row check of each field's subquery, and over
// no rows every field is NULL, as is PostgreSQL's row.

// expandRowSubLink rewrites a quantified subquery test of a row.
func (p *Planner) expandRowSubLink(sl *pg.SubLink) (*pg.Node, error) {
	test := sl.Testexpr.GetRowExpr()
	if test == nil || (sl.SubLinkType != pg.SubLinkType_ANY_SUBLINK && sl.SubLinkType != pg.SubLinkType_ALL_SUBLINK) {
		return nil, nil
	}
	op := opName(sl.OperName)
	if op == "" {
		op = "="
	}
	if !rowCompareOps[op] {
		return nil, nil
	}
	if err := subqueryArity(sl, len(test.Args)); err != nil {
		return nil, err
	}
	if hasAggregate(test.Args) {
		// The rewrite reads the row inside the subquery, where an
		// aggregate would be an outer query's.
		return nil, sqlerr.Unsupported("aggregates in a row compared with a subquery")
	}
	all := sl.SubLinkType == pg.SubLinkType_ALL_SUBLINK
	decide, err := p.rowExists(sl, test, op, func(cmp *pg.Node) *pg.Node {
		if all {
			return booleanTest(cmp, pg.BoolTestType_IS_FALSE)
		}
		return cmp
	})
	if err != nil {
		return nil, err
	}
	unknown, err := p.rowExists(sl, test, op, func(cmp *pg.Node) *pg.Node {
		return &pg.Node{Node: &pg.Node_NullTest{NullTest: &pg.NullTest{Arg: cmp, Nulltesttype: pg.NullTestType_IS_NULL}}}
	})
	if err != nil {
		return nil, err
	}
	whens := []*pg.Node{
		pg.MakeCaseWhenNode(decide, boolConst(!all, sl.Location), sl.Location),
		pg.MakeCaseWhenNode(unknown, nullConst(), sl.Location),
	}
	c := pg.MakeCaseExprNode(nil, whens, sl.Location)
	c.GetCaseExpr().Defresult = boolConst(all, sl.Location)
	return c, nil
}

// rowSemiJoin is (a, b) IN (S) as a conjunct of WHERE, where NULL drops
// a row as false does: EXISTS of a matching row, which the semi-join
// answers (nil when sl is not that).
func (p *Planner) rowSemiJoin(sl *pg.SubLink) (*pg.Node, error) {
	test := sl.Testexpr.GetRowExpr()
	if test == nil || sl.SubLinkType != pg.SubLinkType_ANY_SUBLINK {
		return nil, nil
	}
	if op := opName(sl.OperName); op != "" && op != "=" {
		return nil, nil
	}
	if out, ok := p.rows.semi[sl]; ok {
		return out, nil
	}
	if err := subqueryArity(sl, len(test.Args)); err != nil {
		return nil, err
	}
	out, err := p.rowExists(sl, test, "=", func(cmp *pg.Node) *pg.Node { return cmp })
	if err != nil {
		return nil, err
	}
	if p.rows.semi == nil {
		p.rows.semi = map[*pg.SubLink]*pg.Node{}
	}
	p.rows.semi[sl] = out
	return out, nil
}

// rowExists is EXISTS (SELECT FROM (S) s(x, ...) WHERE where((test) op
// (x, ...))).
func (p *Planner) rowExists(sl *pg.SubLink, test *pg.RowExpr, op string, where func(*pg.Node) *pg.Node) (*pg.Node, error) {
	from, cols := p.rows.derived(sl.Subselect, len(test.Args), sl.Location)
	cmp, err := p.rowCompare(op, test.Args, cols, sl.Location)
	if err != nil {
		return nil, err
	}
	sel := &pg.SelectStmt{
		TargetList:  []*pg.Node{pg.MakeResTargetNodeWithVal(pg.MakeAConstIntNode(1, sl.Location), sl.Location)},
		FromClause:  []*pg.Node{from},
		WhereClause: where(cmp),
	}
	return &pg.Node{Node: &pg.Node_SubLink{SubLink: &pg.SubLink{
		SubLinkType: pg.SubLinkType_EXISTS_SUBLINK,
		Subselect:   &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}},
		Location:    sl.Location,
	}}}, nil
}

// rowCompareSubquery expands (a, b) op (S), S a subquery of one row.
func (p *Planner) rowCompareSubquery(op string, l []*pg.Node, sl *pg.SubLink, loc int32) (*pg.Node, error) {
	if err := subqueryArity(sl, len(l)); err != nil {
		return nil, err
	}
	fields := make([]*pg.Node, len(l))
	for i := range l {
		from, cols := p.rows.derived(sl.Subselect, len(l), sl.Location)
		sel := &pg.SelectStmt{
			TargetList: []*pg.Node{pg.MakeResTargetNodeWithVal(cols[i], sl.Location)},
			FromClause: []*pg.Node{from},
		}
		fields[i] = &pg.Node{Node: &pg.Node_SubLink{SubLink: &pg.SubLink{
			SubLinkType: pg.SubLinkType_EXPR_SUBLINK,
			Subselect:   &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}},
			Location:    sl.Location,
		}}}
	}
	return p.rowCompare(op, l, fields, loc)
}

// derived is (S) AS s(c1, ..., cn) and references to its n columns.
func (f *rowForms) derived(s *pg.Node, n int, loc int32) (*pg.Node, []*pg.Node) {
	name, names := f.rowAlias(n)
	colnames := make([]*pg.Node, n)
	refs := make([]*pg.Node, n)
	for i, c := range names {
		colnames[i] = pg.MakeStrNode(c)
		refs[i] = pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(name), pg.MakeStrNode(c)}, loc)
	}
	from := &pg.Node{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
		Subquery: s,
		Alias:    &pg.Alias{Aliasname: name, Colnames: colnames},
	}}}
	return from, refs
}

// subqueryArity checks that the subquery of sl has n columns, with
// PostgreSQL's errors. A * in its select list is counted when the
// subquery is planned (aliased, isRowAlias).
func subqueryArity(sl *pg.SubLink, n int) error {
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil {
		return nil
	}
	if m := selectArity(sel); m >= 0 {
		return rowArity(m, n)
	}
	return nil
}

// rowArity is PostgreSQL's error for a subquery of m columns compared
// with a row of n, nil when they match.
func rowArity(m, n int) error {
	switch {
	case m == n:
		return nil
	case m > n:
		return sqlerr.New(sqlerr.SyntaxError, "subquery has too many columns")
	}
	return sqlerr.New(sqlerr.SyntaxError, "subquery has too few columns")
}

// visibleArity is r's columns a * would read (hidden ones left out).
func visibleArity(r *rel) int {
	n := 0
	for _, c := range r.scope.cols {
		if !c.hidden {
			n++
		}
	}
	return n
}

// selectArity is how many columns sel returns, -1 when its select list
// has a *.
func selectArity(sel *pg.SelectStmt) int {
	if sel.Op != pg.SetOperation_SETOP_NONE && sel.Larg != nil {
		return selectArity(sel.Larg)
	}
	if len(sel.ValuesLists) > 0 {
		return len(sel.ValuesLists[0].GetList().GetItems())
	}
	for _, t := range sel.TargetList {
		if ref := t.GetResTarget().GetVal().GetColumnRef(); ref != nil {
			if f := ref.Fields; len(f) > 0 && f[len(f)-1].GetAStar() != nil {
				return -1
			}
		}
	}
	return len(sel.TargetList)
}

func booleanTest(arg *pg.Node, t pg.BoolTestType) *pg.Node {
	return &pg.Node{Node: &pg.Node_BooleanTest{BooleanTest: &pg.BooleanTest{Arg: arg, Booltesttype: t}}}
}

func nullConst() *pg.Node {
	return &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Isnull: true}}}
}
