package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Subqueries in GROUP BY. A GROUP BY item holding a subquery
// (GROUP BY (SELECT ... WHERE s.x = t.a)) is lowered over the aggregated
// relation, to which the subquery attaches as one in WHERE does,
// correlated or not; its value is a group key. PostgreSQL lets the
// select list, HAVING and ORDER BY name such a key by writing the same
// expression again: that is matched by the expression's text, since the
// subquery written again would attach (and be another column) anew.

// noteSubqueryKey records that GROUP BY item g, holding a subquery, is
// key i.
func (a *aggScope) noteSubqueryKey(g *pg.Node, i int) {
	if !hasSubLink(g) {
		return
	}
	text := ExprText(g)
	if text == "" {
		return
	}
	if a.subqueryKeys == nil {
		a.subqueryKeys = map[string]int{}
	}
	a.subqueryKeys[text] = i
}

// subqueryKey returns the key n names by being written as a GROUP BY item
// holding a subquery.
func (a *aggScope) subqueryKey(n *pg.Node) (int, bool) {
	if len(a.subqueryKeys) == 0 || !hasSubLink(n) {
		return 0, false
	}
	i, ok := a.subqueryKeys[ExprText(n)]
	return i, ok
}

// ExprText renders an expression as SQL text, "" if it cannot: the
// deparser writes equal expressions alike, whatever their spelling and
// positions in the statement.
func ExprText(n *pg.Node) string {
	ref, err := pg.Parse("SELECT")
	if err != nil {
		return ""
	}
	sel := &pg.SelectStmt{TargetList: []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: n}}}}}
	tree := &pg.ParseResult{Version: ref.Version, Stmts: []*pg.RawStmt{{Stmt: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}}}}
	text, err := pg.Deparse(tree)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(text, "SELECT ")
}
