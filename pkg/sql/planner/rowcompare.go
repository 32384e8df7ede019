package planner

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Row comparisons: PostgreSQL compares a row constructor with a row
// constructor field by field (SQL's row value comparison), which is not a
// comparison of two record values (record_eq treats NULL fields as
// equal). The planner rewrites each such comparison into the scalar
// comparisons PostgreSQL's semantics expand to, before lowering:
//
//	(a, b) = (c, d)                 a = c AND b = d
//	(a, b) <> (c, d)                a <> c OR b <> d
//	(a, b) < (c, d)                 a < c OR (a = c AND b < d)
//	(a, b) IS DISTINCT FROM (c, d)  a IS DISTINCT FROM c OR ...
//	ROW(a, b) IS NULL               a IS NULL AND b IS NULL
//	ROW(a, b) IS NOT NULL           a IS NOT NULL AND b IS NOT NULL
//	(a, b) IN ((1, 2), (3, 4))      (a, b) = (1, 2) OR (a, b) = (3, 4)
//
// The three-valued logic of AND and OR gives PostgreSQL's NULL rules
// exactly: = is NULL when no field pair is unequal and some is NULL, and
// the ordering is decided by the first unequal pair, NULL when a NULL
// pair comes first. Subqueries returning rows are rewritten onto the
// subquery machinery that exists for one column (rowsublink.go).
//
// A rewrite is memoised by the node it replaces, so that lowering an
// expression twice (aggregate scopes do) finds the same subquery nodes,
// which the planner attaches once each.
type rowForms struct {
	forms map[*pg.Node]*pg.Node
	// fields are the generated field comparisons: one of rows that are
	// fields of rows compares them as records (records.go).
	fields  map[*pg.A_Expr]bool
	semi    map[*pg.SubLink]*pg.Node // rowSemiJoin's forms
	aliases int
}

// rowCompareOps are the operators PostgreSQL compares rows with.
var rowCompareOps = map[string]bool{"=": true, "<>": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}

// expandRows returns the scalar form of n when n compares rows, and nil
// otherwise.
func (p *Planner) expandRows(n *pg.Node) (*pg.Node, error) {
	if out, ok := p.rows.forms[n]; ok {
		return out, nil
	}
	out, err := p.expandRowsOnce(n)
	if err != nil {
		return nil, err
	}
	if out != nil {
		p.rows.keep(n, out)
	}
	return out, nil
}

// keep records out as n's form (nil: n is lowered as it is).
func (f *rowForms) keep(n, out *pg.Node) {
	if f.forms == nil {
		f.forms = map[*pg.Node]*pg.Node{}
	}
	f.forms[n] = out
}

// leaf marks generated field comparisons as final: a field that is itself
// a row is a record value there, as in PostgreSQL, not compared again
// field by field (ROW(ROW(a), b) = ROW(ROW(1), 2) compares ROW(a) and
// ROW(1) with record_eq, a NULL field equal to a NULL field).
func (f *rowForms) leaf(n *pg.Node) *pg.Node {
	f.keep(n, nil)
	if a := n.GetAExpr(); a != nil {
		if f.fields == nil {
			f.fields = map[*pg.A_Expr]bool{}
		}
		f.fields[a] = true
	}
	return n
}

func (p *Planner) expandRowsOnce(n *pg.Node) (*pg.Node, error) {
	switch v := n.Node.(type) {
	case *pg.Node_AExpr:
		return p.expandRowAExpr(v.AExpr)
	case *pg.Node_NullTest:
		return p.expandRowNullTest(v.NullTest), nil
	case *pg.Node_SubLink:
		return p.expandRowSubLink(v.SubLink)
	}
	return nil, nil
}

