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
		if kind == "table" {
			// REFERENCES and TRIGGER: Tandem checks neither, but ALL
			// grants and revokes them as PostgreSQL's ALL does (the
			// owner's entry holds them).
			all = append(all, 'x', 't')
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

// grant executes GRANT and REVOKE of privileges on relations (and their
// columns), schema public and the database, in one durable change.
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
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if len(cols) > 0 && n.Objtype != pg.ObjectType_OBJECT_TABLE {
		return nil, sqlerr.New(sqlerr.InvalidGrantOperation, "column privileges are only valid for relations")
	}
	targets, valid, kind, err := sn.grantTargets(n)
	if err != nil {
		return nil, err
	}
	op := grantOp{grant: n.IsGrant, option: n.GrantOption, cascade: n.Behavior == pg.DropBehavior_DROP_CASCADE,
		all: len(n.Privileges) == 0, cols: cols}
	if len(names) > 0 || len(cols) == 0 {
		if op.letters, err = privilegeLetters(names, valid, kind); err != nil {
			return nil, err
		}
	}
	grantees, err := s.grantees(sn, n.Grantees)
	if err != nil {
		return nil, err
	}
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

// grantChanges returns the grants applyGrants stores and its notices:
// for each target, the change of its own ACL, then of its columns' (those
// the statement names, and every column for a REVOKE of column
// privileges on the relation), each as PostgreSQL's ExecGrant does
// (acl_update.go).
func (s *Session) grantChanges(sn *snapshot, targets []grantTarget, op grantOp, grantees []string) ([]Grant, []Notice, error) {
	var changes []Grant
	var notices []Notice
	for _, t := range targets {
		rel := newACLEdit(t.object, t.owner, sn.grants[t.object])
		if t.item != nil && op.letters != "" {
			rel.ensureOwner() // column privileges alone leave it
		}
		before := rel.clone()
		if op.letters != "" {
			grantor, avail := sn.bestGrantor(s.user, op.letters, rel)
			this, ns, err := restrictGrant(t, "", op.grant, op.all, op.letters, avail, avail != "" || sn.holdsOn(rel, t, grantor))
			if err != nil {
				return nil, nil, err
			}
			notices = append(notices, ns...)
			if err := sn.applyOp(rel, op, this, grantor, grantees); err != nil {
				return nil, nil, err
			}
		}
		changes = append(changes, rel.changes()...)
		if t.item == nil {
			continue
		}
		cc, ns, err := s.columnChanges(sn, t, before, op, grantees)
		if err != nil {
			return nil, nil, err
		}
		changes = append(changes, cc...)
		notices = append(notices, ns...)
	}
	return changes, notices, nil
}

// applyOp changes each grantee's entry from grantor by op's letters this
// (those the grantor may grant or revoke): GRANT adds the privileges
// (WITH GRANT OPTION, their grant options too); REVOKE removes them with
// their grant options; REVOKE GRANT OPTION FOR removes only the options.
func (sn *snapshot) applyOp(e *aclEdit, op grantOp, this, grantor string, grantees []string) error {
	for _, g := range grantees {
		if op.publicOption([]string{g}) {
			return publicGrantOptionError()
		}
		m := aclMod{grantee: g, grantor: grantor}
		switch {
		case op.grant:
			m.privs = this
			if op.option {
				m.opts = this
			}
		case op.option:
			m.opts = this
		default:
			m.privs, m.opts = this, this
		}
		if err := sn.update(e, m, op.grant, op.cascade); err != nil {
			return err
		}
	}
	return nil
}

// grantOp is what a GRANT or REVOKE does.
type grantOp struct {
	// letters are the privileges on the object itself ("" when the
	// statement names column privileges only).
	letters string
	grant   bool
	// option is WITH GRANT OPTION for a grant, GRANT OPTION FOR for a
	// revoke.
	option bool
	// cascade is REVOKE ... CASCADE.
	cascade bool
	// all is ALL [PRIVILEGES] (no WARNING for what is not granted).
	all bool
	// cols are the column privileges named.
	cols []columnPriv
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
	notices, err := s.applyGrants(ctx, sn, targets, grantOp{letters: letters, grant: !st.Revoke, all: len(st.Privileges) == 0}, grantees)
	if err != nil {
		return nil, err
	}
	res := tagf("%s", map[bool]string{false: "GRANT", true: "REVOKE"}[st.Revoke])
	res.Notices = notices
	return res, nil
}
