package sql

import (
	"context"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Ownership statements, PostgreSQL 15's rules: ALTER TABLE | VIEW |
// MATERIALIZED VIEW | INDEX ... OWNER TO, REASSIGN OWNED BY and DROP
// OWNED BY. An index always belongs to its relation's owner: it changes
// with the relation, and ALTER INDEX ... OWNER TO changes nothing
// (PostgreSQL's WARNING).

// ownerKinds is the item kind each ALTER form of OWNER TO takes ("" for
// ALTER TABLE, which takes any relation).
var ownerKinds = map[pg.ObjectType]ItemKind{
	pg.ObjectType_OBJECT_TABLE:   "",
	pg.ObjectType_OBJECT_VIEW:    KindView,
	pg.ObjectType_OBJECT_MATVIEW: KindMaterializedView,
	pg.ObjectType_OBJECT_INDEX:   KindIndex,
}

// isChangeOwner reports whether a is ALTER ... OWNER TO.
func isChangeOwner(a *pg.AlterTableStmt) bool {
	return len(a.Cmds) == 1 && a.Cmds[0].GetAlterTableCmd().GetSubtype() == pg.AlterTableType_AT_ChangeOwner
}

// alterOwner executes ALTER TABLE | VIEW | MATERIALIZED VIEW | INDEX name
// OWNER TO role. Unless a superuser, the session's role must hold the
// current owner's privileges, be a member of the new owner, and the new
// owner must have CREATE on schema public (42501 otherwise).
func (s *Session) alterOwner(ctx context.Context, a *pg.AlterTableStmt) (*Result, error) {
	want, ok := ownerKinds[a.Objtype]
	if !ok {
		return nil, sqlerr.Unsupported("ALTER " + a.Objtype.String() + " OWNER TO")
	}
	tag := "ALTER " + strings.ReplaceAll(strings.TrimPrefix(a.Objtype.String(), "OBJECT_"), "MATVIEW", "MATERIALIZED VIEW")
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	name := rangeVarName(a.Relation)
	it, ok := sn.lookup(name)
	switch {
	case !ok && a.MissingOk:
		return tagf("%s", tag), nil
	case !ok:
		return nil, undefinedRelation(name)
	case want != "" && it.Kind != want:
		return nil, sqlerr.Errorf(sqlerr.WrongObjectType, "%q is not %s %s", it.Name, article(kindName(want)), kindName(want))
	case it.ID.Kind != plan.KindUser:
		return nil, sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied: %q is a system catalog", it.Name)
	}
	owner, err := s.existingRole(sn, a.Cmds[0].GetAlterTableCmd().GetNewowner())
	if err != nil {
		return nil, err
	}
	if it.Kind == KindIndex || owner == it.Owner {
		return tagf("%s", tag), nil
	}
	if err := s.checkOwnerChange(sn, it, owner); err != nil {
		return nil, err
	}
	ids := []plan.GlobalID{it.ID}
	for i := range sn.items {
		if dep := &sn.items[i]; dep.Kind == KindIndex && dep.On == it.ID {
			ids = append(ids, dep.ID)
		}
	}
	if err := s.engine.backend.SetOwner(ctx, ids, owner, sn.ownerChangeGrants(ids, owner)); err != nil {
		return nil, err
	}
	return tagf("%s", tag), nil
}

// checkOwnerChange checks that the session's role may give it to owner.
func (s *Session) checkOwnerChange(sn *snapshot, it *Item, owner string) error {
	if sn.superuser(s.user) {
		return nil
	}
	if err := sn.checkOwner(s.user, it); err != nil {
		return err
	}
	if !sn.isMemberOf(s.user, owner) {
		return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "must be member of role %q", owner)
	}
	return sn.checkCreate(owner)
}

func article(word string) string {
	if strings.IndexByte("aeiou", word[0]) >= 0 {
		return "an"
	}
	return "a"
}

// ownedBy resolves REASSIGN/DROP OWNED's role list; the session's role
// must hold each one's privileges (42501 "permission denied to <what>").
func (s *Session) ownedBy(sn *snapshot, specs []*pg.Node, what string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, n := range specs {
		name, err := s.existingRole(sn, n.GetRoleSpec())
		if err != nil {
			return nil, err
		}
		if !sn.hasPrivsOfRole(s.user, name) {
			return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to "+what)
		}
		out[name] = true
	}
	return out, nil
}

