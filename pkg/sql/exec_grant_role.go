package sql

import (
	"context"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// roleGrant is one membership a statement grants or revokes.
type roleGrant struct {
	group, member string
	admin         bool
}

// grantRole executes GRANT role TO role [WITH ADMIN OPTION] [GRANTED BY]
// and REVOKE [ADMIN OPTION FOR] role FROM role, with PostgreSQL 15's
// checks: the roles exist, the granting role holds the admin option on
// each group (or is a superuser), and no grant closes a cycle (0LP01).
// Granting a membership held already changes nothing and sends a NOTICE;
// revoking one not held changes nothing and sends a WARNING, as
// PostgreSQL 15 does.
func (s *Session) grantRole(ctx context.Context, n *pg.GrantRoleStmt) (*Result, error) {
	adminOpt, err := grantRoleOptions(n)
	if err != nil {
		return nil, err
	}
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	sn.ownRoles() // each change is checked against the ones before it
	grantor, err := s.roleGrantor(sn, n.Grantor)
	if err != nil {
		return nil, err
	}
	var groups, members []string
	for _, g := range n.GrantedRoles {
		ap := g.GetAccessPriv()
		if ap == nil {
			return nil, sqlerr.Unsupported("this GRANT role")
		}
		if len(ap.Cols) > 0 {
			return nil, sqlerr.New(sqlerr.InvalidGrantOperation, "column names cannot be included in GRANT/REVOKE ROLE")
		}
		groups = append(groups, ap.PrivName)
	}
	for _, m := range n.GranteeRoles {
		name, err := s.existingRole(sn, m.GetRoleSpec())
		if err != nil {
			return nil, err
		}
		members = append(members, name)
	}
	var changes []Grant
	var notices []Notice
	for _, g := range groups {
		if err := s.checkRoleAdmin(sn, g); err != nil {
			return nil, err
		}
		for _, m := range members {
			rg := roleGrant{group: g, member: m, admin: adminOpt}
			var c *Grant
			var note *Notice
			if n.IsGrant {
				c, note, err = sn.addRoleGrant(rg, grantor)
			} else {
				c, note = sn.removeRoleGrant(rg)
			}
			if err != nil {
				return nil, err
			}
			if c != nil {
				changes = append(changes, *c)
			}
			if note != nil {
				notices = append(notices, *note)
			}
		}
	}
	if len(changes) > 0 {
		if err := s.engine.backend.SetGrants(ctx, changes); err != nil {
			return nil, err
		}
	}
	res := tagf("%s ROLE", map[bool]string{true: "GRANT", false: "REVOKE"}[n.IsGrant])
	res.Notices = notices
	return res, nil
}

// grantRoleOptions reads WITH ADMIN OPTION (or, revoking, ADMIN OPTION
// FOR); PostgreSQL 15 has no other membership option.
func grantRoleOptions(n *pg.GrantRoleStmt) (bool, error) {
	admin := false
	for _, o := range n.Opt {
		d := o.GetDefElem()
		if d == nil || d.Defname != "admin" {
			return false, sqlerr.New(sqlerr.SyntaxError, "syntax error: the only membership option is ADMIN OPTION")
		}
		// GRANT ... WITH ADMIN OPTION carries true; REVOKE ADMIN OPTION
		// FOR carries false (revoke the option, keep the membership).
		admin = !n.IsGrant || defElemBool(d)
	}
	return admin, nil
}

// roleGrantor resolves GRANTED BY: the current role unless given; only a
// superuser may name another.
func (s *Session) roleGrantor(sn *snapshot, spec *pg.RoleSpec) (string, error) {
	if spec == nil {
		return s.user, nil
	}
	name, err := s.existingRole(sn, spec)
	if err != nil {
		return "", err
	}
	if name != s.user && !sn.superuser(s.user) {
		return "", sqlerr.New(sqlerr.InsufficientPrivilege, "must be superuser to set grantor")
	}
	return name, nil
}

// existingRole resolves a role specification to a catalog role (PUBLIC is
// not one: 42704, as PostgreSQL says).
func (s *Session) existingRole(sn *snapshot, spec *pg.RoleSpec) (string, error) {
	if spec == nil {
		return "", sqlerr.Unsupported("this role specification")
	}
	name, err := s.roleSpecName(spec)
	if err != nil {
		return "", err
	}
	if name == "" {
		name = "public"
	} else if _, ok := sn.roles[name]; ok {
		return name, nil
	}
	return "", sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", name)
}

// checkRoleAdmin fails unless the session's role may grant and revoke
// membership in group, which must exist.
func (s *Session) checkRoleAdmin(sn *snapshot, group string) error {
	r, ok := sn.roles[group]
	if !ok {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", group)
	}
	if r.Superuser && !sn.superuser(s.user) {
		return sqlerr.New(sqlerr.InsufficientPrivilege, "must be superuser to alter superusers")
	}
	if !sn.isAdminOf(s.user, group, s.sessionUser) {
		return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "must have admin option on role %q", group)
	}
	return nil
}

