package sql

import (
	"slices"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/planner"
)

// information_schema.table_privileges and column_privileges, PostgreSQL
// 15's views over the relations' ACLs (acl_edit.go): one row per
// privilege of each ACL entry (the default ACL, the owner holding every
// privilege, for a relation never granted on), on tables, views and
// sources (PostgreSQL lists no materialized views). A row is shown when
// the current role holds the privileges of its grantor or grantee, or the
// grantee is PUBLIC. is_grantable is YES when the entry holds the grant
// option or the grantee holds the owner's privileges.
//
// column_privileges lists, for every column, the SELECT, INSERT, UPDATE
// and REFERENCES of the relation's entries and those of the column's own,
// once each.

// aclPrivilegeNames are the privileges of ACL letters as
// information_schema names them, in aclexplode's order.
var aclPrivilegeNames = []struct {
	letter byte
	name   string
}{{privInsert, "INSERT"}, {privSelect, "SELECT"}, {privUpdate, "UPDATE"}, {privDelete, "DELETE"},
	{privTruncate, "TRUNCATE"}, {'x', "REFERENCES"}, {'t', "TRIGGER"}}

// aclExploded is one privilege of one ACL entry.
type aclExploded struct {
	grantor, grantee, privilege string
	grantable                   bool
}

// explodeACL returns the privileges of an ACL's entries, letters limited
// to only when not "".
func explodeACL(grants []Grant, only string) []aclExploded {
	var out []aclExploded
	for _, g := range grants {
		for _, p := range aclPrivilegeNames {
			if strings.IndexByte(g.Privileges, p.letter) < 0 || only != "" && strings.IndexByte(only, p.letter) < 0 {
				continue
			}
			out = append(out, aclExploded{g.Grantor, g.Grantee, p.name, strings.IndexByte(g.Options, p.letter) >= 0})
		}
	}
	return out
}

// effectiveACL returns a relation's ACL with the owner's implied entry
// (the default ACL, or an ACL stored before owners' entries were).
func (sn *snapshot) effectiveACL(it *Item) []Grant {
	object := relationObject(it.ID)
	grants := sn.grants[object]
	if it.Owner != "" && sn.ownerHoldsAll(object, it.Owner) {
		grants = append([]Grant{{Object: object, Grantee: it.Owner, Grantor: it.Owner, Privileges: aclRelationLetters}}, grants...)
	}
	return grants
}

// privilegeVisible reports whether the current role sees a privilege row.
func (sn *snapshot) privilegeVisible(p aclExploded) bool {
	return p.grantee == "" || sn.hasPrivsOfRole(sn.user, p.grantor) || sn.hasPrivsOfRole(sn.user, p.grantee)
}

// privilegeRow is the leading and trailing columns of a privilege row.
func (sn *snapshot) privilegeRow(it *Item, p aclExploded) (grantor, grantee, grantable row.Datum) {
	name := p.grantee
	if name == "" {
		name = "PUBLIC"
	}
	yes := p.grantable || (p.grantee != "" && it.Owner != "" && sn.hasPrivsOfRole(p.grantee, it.Owner))
	return row.Text(p.grantor), row.Text(name), row.Text(map[bool]string{true: "YES", false: "NO"}[yes])
}

// privilegeRelation returns information_schema.table_privileges or
// column_privileges, if name is one of them.
func (sn *snapshot) privilegeRelation(name string) (planner.Relation, bool) {
	var cr constRelation
	text := func(n string) { cr.col(n, row.ColumnType{Type: row.TypeText}) }
	switch name {
	case "table_privileges":
		for _, c := range []string{"grantor", "grantee", "table_catalog", "table_schema", "table_name", "privilege_type", "is_grantable", "with_hierarchy"} {
			text(c)
		}
	case "column_privileges":
		for _, c := range []string{"grantor", "grantee", "table_catalog", "table_schema", "table_name", "column_name", "privilege_type", "is_grantable"} {
			text(c)
		}
	default:
		return planner.Relation{}, false
	}
	for i := range sn.items {
		it := &sn.items[i]
		if it.Kind != KindTable && it.Kind != KindView && it.Kind != KindSource {
			continue
		}
		tbl := []row.Datum{row.Text(Database), row.Text(schemaOf(it)), row.Text(it.Name)}
		if name == "table_privileges" {
			for _, p := range explodeACL(sn.effectiveACL(it), "") {
				if !sn.privilegeVisible(p) {
					continue
				}
				grantor, grantee, yes := sn.privilegeRow(it, p)
				hier := map[bool]string{true: "YES", false: "NO"}[p.privilege == "SELECT"]
				cr.add(append(append([]row.Datum{grantor, grantee}, tbl...), row.Text(p.privilege), yes, row.Text(hier))...)
			}
			continue
		}
		relPrivs := explodeACL(sn.effectiveACL(it), colAllLetters)
		for c := range it.Desc.Arity() {
			seen := map[aclExploded]bool{}
			for _, p := range slices.Concat(relPrivs, explodeACL(sn.grants[columnObject(relationObject(it.ID), c)], colAllLetters)) {
				if seen[p] || !sn.privilegeVisible(p) {
					continue
				}
				seen[p] = true
				grantor, grantee, yes := sn.privilegeRow(it, p)
				cr.add(append(append([]row.Datum{grantor, grantee}, tbl...), row.Text(it.Desc.Name(c)), row.Text(p.privilege), yes)...)
			}
		}
	}
	return cr.relation(name), true
}
