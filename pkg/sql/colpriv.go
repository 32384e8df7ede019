package sql

import (
	"strconv"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Column privileges, PostgreSQL 15's: SELECT, INSERT and UPDATE granted
// on some columns of a relation (GRANT SELECT (a, b) ON t TO r). They are
// grants on an object naming one column, "relation:<GlobalID>#<attnum>"
// (attnum from 1), beside the relation's own grants:
//
//   - A privilege on the relation covers every column; one on a column
//     covers that column only.
//   - Reading needs SELECT on every column the query references (a *
//     references every column); a query referencing none (count(*))
//     needs SELECT on the relation or on some column. A role without
//     either is refused at the relation, as before.
//   - INSERT needs INSERT on every column it writes; UPDATE needs UPDATE
//     on every column it sets; their WHERE and RETURNING columns need
//     SELECT as reads do.
//   - REVOKE of a privilege on the relation also revokes it from every
//     column, as in PostgreSQL; GRANT on the relation leaves the columns'
//     grants as they are.

// colAllLetters is what ALL (cols) grants: INSERT, SELECT, UPDATE and
// REFERENCES, as PostgreSQL's column ACLs write them.
const colAllLetters = "arwx"

// columnPrivs are the privileges a column takes.
var columnPrivs = map[string]byte{"SELECT": privSelect, "INSERT": privInsert, "UPDATE": privUpdate}

// columnObject names column i (from 0) of the relation object as the
// object of a grant.
func columnObject(relation string, i int) string {
	return relation + "#" + strconv.Itoa(i+1)
}

// hasColumn reports whether user holds priv on column i (from 0) of it,
// by a grant on the relation or on the column.
func (sn *snapshot) hasColumn(user string, it *Item, i int, priv byte) bool {
	object := relationObject(it.ID)
	return sn.has(user, object, it.Owner, priv) || sn.has(user, columnObject(object, i), it.Owner, priv)
}

// hasAnyColumn reports whether user holds priv on some column of it.
func (sn *snapshot) hasAnyColumn(user string, it *Item, priv byte) bool {
	for i := range it.Desc.Arity() {
		if sn.has(user, columnObject(relationObject(it.ID), i), it.Owner, priv) {
			return true
		}
	}
	return false
}

// columnGuard decides how user's reads (or, for priv other than SELECT,
// writes) of it are checked: no guard when user holds priv on the
// relation (or it is an introspection relation), a guard refusing the
// columns user lacks priv on when user holds it on some column, and
// 42501 when user holds it on none.
func (sn *snapshot) columnGuard(user string, it *Item, priv byte) (func(int) error, error) {
	err := sn.checkRelation(user, it, priv)
	if err == nil {
		return nil, nil
	}
	if !sn.hasAnyColumn(user, it, priv) {
		return nil, err
	}
	return func(i int) error {
		if sn.hasColumn(user, it, i, priv) {
			return nil
		}
		return permissionDenied(it.Kind, it.Name)
	}, nil
}

// checkColumns fails with 42501 unless user holds priv on each of the
// columns cols (from 0) of it.
func (sn *snapshot) checkColumns(user string, it *Item, priv byte, cols []int) error {
	guard, err := sn.columnGuard(user, it, priv)
	if err != nil || guard == nil {
		return err
	}
	for _, c := range cols {
		if err := guard(c); err != nil {
			return err
		}
	}
	return nil
}

// columnIndexes returns the indexes of the named columns of it, with
// PostgreSQL's 42703 for a name it lacks.
func columnIndexes(it *Item, names []string) ([]int, error) {
	out := make([]int, 0, len(names))
	for _, n := range names {
		i := -1
		for j := range it.Desc.Arity() {
			if it.Desc.Name(j) == n {
				i = j
				break
			}
		}
		if i < 0 {
			return nil, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", n, it.Name)
		}
		out = append(out, i)
	}
	return out, nil
}

// attACL returns pg_attribute.attacl of column i (from 0) of it: its
// column grants in aclitem's text form, NULL when it has none.
func (sn *snapshot) attACL(it *Item, i int) row.Datum {
	var items []row.Datum
	for _, g := range sortedACL(sn.grants[columnObject(relationObject(it.ID), i)], it.Owner) {
		if g.Privileges != "" {
			items = append(items, row.Text(aclItemText(g.Grantee, g.Grantor, g.Privileges, g.Options)))
		}
	}
	if len(items) == 0 {
		return row.Null()
	}
	return aclArray(items)
}

// columnOfObject splits a column grant's object into its relation's
// object and column index (from 0).
func columnOfObject(object string) (string, int, bool) {
	rel, n, ok := strings.Cut(object, "#")
	if !ok || !strings.HasPrefix(rel, "relation:") {
		return "", 0, false
	}
	attnum, err := strconv.Atoi(n)
	if err != nil || attnum < 1 {
		return "", 0, false
	}
	return rel, attnum - 1, true
}

// useAllColumns asks rel's column guard for every column: a read of the
// whole relation outside the planner (SUBSCRIBE t).
func useAllColumns(rel planner.Relation) error {
	if rel.ColumnGuard == nil {
		return nil
	}
	for i := range rel.Desc.Arity() {
		if err := rel.ColumnGuard(i); err != nil {
			return err
		}
	}
	return nil
}

// lookupObject returns the relation a grant's object names.
func (sn *snapshot) lookupObject(object string) (*Item, bool) {
	id, ok := strings.CutPrefix(object, "relation:")
	if !ok {
		return nil, false
	}
	gid, err := plan.ParseGlobalID(id)
	if err != nil {
		return nil, false
	}
	it, ok := sn.byID[gid]
	return it, ok
}
