package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Roles and privileges as one statement sees them (loaded with the
// snapshot). The rules, PostgreSQL's where it has them:
//
//   - A superuser passes every check. A user name the catalog has no role
//     for is one the front door let in without a catalog role (the
//     bootstrap superuser, or any name under loopback trust, which trusts
//     the client with everything anyway): it counts as a superuser.
//   - An object's owner holds every privilege on it until they are
//     revoked from it (acl_edit.go); others hold what was granted to them
//     or to PUBLIC, by any grantor.
//   - Reading a relation needs SELECT on it; a view's own reads are checked
//     against the view's owner, not the reader.
//   - Creating an object in schema public needs CREATE on the schema;
//     creating an index or materialized view, or reading, on a cluster
//     needs USAGE on the cluster; altering or dropping an object needs
//     ownership.

// Privilege letters of PostgreSQL's ACLs.
const (
	privSelect = 'r'
	privInsert = 'a'
	privUpdate = 'w'
	privDelete = 'd'
	privCreate = 'C'
	privUsage  = 'U'
	// privTruncate is TRUNCATE's letter (PostgreSQL's D).
	privTruncate = 'D'
)

// privNames names the privilege letters in messages and GRANT.
var privNames = map[byte]string{privSelect: "SELECT", privInsert: "INSERT", privUpdate: "UPDATE",
	privDelete: "DELETE", privCreate: "CREATE", privUsage: "USAGE", privTruncate: "TRUNCATE"}

// Object names of grants.
func relationObject(id plan.GlobalID) string { return "relation:" + id.String() }
func clusterObject(name string) string       { return "cluster:" + name }
func schemaObject(name string) string        { return "schema:" + name }
func databaseObject(name string) string      { return "database:" + name }

// loadAuthz reads roles and grants into the snapshot.
func (sn *snapshot) loadAuthz(ctx context.Context, b Roles) error {
	roles, err := b.Roles(ctx)
	if err != nil {
		return fmt.Errorf("read roles: %w", err)
	}
	grants, err := b.Grants(ctx)
	if err != nil {
		return fmt.Errorf("read grants: %w", err)
	}
	sn.roles = make(map[string]Role, len(roles))
	for _, r := range roles {
		sn.roles[r.Name] = r
	}
	sn.grants = map[string][]Grant{}
	for _, g := range grants {
		if strings.HasPrefix(g.Object, "role:") {
			sn.addMembership(g)
			continue
		}
		sn.grants[g.Object] = append(sn.grants[g.Object], g)
	}
	return nil
}

// superuser reports whether user bypasses privilege checks.
func (sn *snapshot) superuser(user string) bool {
	r, ok := sn.roles[user]
	return !ok || r.Superuser
}

// has reports whether user holds priv on object, whose owner is owner
// ("" for objects only superusers own).
func (sn *snapshot) has(user, object, owner string, priv byte) bool {
	if sn.superuser(user) {
		return true
	}
	privs := sn.privsOf(user)
	if owner != "" && privs[owner] && sn.ownerHoldsAll(object, owner) {
		return true
	}
	for _, g := range sn.grants[object] {
		if (g.Grantee == "" || privs[g.Grantee]) && strings.IndexByte(g.Privileges, priv) >= 0 {
			return true
		}
	}
	return false
}

// ownerHoldsAll reports whether owner holds every privilege on object
// without an entry saying so: on an object other than a column whose ACL
// has no entry of the owner to itself (the default ACL, or one stored
// before owners' entries were). A column's owner holds what it holds on
// the relation.
func (sn *snapshot) ownerHoldsAll(object, owner string) bool {
	if _, _, ok := columnOfObject(object); ok {
		return false
	}
	for _, g := range sn.grants[object] {
		if g.Grantee == owner && g.Grantor == owner {
			return false
		}
	}
	return true
}

// checkRelation fails with 42501 unless user holds priv on it.
func (sn *snapshot) checkRelation(user string, it *Item, priv byte) error {
	if it.Schema == SchemaIntrospection || it.ID.Kind != plan.KindUser {
		// Introspection relations are readable by everyone, as PostgreSQL's
		// catalogs are; they are never written.
		if priv == privSelect {
			return nil
		}
	}
	if sn.has(user, relationObject(it.ID), it.Owner, priv) {
		return nil
	}
	return permissionDenied(it.Kind, it.Name)
}

// checkOwner fails with 42501 unless user owns it (or is a superuser).
func (sn *snapshot) checkOwner(user string, it *Item) error {
	if sn.hasPrivsOfRole(user, it.Owner) {
		return nil
	}
	return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "must be owner of %s %s", pgKindName(it.Kind), it.Name)
}

// checkCreate fails with 42501 unless user may create objects in schema
// public.
func (sn *snapshot) checkCreate(user string) error {
	if sn.has(user, schemaObject(SchemaPublic), "", privCreate) {
		return nil
	}
	return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied for schema %s", SchemaPublic)
}

// checkUsage fails with 42501 unless user may use cluster.
func (sn *snapshot) checkUsage(user, cluster string) error {
	if cluster == "" || sn.has(user, clusterObject(cluster), "", privUsage) {
		return nil
	}
	return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied for cluster %s", cluster)
}

func permissionDenied(kind ItemKind, name string) error {
	return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied for %s %s", pgKindName(kind), name)
}

