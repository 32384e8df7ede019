package sql

import (
	"context"
	"maps"
	"slices"
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

// grantColumns executes a GRANT or REVOKE naming column privileges (and
// perhaps relation privileges beside them), in one durable change.
func (s *Session) grantColumns(ctx context.Context, n *pg.GrantStmt, names []string, cols []columnPriv) (*Result, error) {
	if n.GrantOption || n.Grantor != nil {
		// Column grants carry no grant option or grantor of their own
		// (yet): refused here too, whatever GRANT on relations accepts.
		return nil, sqlerr.Unsupported("WITH GRANT OPTION and GRANTED BY on column privileges")
	}
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if n.Objtype != pg.ObjectType_OBJECT_TABLE {
		return nil, sqlerr.New(sqlerr.InvalidGrantOperation, "column privileges are only valid for relations")
	}
	targets, valid, kind, err := sn.grantTargets(n)
	if err != nil {
		return nil, err
	}
	grantees, err := s.grantees(sn, n.Grantees)
	if err != nil {
		return nil, err
	}
	var changes []Grant
	var notices []Notice
	relLetters := ""
	if len(names) > 0 {
		if relLetters, err = privilegeLetters(names, valid, kind); err != nil {
			return nil, err
		}
		if changes, notices, err = s.grantChanges(sn, targets, grantOp{letters: relLetters, grant: n.IsGrant}, grantees); err != nil {
			return nil, err
		}
		// The relation's revoke also revokes on every column: done below
		// with the columns', as one edit of each column.
		changes = slices.DeleteFunc(changes, func(g Grant) bool { return strings.Contains(g.Object, "#") })
	}
	for _, t := range targets {
		it := t.item
		letters := map[int]string{}
		for _, cp := range cols {
			idx, err := columnIndexes(it, cp.cols)
			if err != nil {
				return nil, err
			}
			if !sn.hasPrivsOfRole(s.user, t.owner) {
				if !sn.holdsAny(s.user, t) {
					return nil, sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied for %s %s", t.kind, t.name)
				}
				notices = append(notices, columnsNothingDone(t, cp.cols, n.IsGrant)...)
				continue
			}
			for _, i := range idx {
				letters[i] = mergeLetters(letters[i], cp.letters, true)
			}
		}
		if !n.IsGrant && relLetters != "" && sn.hasPrivsOfRole(s.user, t.owner) {
			for i := range it.Desc.Arity() {
				letters[i] = mergeLetters(letters[i], relLetters, true)
			}
		}
		for _, i := range slices.Sorted(maps.Keys(letters)) {
			changes = append(changes, sn.columnGrantChanges(t, []int{i}, letters[i], grantees, t.owner, n.IsGrant)...)
		}
	}
	if len(changes) > 0 {
		if err := s.engine.backend.SetGrants(ctx, changes); err != nil {
			return nil, err
		}
	}
	res := tagf("%s", map[bool]string{true: "GRANT", false: "REVOKE"}[n.IsGrant])
	res.Notices = notices
	return res, nil
}

// columnGrantChanges returns the grants adding (grant) or removing
// letters for grantees on the columns idx of t's relation.
func (sn *snapshot) columnGrantChanges(t grantTarget, idx []int, letters string, grantees []string, grantor string, grant bool) []Grant {
	var out []Grant
	for _, i := range idx {
		object := columnObject(t.object, i)
		acl := newACLEdit(object, sn.grants[object])
		for _, g := range grantees {
			privs, opts := acl.held(g) // column grants carry no grant options
			acl.set(g, mergeLetters(privs, letters, grant), opts, grantor)
		}
		out = append(out, acl.changes()...)
	}
	return out
}

// allColumns returns the indexes of every column of it.
func allColumns(it *Item) []int {
	out := make([]int, it.Desc.Arity())
	for i := range out {
		out[i] = i
	}
	return out
}

// columnsNothingDone is PostgreSQL's WARNING, one for each column, for a
// GRANT or REVOKE of column privileges by a role without grant options.
func columnsNothingDone(t grantTarget, cols []string, grant bool) []Notice {
	var out []Notice
	for _, c := range cols {
		if grant {
			out = append(out, warningf(codePrivilegeNotGranted, "no privileges were granted for column %q of relation %q", c, t.name))
		} else {
			out = append(out, warningf(codePrivilegeNotRevoked, "no privileges could be revoked for column %q of relation %q", c, t.name))
		}
	}
	return out
}

// holdsAnyColumn reports whether user holds some privilege on a column
// of it.
func (sn *snapshot) holdsAnyColumn(user string, it *Item) bool {
	privs := sn.privsOf(user)
	for i := range it.Desc.Arity() {
		for _, g := range sn.grants[columnObject(relationObject(it.ID), i)] {
			if g.Privileges != "" && (g.Grantee == "" || privs[g.Grantee]) {
				return true
			}
		}
	}
	return false
}
