package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// columnPriv is one privilege of a GRANT or REVOKE with a column list:
// GRANT SELECT (a, b), UPDATE (c) ON t.
type columnPriv struct {
	letters string
	cols    []string
}

// newColumnPriv reads one column privilege of a GrantStmt: SELECT,
// INSERT, UPDATE or ALL; REFERENCES is unsupported as on relations, and
// any other is PostgreSQL's 0LP01.
func newColumnPriv(ap *pg.AccessPriv) (columnPriv, error) {
	var cp columnPriv
	name := strings.ToUpper(ap.PrivName)
	switch l, ok := columnPrivs[name]; {
	case name == "":
		cp.letters = colAllLetters
	case ok:
		cp.letters = string(l)
	case name == "REFERENCES":
		return cp, sqlerr.Unsupported("REFERENCES privileges")
	default:
		return cp, sqlerr.Errorf(sqlerr.InvalidGrantOperation, "invalid privilege type %s for column", name)
	}
	for _, c := range ap.Cols {
		cp.cols = append(cp.cols, c.GetString_().GetSval())
	}
	return cp, nil
}

// columnChanges returns the changes of the column ACLs of t's relation a
// GRANT or REVOKE makes, and their notices, column by column in
// PostgreSQL's order (system columns first), as its ExecGrant_Attribute:
// the grantor is chosen over the relation's ACL as it was before the
// statement (rel) and the column's, and the change (with its circularity
// check and cascade) is made on the column's ACL alone.
func (s *Session) columnChanges(sn *snapshot, t grantTarget, rel *aclEdit, op grantOp, grantees []string) ([]Grant, []Notice, error) {
	letters := map[int]string{} // by column index; system columns negative
	if !op.grant {
		// Revoking on the relation revokes on its columns too.
		if l := intersectLetters(op.letters, colAllLetters); l != "" {
			for i := -len(relSystemColumns(t.item)); i < t.item.Desc.Arity(); i++ {
				letters[i] = l
			}
		}
	}
	for _, cp := range op.cols {
		idx, err := columnIndexes(t.item, cp.cols)
		if err != nil {
			return nil, nil, err
		}
		for _, i := range idx {
			letters[i] = mergeLetters(letters[i], cp.letters, true)
		}
	}
	var changes []Grant
	var notices []Notice
	for i := -len(relSystemColumns(t.item)); i < t.item.Desc.Arity(); i++ {
		want := letters[i]
		if want == "" {
			continue
		}
		name, object := "", ""
		if i < 0 {
			name = relSystemColumns(t.item)[-i-1]
		} else {
			name, object = t.item.Desc.Name(i), columnObject(t.object, i)
		}
		col := newACLEdit(object, t.owner, sn.grants[object])
		grantor, avail := sn.bestGrantor(s.user, want, rel, col)
		holds := avail != "" || sn.holdsOn(rel, t, grantor) || sn.holdsOn(col, t, grantor)
		this, ns, err := restrictGrant(t, name, op.grant, want == colAllLetters, want, avail, holds)
		if err != nil {
			return nil, nil, err
		}
		notices = append(notices, ns...)
		if err := sn.applyOp(col, op, this, grantor, grantees); err != nil {
			return nil, nil, err
		}
		if object != "" {
			changes = append(changes, col.changes()...)
		}
	}
	return changes, notices, nil
}

// relSystemColumns are the system columns of it by attnum -1, -2, ...:
// PostgreSQL's, for every relation but a view.
func relSystemColumns(it *Item) []string {
	if it.Kind == KindView {
		return nil
	}
	return systemColumns
}

// allColumns returns the indexes of every column of it.
func allColumns(it *Item) []int {
	out := make([]int, it.Desc.Arity())
	for i := range out {
		out[i] = i
	}
	return out
}