// addRoleGrant records a membership in the snapshot and returns the grant
// to store; when it is held already (with the admin option if asked) there
// is nothing to store and PostgreSQL's NOTICE to send instead. A
// membership that would make group a member of itself is 0LP01.
func (sn *snapshot) addRoleGrant(rg roleGrant, grantor string) (*Grant, *Notice, error) {
	if rg.group == rg.member || sn.closure(rg.group, false)[rg.member] {
		return nil, nil, sqlerr.Errorf(sqlerr.InvalidGrantOperation, "role %q is a member of role %q", rg.group, rg.member)
	}
	ms := sn.memberOf[rg.member]
	for i := range ms {
		if ms[i].group != rg.group {
			continue
		}
		if ms[i].admin || !rg.admin {
			n := noticef("role %q is already a member of role %q", rg.member, rg.group)
			return nil, &n, nil
		}
		ms[i].admin = true
		return &Grant{Object: roleObject(rg.group), Grantee: rg.member, Privileges: "Am", Grantor: ms[i].grantor}, nil, nil
	}
	sn.addMembership(Grant{Object: roleObject(rg.group), Grantee: rg.member, Grantor: grantor, Privileges: membershipLetters(rg.admin)})
	return &Grant{Object: roleObject(rg.group), Grantee: rg.member, Privileges: membershipLetters(rg.admin), Grantor: grantor}, nil, nil
}

// removeRoleGrant removes a membership (or, with admin, only its admin
// option) from the snapshot and returns the grant to store, nil when there
// is nothing to remove: then, when the member is not a member at all,
// PostgreSQL's WARNING (a missing admin option goes without a word).
func (sn *snapshot) removeRoleGrant(rg roleGrant) (*Grant, *Notice) {
	ms := sn.memberOf[rg.member]
	for i := range ms {
		if ms[i].group != rg.group {
			continue
		}
		if rg.admin {
			if !ms[i].admin {
				return nil, nil
			}
			ms[i].admin = false
			return &Grant{Object: roleObject(rg.group), Grantee: rg.member, Privileges: "m", Grantor: ms[i].grantor}, nil
		}
		sn.memberOf[rg.member] = append(ms[:i:i], ms[i+1:]...)
		return &Grant{Object: roleObject(rg.group), Grantee: rg.member}, nil
	}
	w := warningf(codeWarning, "role %q is not a member of role %q", rg.member, rg.group)
	return nil, &w
}

func membershipLetters(admin bool) string {
	if admin {
		return "Am"
	}
	return "m"
}

// createRoleMemberships checks and returns the memberships of CREATE ROLE
// name IN ROLE ... ROLE ... ADMIN ..., in PostgreSQL's order (the groups
// it joins, then its admins, then its members).
func (s *Session) createRoleMemberships(sn *snapshot, name string, o roleOptions) ([]Grant, error) {
	var out []Grant
	add := func(rg roleGrant) error {
		g, _, err := sn.addRoleGrant(rg, s.user)
		if err != nil {
			return err
		}
		if g != nil {
			out = append(out, *g)
		}
		return nil
	}
	for _, spec := range o.inRoles {
		group, err := s.existingRole(sn, spec)
		if err != nil {
			return nil, err
		}
		if err := s.checkRoleAdmin(sn, group); err != nil {
			return nil, err
		}
		if err := add(roleGrant{group: group, member: name}); err != nil {
			return nil, err
		}
	}
	for _, list := range []struct {
		specs []*pg.RoleSpec
		admin bool
	}{{o.admins, true}, {o.members, false}} {
		for _, spec := range list.specs {
			member, err := s.existingRole(sn, spec)
			if err != nil {
				return nil, err
			}
			if err := add(roleGrant{group: name, member: member, admin: list.admin}); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
