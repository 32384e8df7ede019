package sql

import (
	"context"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// grantTarget is one object of a GRANT or REVOKE: its grant name, what
// privileges it takes, and who may grant on it.
type grantTarget struct {
	object string
	kind   string // "table", "schema", "database", "cluster": for messages
	name   string
	owner  string // "" for objects only superusers own
	item   *Item  // for relations
}

// Privileges each kind of object takes, and what ALL means for it.
var (
	relationPrivs = map[string]byte{"SELECT": privSelect, "INSERT": privInsert, "UPDATE": privUpdate,
		"DELETE": privDelete, "TRUNCATE": privTruncate}
	schemaPrivs   = map[string]byte{"CREATE": privCreate, "USAGE": privUsage}
	databasePrivs = map[string]byte{"CREATE": privCreate}
	clusterPrivs  = map[string]byte{"USAGE": privUsage, "CREATE": privCreate}
)

// privilegeLetters turns privilege names into ACL letters for an object
// kind; no names means ALL.
func privilegeLetters(names []string, valid map[string]byte, kind string) (string, error) {
	if len(names) == 0 {
		var all []byte
		for _, l := range valid {
			all = append(all, l)
		}
		slices.Sort(all)
		return string(all), nil
	}
	var out []byte
	for _, n := range names {
		l, ok := valid[n]
		if !ok {
			if kind == "table" && (n == "REFERENCES" || n == "TRIGGER") || n == "CONNECT" || n == "TEMPORARY" || n == "TEMP" {
				return "", sqlerr.Unsupported(n + " privileges")
			}
			return "", sqlerr.Errorf(sqlerr.InvalidGrantOperation, "invalid privilege type %s for %s", n, kind)
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return string(out), nil
}

// grant executes GRANT and REVOKE of privileges on relations, schema
// public and the database.
func (s *Session) grant(ctx context.Context, n *pg.GrantStmt) (*Result, error) {
	tag := map[bool]string{true: "GRANT", false: "REVOKE"}[n.IsGrant]
	if n.Grantor != nil {
		return nil, sqlerr.Unsupported("GRANTED BY")
	}
	var names []string
	var cols []columnPriv
	for _, p := range n.Privileges {
		ap := p.GetAccessPriv()
		if ap == nil {
			return nil, sqlerr.Unsupported("this privilege")
		}
		if len(ap.Cols) > 0 {
			cp, err := newColumnPriv(ap)
			if err != nil {
				return nil, err
			}
			cols = append(cols, cp)
			continue
		}
		names = append(names, strings.ToUpper(ap.PrivName))
	}
	if len(cols) > 0 {
		return s.grantColumns(ctx, n, names, cols)
	}
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	targets, valid, kind, err := sn.grantTargets(n)
	if err != nil {
		return nil, err
	}
	letters, err := privilegeLetters(names, valid, kind)
	if err != nil {
		return nil, err
	}
	grantees, err := s.grantees(sn, n.Grantees)
	if err != nil {
		return nil, err
	}
	op := grantOp{letters: letters, grant: n.IsGrant, option: n.GrantOption}
	notices, err := s.applyGrants(ctx, sn, targets, op, grantees)
	if err != nil {
		return nil, err
	}
	res := tagf("%s", tag)
	res.Notices = notices
	return res, nil
}

// grantTargets resolves a GrantStmt's objects.
func (sn *snapshot) grantTargets(n *pg.GrantStmt) ([]grantTarget, map[string]byte, string, error) {
	var out []grantTarget
	switch {
	case n.Objtype == pg.ObjectType_OBJECT_TABLE && n.Targtype == pg.GrantTargetType_ACL_TARGET_ALL_IN_SCHEMA:
		for _, o := range n.Objects {
			if schema := o.GetString_().GetSval(); schema != SchemaPublic {
				return nil, nil, "", sqlerr.Errorf(sqlerr.UndefinedObject, "schema %q does not exist", schema)
			}
		}
		for i := range sn.items {
			it := &sn.items[i]
			if it.Kind != KindIndex && schemaOf(it) == SchemaPublic {
				out = append(out, relationTarget(it))
			}
		}
		return out, relationPrivs, "table", nil
	case n.Targtype != pg.GrantTargetType_ACL_TARGET_OBJECT:
		return nil, nil, "", sqlerr.Unsupported("ALTER DEFAULT PRIVILEGES")
	case n.Objtype == pg.ObjectType_OBJECT_TABLE:
		for _, o := range n.Objects {
			rv := o.GetRangeVar()
			if rv == nil {
				return nil, nil, "", sqlerr.Unsupported("this GRANT object")
			}
			name := rangeVarName(rv)
			it, ok := sn.lookup(name)
			if !ok {
				return nil, nil, "", undefinedRelation(name)
			}
			if it.Kind == KindIndex {
				return nil, nil, "", sqlerr.Errorf(sqlerr.WrongObjectType, "%q is an index", it.Name)
			}
			out = append(out, relationTarget(it))
		}
		return out, relationPrivs, "table", nil
	case n.Objtype == pg.ObjectType_OBJECT_SCHEMA:
		for _, o := range n.Objects {
			schema := o.GetString_().GetSval()
			if schema != SchemaPublic {
				return nil, nil, "", sqlerr.Errorf(sqlerr.UndefinedObject, "schema %q does not exist", schema)
			}
			out = append(out, grantTarget{object: schemaObject(schema), kind: "schema", name: schema})
		}
		return out, schemaPrivs, "schema", nil
	case n.Objtype == pg.ObjectType_OBJECT_DATABASE:
		for _, o := range n.Objects {
			db := o.GetString_().GetSval()
			if db != Database {
				return nil, nil, "", sqlerr.Errorf(sqlerr.InvalidCatalogName, "database %q does not exist", db)
			}
			out = append(out, grantTarget{object: databaseObject(db), kind: "database", name: db})
		}
		return out, databasePrivs, "database", nil
	}
	return nil, nil, "", sqlerr.Unsupported("GRANT on " + strings.ToLower(strings.TrimPrefix(n.Objtype.String(), "OBJECT_")))
}

func relationTarget(it *Item) grantTarget {
	return grantTarget{object: relationObject(it.ID), kind: pgKindName(it.Kind), name: it.Name, owner: it.Owner, item: it}
}

// grantees resolves GRANT's role list; PUBLIC is "".
func (s *Session) grantees(sn *snapshot, nodes []*pg.Node) ([]string, error) {
	var out []string
	for _, n := range nodes {
		name, err := s.roleSpecName(n.GetRoleSpec())
		if err != nil {
			return nil, err
		}
		if _, ok := sn.roles[name]; name != "" && !ok {
			return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", name)
		}
		out = append(out, name)
	}
	return out, nil
}

// applyGrants adds (grant) or removes (revoke) op's privileges for every
// grantee on every target, in one durable change (grantChanges).
func (s *Session) applyGrants(ctx context.Context, sn *snapshot, targets []grantTarget, op grantOp, grantees []string) ([]Notice, error) {
	changes, notices, err := s.grantChanges(sn, targets, op, grantees)
	if err != nil || len(changes) == 0 {
		return notices, err
	}
	return notices, s.engine.backend.SetGrants(ctx, changes)
}

// grantChanges returns the grants applyGrants stores and its notices.
// Only an object's owner (or a role holding the owner's privileges) or a
// superuser grants on it: another role holding none of the privileges
// with the grant option grants or revokes nothing and gets PostgreSQL's
// WARNING, or 42501 if it holds no privilege on the object at all.
// Grants onward by a holder of the grant option are not implemented yet
// (feature not supported).
func (s *Session) grantChanges(sn *snapshot, targets []grantTarget, op grantOp, grantees []string) ([]Grant, []Notice, error) {
	var changes []Grant
	var notices []Notice
	for _, t := range targets {
		if !sn.hasPrivsOfRole(s.user, t.owner) {
			if !sn.holdsAny(s.user, t) {
				return nil, nil, sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied for %s %s", t.kind, t.name)
			}
			if op.publicOption(grantees) {
				return nil, nil, publicGrantOptionError() // PostgreSQL checks it also here
			}
			if sn.grantOptionsOf(s.user, t, op.letters) != "" {
				return nil, nil, sqlerr.Unsupported("GRANT or REVOKE by a non-owner holding the grant option")
			}
			notices = append(notices, nothingDone(t, op.letters, op.grant)...)
			continue
		}
		// As PostgreSQL does, a grant made with the owner's privileges (as
		// the owner, a member of it or a superuser) is the owner's.
		grantor := s.user
		if t.owner != "" {
			grantor = t.owner
		}
		if op.publicOption(grantees) {
			return nil, nil, publicGrantOptionError()
		}
		acl := newACLEdit(t.object, sn.grants[t.object])
		if t.item != nil {
			acl.ensureOwner(t.owner)
		}
		for _, g := range grantees {
			if t.item != nil && g == t.owner {
				continue // the owner's entry holds everything already
			}
			privs, opts := op.apply(acl.held(g))
			acl.set(g, privs, opts, grantor)
		}
		changes = append(changes, acl.changes()...)
		if t.item != nil && !op.grant {
			// Revoking on the relation revokes on its columns too.
			changes = append(changes, sn.columnGrantChanges(t, allColumns(t.item), op.letters, grantees, grantor, false)...)
		}
	}
	return changes, notices, nil
}

// grantOp is what a GRANT or REVOKE does to each grantee's entry.
type grantOp struct {
	letters string
	grant   bool
	// option is WITH GRANT OPTION for a grant, GRANT OPTION FOR for a
	// revoke.
	option bool
}

// publicGrantOptionError is PostgreSQL's error for GRANT ... TO PUBLIC
// WITH GRANT OPTION.
func publicGrantOptionError() error {
	return sqlerr.Errorf(sqlerr.InvalidGrantOperation, "grant options can only be granted to roles")
}

// publicOption reports whether op grants grant options to PUBLIC, one of
// grantees.
func (op grantOp) publicOption(grantees []string) bool {
	return op.grant && op.option && slices.Contains(grantees, "")
}

// apply returns a grantee's privileges and grant options after op:
// GRANT adds the privileges (and, WITH GRANT OPTION, their grant
// options); REVOKE removes them with their grant options; REVOKE GRANT
// OPTION FOR removes only the grant options.
func (op grantOp) apply(privs, opts string) (string, string) {
	switch {
	case op.grant && op.option:
		return mergeLetters(privs, op.letters, true), mergeLetters(opts, op.letters, true)
	case op.grant:
		return mergeLetters(privs, op.letters, true), opts
	case op.option:
		return privs, mergeLetters(opts, op.letters, false)
	}
	return mergeLetters(privs, op.letters, false), mergeLetters(opts, op.letters, false)
}

// grantOptionsOf returns the letters of letters user holds with the grant
// option on t, through a grant to it or a role it has the privileges of
// (PostgreSQL gives PUBLIC no grant options).
func (sn *snapshot) grantOptionsOf(user string, t grantTarget, letters string) string {
	privs := sn.privsOf(user)
	var out string
	for _, g := range sn.grants[t.object] {
		if g.Grantee != "" && privs[g.Grantee] {
			out = mergeLetters(out, intersectLetters(g.Options, letters), true)
		}
	}
	return out
}

// holdsAny reports whether user holds some privilege on t: a grant to it,
// a role it has the privileges of, or PUBLIC, or PostgreSQL's default
// privileges of PUBLIC (USAGE on schema public, CONNECT on the database).
func (sn *snapshot) holdsAny(user string, t grantTarget) bool {
	if t.kind == "schema" || t.kind == "database" {
		return true
	}
	privs := sn.privsOf(user)
	for _, g := range sn.grants[t.object] {
		if g.Privileges != "" && (g.Grantee == "" || privs[g.Grantee]) {
			return true
		}
	}
	return t.item != nil && sn.holdsAnyColumn(user, t.item)
}

// nothingDone is PostgreSQL's WARNING for a GRANT or REVOKE by a role
// without grant options: for a relation's REVOKE of column privileges,
// also one for each of its columns (system columns first, as PostgreSQL
// numbers them).
func nothingDone(t grantTarget, letters string, grant bool) []Notice {
	if grant {
		return []Notice{warningf(codePrivilegeNotGranted, "no privileges were granted for %q", t.name)}
	}
	out := []Notice{warningf(codePrivilegeNotRevoked, "no privileges could be revoked for %q", t.name)}
	if t.item == nil || !strings.ContainsAny(letters, string([]byte{privSelect, privInsert, privUpdate})) {
		return out
	}
	var cols []string
	if t.item.Kind != KindView {
		cols = append(cols, "tableoid", "cmax", "xmax", "cmin", "xmin", "ctid")
	}
	for i := range t.item.Desc.Arity() {
		cols = append(cols, t.item.Desc.Name(i))
	}
	for _, c := range cols {
		out = append(out, warningf(codePrivilegeNotRevoked, "no privileges could be revoked for column %q of relation %q", c, t.name))
	}
	return out
}

// mergeLetters adds or removes privilege letters, keeping them sorted.
func mergeLetters(held, letters string, add bool) string {
	set := []byte(held)
	for i := 0; i < len(letters); i++ {
		l := letters[i]
		k := slices.Index(set, l)
		switch {
		case add && k < 0:
			set = append(set, l)
		case !add && k >= 0:
			set = slices.Delete(set, k, k+1)
		}
	}
	slices.Sort(set)
	return string(set)
}

// grantCluster executes GRANT/REVOKE ... ON CLUSTER.
func (s *Session) grantCluster(ctx context.Context, st *parse.GrantCluster) (*Result, error) {
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	letters, err := privilegeLetters(st.Privileges, clusterPrivs, "cluster")
	if err != nil {
		return nil, err
	}
	var targets []grantTarget
	for _, name := range st.Clusters {
		if err := s.checkCluster(ctx, name); err != nil {
			return nil, err
		}
		targets = append(targets, grantTarget{object: clusterObject(name), kind: "cluster", name: name})
	}
	var grantees []string
	for _, g := range st.Grantees {
		if _, ok := sn.roles[g]; g != "" && !ok {
			return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", g)
		}
		grantees = append(grantees, g)
	}
	notices, err := s.applyGrants(ctx, sn, targets, grantOp{letters: letters, grant: !st.Revoke}, grantees)
	if err != nil {
		return nil, err
	}
	res := tagf("%s", map[bool]string{false: "GRANT", true: "REVOKE"}[st.Revoke])
	res.Notices = notices
	return res, nil
}