func (p *Planner) expandRowAExpr(a *pg.A_Expr) (*pg.Node, error) {
	l := a.Lexpr.GetRowExpr()
	if l == nil {
		return nil, leftRowSubquery(a)
	}
	op := opName(a.Name)
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if !rowCompareOps[op] {
			return nil, nil
		}
		if r := a.Rexpr.GetRowExpr(); r != nil {
			return p.rowCompare(op, l.Args, r.Args, a.Location)
		}
		if sl := a.Rexpr.GetSubLink(); sl != nil && sl.SubLinkType == pg.SubLinkType_EXPR_SUBLINK {
			return p.rowCompareSubquery(op, l.Args, sl, a.Location)
		}
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		if r := a.Rexpr.GetRowExpr(); r != nil {
			return p.rowDistinct(a.Kind, l.Args, r.Args, a.Location)
		}
	case pg.A_Expr_Kind_AEXPR_IN:
		return p.rowInList(op, l, a.Rexpr.GetList(), a.Location)
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		return p.rowBetween(a, l)
	}
	return nil, nil
}

// leftRowSubquery is PostgreSQL's error for (SELECT x, y) op (a, b): only
// a row on the left compares with a subquery's row, and a subquery
// elsewhere must have one column.
func leftRowSubquery(a *pg.A_Expr) error {
	sl := a.Lexpr.GetSubLink()
	if sl == nil || sl.SubLinkType != pg.SubLinkType_EXPR_SUBLINK || a.Rexpr.GetRowExpr() == nil {
		return nil
	}
	if sel := sl.Subselect.GetSelectStmt(); sel != nil && selectArity(sel) > 1 {
		return sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column")
	}
	return nil
}

// rowCompare expands l op r. = and <> are the AND and OR of the field
// comparisons; an ordering is lexicographic, each field but the last
// deciding by its strict form and passing on only when equal, the last
// by op itself.
func (p *Planner) rowCompare(op string, l, r []*pg.Node, loc int32) (*pg.Node, error) {
	if len(l) != len(r) {
		return nil, unequalRows()
	}
	if len(l) == 0 {
		return nil, zeroLengthRows()
	}
	cmp := func(op string, i int) *pg.Node {
		return p.rows.leaf(pg.MakeAExprNode(pg.A_Expr_Kind_AEXPR_OP, []*pg.Node{pg.MakeStrNode(op)}, l[i], r[i], loc))
	}
	switch op {
	case "=", "<>", "!=":
		fields := make([]*pg.Node, len(l))
		for i := range l {
			fields[i] = cmp(op, i)
		}
		if op == "=" {
			return boolOf(pg.BoolExprType_AND_EXPR, fields, loc), nil
		}
		return boolOf(pg.BoolExprType_OR_EXPR, fields, loc), nil
	}
	strict := op[:1]
	last := len(l) - 1
	out := cmp(op, last)
	for i := last - 1; i >= 0; i-- {
		rest := boolOf(pg.BoolExprType_AND_EXPR, []*pg.Node{cmp("=", i), out}, loc)
		out = boolOf(pg.BoolExprType_OR_EXPR, []*pg.Node{cmp(strict, i), rest}, loc)
	}
	return out, nil
}

// rowDistinct expands IS [NOT] DISTINCT FROM field by field: distinct
// when some field is, NULLs equal to NULLs.
func (p *Planner) rowDistinct(kind pg.A_Expr_Kind, l, r []*pg.Node, loc int32) (*pg.Node, error) {
	if len(l) != len(r) {
		return nil, unequalRows()
	}
	if len(l) == 0 {
		return nil, zeroLengthRows()
	}
	fields := make([]*pg.Node, len(l))
	for i := range l {
		fields[i] = p.rows.leaf(pg.MakeAExprNode(pg.A_Expr_Kind_AEXPR_DISTINCT, []*pg.Node{pg.MakeStrNode("=")}, l[i], r[i], loc))
	}
	out := boolOf(pg.BoolExprType_OR_EXPR, fields, loc)
	if kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT {
		out = pg.MakeBoolExprNode(pg.BoolExprType_NOT_EXPR, []*pg.Node{out}, loc)
	}
	return out, nil
}