// ownedItems lists the user items the roles own, in id order.
func (sn *snapshot) ownedItems(roles map[string]bool) []*Item {
	var out []*Item
	for i := range sn.items {
		if it := &sn.items[i]; it.ID.Kind == plan.KindUser && roles[it.Owner] {
			out = append(out, it)
		}
	}
	return out
}

// reassignOwned executes REASSIGN OWNED BY old [, ...] TO new: every item
// the old roles own becomes new's.
func (s *Session) reassignOwned(ctx context.Context, n *pg.ReassignOwnedStmt) (*Result, error) {
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	old, err := s.ownedBy(sn, n.Roles, "reassign objects")
	if err != nil {
		return nil, err
	}
	owner, err := s.existingRole(sn, n.Newrole)
	if err != nil {
		return nil, err
	}
	if !sn.hasPrivsOfRole(s.user, owner) {
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to reassign objects")
	}
	var ids []plan.GlobalID
	for _, it := range sn.ownedItems(old) {
		ids = append(ids, it.ID)
	}
	if len(ids) > 0 {
		if err := s.engine.backend.SetOwner(ctx, ids, owner, sn.ownerChangeGrants(ids, owner)); err != nil {
			return nil, err
		}
	}
	return tagf("REASSIGN OWNED"), nil
}

// dropOwned executes DROP OWNED BY role [, ...] [CASCADE | RESTRICT]: the
// items the roles own are dropped (2BP01 when an item of another role
// depends on one, unless CASCADE) and the privileges granted to them on
// other objects revoked. Memberships stay, as in PostgreSQL 15.
func (s *Session) dropOwned(ctx context.Context, n *pg.DropOwnedStmt) (*Result, error) {
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	roles, err := s.ownedBy(sn, n.Roles, "drop objects")
	if err != nil {
		return nil, err
	}
	roots := sn.ownedItems(roles)
	dropped := map[string]bool{}
	for _, it := range roots {
		dropped[relationObject(it.ID)] = true
	}
	if n.Behavior != pg.DropBehavior_DROP_CASCADE {
		ids := make([]plan.GlobalID, len(roots))
		for i, r := range roots {
			ids[i] = r.ID
		}
		for _, dep := range sn.dependents(ids...) {
			if !roles[dep.Owner] && !ownedIndex(dep, roots...) && !indexOn(dep, KindTable, roots) && !indexOn(dep, KindMaterializedView, roots) {
				return nil, withDetail(sqlerr.New(sqlerr.DependentObjectsStillExist,
					"cannot drop desired object(s) because other objects depend on them"),
					pgKindName(dep.Kind)+" "+dep.Name+" depends on an object owned by the role")
			}
		}
	}
	revokes, err := sn.revokeAllFrom(roles, dropped)
	if err != nil {
		return nil, err
	}
	// The drops and the revokes are one durable change.
	if len(roots) > 0 || len(revokes) > 0 {
		if err := s.engine.backend.DropOwned(ctx, sn.dropOrder(roots), revokes); err != nil {
			return nil, err
		}
	}
	return tagf("DROP OWNED"), nil
}

// revokeAllFrom returns the changes revoking every privilege the roles
// hold on objects other than the dropped relations (and their columns),
// from every grantor, with what they granted with them (CASCADE), as
// DROP OWNED does.
func (sn *snapshot) revokeAllFrom(roles, dropped map[string]bool) ([]Grant, error) {
	var out []Grant
	for _, object := range sn.grantObjects() {
		rel := object
		if r, _, ok := columnOfObject(object); ok {
			rel = r
		}
		if dropped[rel] {
			continue
		}
		e := newACLEdit(object, sn.objectOwner(object), sn.grants[object])
		for _, g := range e.entries() {
			if !roles[g.Grantee] {
				continue
			}
			m := aclMod{grantee: g.Grantee, grantor: g.Grantor, privs: g.Privileges, opts: g.Options}
			if err := sn.update(e, m, false, true); err != nil {
				return nil, err
			}
		}
		out = append(out, e.changes()...)
	}
	return out, nil
}

// grantObjects lists the objects holding grants, sorted.
func (sn *snapshot) grantObjects() []string {
	out := make([]string, 0, len(sn.grants))
	for o := range sn.grants {
		out = append(out, o)
	}
	slices.Sort(out)
	return out
}
