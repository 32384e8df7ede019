package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// targetHint types the untyped literals of one select list (the list
// whose first item is list[0]): INSERT's single VALUES row planned as a
// select list (srfValues), whose literals take the target columns' types
// as VALUES' do.
type targetHint struct {
	list  []*pg.Node
	types []row.Type
}

// of is the hinted type of item i of list, if any.
func (h targetHint) of(list []*pg.Node, i int) (row.Type, bool) {
	if len(list) == 0 || len(h.list) == 0 || &list[0] != &h.list[0] || i >= len(h.types) {
		return 0, false
	}
	return h.types[i], true
}

// srfValues rewrites an INSERT's single VALUES row that calls
// set-returning functions to the select list PostgreSQL plans it as
// (INSERT INTO t VALUES (generate_series(1, 3), 'x') inserts three
// rows); VALUES of several rows keeps PostgreSQL's 0A000. ok is false
// when sel is not such a row.
func srfValues(sel *pg.SelectStmt) (*pg.SelectStmt, bool) {
	if len(sel.ValuesLists) != 1 || len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil {
		return nil, false
	}
	items := sel.ValuesLists[0].GetList().GetItems()
	if !hasSetReturning(items) {
		return nil, false
	}
	tl := make([]*pg.Node, len(items))
	for i, it := range items {
		if it.GetSetToDefault() != nil {
			return nil, false
		}
		tl[i] = pg.MakeResTargetNodeWithVal(it, 0)
	}
	return &pg.SelectStmt{TargetList: tl, WithClause: sel.WithClause}, true
}

// hintedLiteral lowers an untyped literal of a hinted select list to
// its target column's type (ok false: not such an item).
func (p *Planner) hintedLiteral(c *exprCtx, list []*pg.Node, i int, rt *pg.ResTarget) (target, bool, error) {
	t, ok := p.targetHint.of(list, i)
	if !ok || rt.Val.GetAConst() == nil {
		return target{}, false, nil
	}
	x, err := c.lowerTyped(rt.Val)
	if err != nil {
		return target{}, true, err
	}
	if x, err = c.settle(x, t); err != nil {
		return target{}, true, err
	}
	return target{name: deriveName(rt.Val), x: x}, true, nil
}