// expandRowNullTest expands ROW(...) IS [NOT] NULL: IS NULL holds when
// every field is NULL, IS NOT NULL when none is, so a row with some NULL
// fields is neither.
func (p *Planner) expandRowNullTest(t *pg.NullTest) *pg.Node {
	r := t.Arg.GetRowExpr()
	if r == nil {
		return nil
	}
	fields := make([]*pg.Node, len(r.Args))
	for i, f := range r.Args {
		fields[i] = p.rows.leaf(&pg.Node{Node: &pg.Node_NullTest{NullTest: &pg.NullTest{
			Arg: f, Nulltesttype: t.Nulltesttype, Location: t.Location}}})
	}
	if len(fields) == 0 {
		// Every field of no fields is NULL, and every one is not.
		return boolConst(true, t.Location)
	}
	return boolOf(pg.BoolExprType_AND_EXPR, fields, t.Location)
}

// rowInList expands (a, b) IN (rows): the OR of the row equalities, and
// NOT IN the AND of the row inequalities.
func (p *Planner) rowInList(op string, l *pg.RowExpr, list *pg.List, loc int32) (*pg.Node, error) {
	if list == nil {
		return nil, nil
	}
	for _, item := range list.Items {
		if item.GetRowExpr() == nil {
			return nil, nil
		}
	}
	each := make([]*pg.Node, len(list.Items))
	for i, item := range list.Items {
		var err error
		if each[i], err = p.rowCompare(op, l.Args, item.GetRowExpr().Args, loc); err != nil {
			return nil, err
		}
	}
	if op == "=" {
		return boolOf(pg.BoolExprType_OR_EXPR, each, loc), nil
	}
	return boolOf(pg.BoolExprType_AND_EXPR, each, loc), nil
}

// rowBetween expands (a, b) [NOT] BETWEEN lo AND hi as PostgreSQL's
// parser does, into >= and <= (or < and >) of rows.
func (p *Planner) rowBetween(a *pg.A_Expr, l *pg.RowExpr) (*pg.Node, error) {
	bounds := a.Rexpr.GetList()
	if bounds == nil || len(bounds.Items) != 2 || bounds.Items[0].GetRowExpr() == nil || bounds.Items[1].GetRowExpr() == nil {
		return nil, nil
	}
	lo, hi := bounds.Items[0].GetRowExpr().Args, bounds.Items[1].GetRowExpr().Args
	ops, join := [2]string{">=", "<="}, pg.BoolExprType_AND_EXPR
	if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
		ops, join = [2]string{"<", ">"}, pg.BoolExprType_OR_EXPR
	}
	x, err := p.rowCompare(ops[0], l.Args, lo, a.Location)
	if err != nil {
		return nil, err
	}
	y, err := p.rowCompare(ops[1], l.Args, hi, a.Location)
	if err != nil {
		return nil, err
	}
	return boolOf(join, []*pg.Node{x, y}, a.Location), nil
}

// boolOf combines xs with op, a single x standing for itself.
func boolOf(op pg.BoolExprType, xs []*pg.Node, loc int32) *pg.Node {
	if len(xs) == 1 {
		return xs[0]
	}
	return pg.MakeBoolExprNode(op, xs, loc)
}

func zeroLengthRows() error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "cannot compare rows of zero length")
}

func unequalRows() error {
	return sqlerr.New(sqlerr.SyntaxError, "unequal number of entries in row expressions")
}

// rowAlias names the derived table a rewrite reads a subquery's rows
// from, and its columns: names no query can spell unquoted, so that the
// compared expressions resolve as they would outside the subquery.
func (f *rowForms) rowAlias(n int) (string, []string) {
	f.aliases++
	name := fmt.Sprintf("%s%d?", rowAliasPrefix, f.aliases)
	cols := make([]string, n)
	for i := range cols {
		cols[i] = fmt.Sprintf("%s%d", name, i+1)
	}
	return name, cols
}

// rowAliasPrefix starts the names rowAlias gives, which no query can
// spell.
const rowAliasPrefix = "?row"

// isRowAlias reports whether name is one rowAlias gave.
func isRowAlias(name string) bool {
	return strings.HasPrefix(name, rowAliasPrefix) && strings.HasSuffix(name, "?")
}
