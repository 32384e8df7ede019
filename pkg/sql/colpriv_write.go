package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// Column privileges of writes (colpriv.go): INSERT and UPDATE need the
// privilege on each column they write, and the columns a write reads
// (WHERE, SET expressions, RETURNING, ON CONFLICT) need SELECT, which the
// planner asks through readGuard.

// checkWriteColumns checks priv on the columns cols (from 0) of it for
// the session's user (no columns: on some column, as PostgreSQL for
// INSERT ... DEFAULT VALUES), and, when the statement reads the table
// (reads), that the user may read some of its columns.
func (sn *snapshot) checkWriteColumns(it *Item, priv byte, cols []int, reads bool) error {
	if len(cols) == 0 {
		if _, err := sn.columnGuard(sn.user, it, priv); err != nil {
			return err
		}
	} else if err := sn.checkColumns(sn.user, it, priv, cols); err != nil {
		return err
	}
	if reads {
		_, err := sn.columnGuard(sn.user, it, privSelect)
		return err
	}
	return nil
}

// readGuard is the planner's column guard of a written table: nil when
// the session's user may read all of it, else one refusing the columns
// it may not read (all of them when it may read none).
func (sn *snapshot) readGuard(it *Item) func(int) error {
	guard, err := sn.columnGuard(sn.user, it, privSelect)
	if err != nil {
		return func(int) error { return err }
	}
	return guard
}

// insertColumns returns the columns an INSERT writes: those named, else
// as many leading columns as its VALUES rows or select list give (all
// when that is not known before planning), none for DEFAULT VALUES.
func insertColumns(it *Item, ins *pg.InsertStmt) ([]int, error) {
	if len(ins.Cols) > 0 {
		names := make([]string, 0, len(ins.Cols))
		for _, c := range ins.Cols {
			names = append(names, c.GetResTarget().GetName())
		}
		return columnIndexes(it, names)
	}
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil {
		return nil, nil
	}
	n := it.Desc.Arity()
	switch {
	case len(sel.ValuesLists) > 0:
		n = min(n, len(sel.ValuesLists[0].GetList().GetItems()))
	case len(sel.TargetList) > 0 && !hasStarTarget(sel.TargetList):
		n = min(n, len(sel.TargetList))
	}
	return allColumns(it)[:n], nil
}

func hasStarTarget(list []*pg.Node) bool {
	for _, n := range list {
		if cr := n.GetResTarget().GetVal().GetColumnRef(); cr != nil {
			for _, f := range cr.Fields {
				if f.GetAStar() != nil {
					return true
				}
			}
		}
	}
	return false
}

// setColumns returns the columns an UPDATE's (or ON CONFLICT DO
// UPDATE's) SET list assigns.
func setColumns(it *Item, set []*pg.Node) ([]int, error) {
	names := make([]string, 0, len(set))
	for _, n := range set {
		names = append(names, n.GetResTarget().GetName())
	}
	return columnIndexes(it, names)
}