// pgKindName is PostgreSQL's word for a relation kind in privilege
// messages ("permission denied for view v"); sources are "source".
func pgKindName(k ItemKind) string {
	switch k {
	case KindMaterializedView, "materialized view":
		return "materialized view"
	case KindView, KindIndex, KindSource:
		return string(k)
	}
	return "table"
}

// roleDependents lists what keeps a role from being dropped, in
// PostgreSQL's DETAIL form ("owner of table t", "privileges for table
// u"): the items it owns and the objects whose ACL names it as grantee
// or grantor, once each.
func (sn *snapshot) roleDependents(name string) string {
	var lines []string
	for _, it := range sn.items {
		if it.Owner == name {
			lines = append(lines, fmt.Sprintf("owner of %s %s", pgKindName(it.Kind), it.Name))
		}
	}
	for _, o := range sn.grantObjects() {
		if sn.objectOwner(o) == name {
			continue
		}
		for _, g := range sn.grants[o] {
			if g.Grantee == name || g.Grantor == name {
				lines = append(lines, "privileges for "+sn.objectText(o))
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// objectText describes a grant's object as PostgreSQL's messages do.
func (sn *snapshot) objectText(object string) string {
	if rel, i, ok := columnOfObject(object); ok {
		if it, ok := sn.lookupObject(rel); ok && i < it.Desc.Arity() {
			return "column " + it.Desc.Name(i) + " of " + pgKindName(it.Kind) + " " + it.Name
		}
	}
	kind, name, _ := strings.Cut(object, ":")
	if kind == "relation" {
		for _, it := range sn.items {
			if it.ID.String() == name {
				return pgKindName(it.Kind) + " " + it.Name
			}
		}
	}
	return kind + " " + name
}

// objectOwner returns the owner of a grant's object ("" for objects only
// superusers own): an owner's own ACL entry is no dependency of the role,
// as in PostgreSQL.
func (sn *snapshot) objectOwner(object string) string {
	if rel, _, ok := columnOfObject(object); ok {
		object = rel
	}
	id, ok := strings.CutPrefix(object, "relation:")
	if !ok {
		return ""
	}
	gid, err := plan.ParseGlobalID(id)
	if err != nil {
		return ""
	}
	if it, ok := sn.byID[gid]; ok {
		return it.Owner
	}
	return ""
}

func withDetail(e *sqlerr.Error, detail string) *sqlerr.Error {
	e.Detail = detail
	return e
}

func slicesSortRoles(rs []Role) {
	slices.SortFunc(rs, func(a, b Role) int { return strings.Compare(a.Name, b.Name) })
}

// checkViewReads checks, for a view, that its owner may read what it reads
// (and so on down through views), so that a view read from its index is
// refused exactly when its inlined query would be.
func (sn *snapshot) checkViewReads(v *Item, seen map[plan.GlobalID]bool) error {
	if v.Kind != KindView || seen[v.ID] {
		return nil
	}
	seen[v.ID] = true
	for _, id := range v.DependsOn {
		dep, ok := sn.byID[id]
		if !ok {
			continue
		}
		if err := sn.checkRelation(v.Owner, dep, privSelect); err != nil {
			return err
		}
		if err := sn.checkViewReads(dep, seen); err != nil {
			return err
		}
	}
	return nil
}

// checkUsage checks USAGE on cluster for the session's user, reading the
// current roles and grants.
func (s *Session) checkUsage(ctx context.Context, cluster string) error {
	sn, err := s.snapshot(ctx)
	if err != nil {
		return err
	}
	return sn.checkUsage(s.user, cluster)
}

// checkWrite checks priv on a written table for the session's user, and
// SELECT too (on the relation or some column: the planner checks the
// columns read) when the statement reads the table's columns (a WHERE
// clause, RETURNING), as PostgreSQL does.
func (sn *snapshot) checkWrite(it *Item, priv byte, reads bool) error {
	if err := sn.checkRelation(sn.user, it, priv); err != nil {
		return err
	}
	if reads {
		_, err := sn.columnGuard(sn.user, it, privSelect)
		return err
	}
	return nil
}

// checkCreateOn checks what creating a maintained object (a materialized
// view, a source) needs: CREATE on schema public and USAGE on its cluster.
func (sn *snapshot) checkCreateOn(user, cluster string) error {
	if err := sn.checkCreate(user); err != nil {
		return err
	}
	return sn.checkUsage(user, cluster)
}

// checkSuperuserOnly refuses, with 42501, statements only superusers may
// run: cluster and replica DDL (clusters spend the operator's machines)
// and ALTER SYSTEM, as in PostgreSQL.
func (s *Session) checkSuperuserOnly(ctx context.Context, st parse.Statement) error {
	what := ""
	switch st := st.(type) {
	case *parse.CreateCluster, *parse.CreateClusterReplica, *parse.DropCluster, *parse.DropClusterReplica:
		what = strings.ToLower(statementName(st))
	case *parse.Postgres:
		if st.Node.GetAlterSystemStmt() != nil {
			return s.requireSuperuser(ctx, "must be superuser to execute ALTER SYSTEM command")
		}
	}
	if what == "" {
		return nil
	}
	return s.requireSuperuser(ctx, "permission denied to "+what)
}

func (s *Session) requireSuperuser(ctx context.Context, msg string) error {
	sn, err := s.snapshot(ctx)
	if err != nil {
		return err
	}
	if !sn.superuser(s.user) {
		return sqlerr.New(sqlerr.InsufficientPrivilege, msg)
	}
	return nil
}
