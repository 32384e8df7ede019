package sql

import (
	"context"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/scram"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// roleOptions are the options of CREATE ROLE and ALTER ROLE that Tandem
// keeps; nil fields were not given.
type roleOptions struct {
	superuser, login, inherit *bool
	// inRoles, members and admins are CREATE ROLE's IN ROLE, ROLE (or
	// USER) and ADMIN lists: roles the new role joins, and roles that
	// join it (admins with the admin option).
	inRoles, members, admins []*pg.RoleSpec
	// password is set when PASSWORD was given; a nil *string inside is
	// PASSWORD NULL.
	password **string
}

// parseRoleOptions reads CREATE/ALTER ROLE options as PostgreSQL names
// them in its parse tree. Options about features Tandem lacks are 0A000.
func parseRoleOptions(opts []*pg.Node) (roleOptions, error) {
	var o roleOptions
	seen := map[string]bool{}
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			return o, sqlerr.Unsupported("this role option")
		}
		if seen[d.Defname] {
			return o, sqlerr.New(sqlerr.SyntaxError, "conflicting or redundant options")
		}
		seen[d.Defname] = true
		switch d.Defname {
		case "superuser", "canlogin":
			b := defElemBool(d)
			if d.Defname == "superuser" {
				o.superuser = &b
			} else {
				o.login = &b
			}
		case "password":
			var pw *string
			if sv := d.Arg.GetString_(); sv != nil {
				v := sv.Sval
				pw = &v
			}
			o.password = &pw
		case "inherit":
			b := defElemBool(d)
			o.inherit = &b
		case "addroleto", "rolemembers", "adminmembers":
			specs, err := roleSpecList(d.Arg)
			if err != nil {
				return o, err
			}
			switch d.Defname {
			case "addroleto":
				o.inRoles = specs
			case "rolemembers":
				o.members = specs
			default:
				o.admins = specs
			}
		default:
			return o, sqlerr.Unsupported(fmt.Sprintf("role option %s", strings.ToUpper(d.Defname)))
		}
	}
	return o, nil
}

// roleSpecList reads a role option's list of roles.
func roleSpecList(arg *pg.Node) ([]*pg.RoleSpec, error) {
	var out []*pg.RoleSpec
	for _, n := range arg.GetList().GetItems() {
		rs := n.GetRoleSpec()
		if rs == nil {
			return nil, sqlerr.Unsupported("this role list")
		}
		out = append(out, rs)
	}
	return out, nil
}

// defElemBool reads a role option's boolean (LOGIN is canlogin true,
// NOLOGIN false).
func defElemBool(d *pg.DefElem) bool {
	if b := d.Arg.GetBoolean(); b != nil {
		return b.Boolval
	}
	if i := d.Arg.GetInteger(); i != nil {
		return i.Ival != 0
	}
	return true
}

// verifierOf turns a PASSWORD value into what the catalog stores: a
// SCRAM-SHA-256 verifier (the value itself when it already is one, as
// PostgreSQL accepts), or "" for NULL and the empty string.
func verifierOf(pw *string) (string, error) {
	if pw == nil || *pw == "" {
		return "", nil
	}
	if scram.IsVerifier(*pw) {
		if _, err := scram.Parse(*pw); err != nil {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, err.Error())
		}
		return *pw, nil
	}
	v, err := scram.NewVerifier(*pw)
	if err != nil {
		return "", fmt.Errorf("derive the password's verifier: %w", err)
	}
	return v.String(), nil
}

// checkRoleName refuses the names PostgreSQL reserves.
func checkRoleName(name string) error {
	switch {
	case name == "public", name == "none":
		return sqlerr.Errorf(sqlerr.ReservedName, "role name %q is reserved", name)
	case strings.HasPrefix(name, "pg_"):
		return withDetail(sqlerr.Errorf(sqlerr.ReservedName, "role name %q is reserved", name),
			`Role names starting with "pg_" are reserved.`)
	}
	return nil
}

// createRole executes CREATE ROLE, CREATE USER and CREATE GROUP.
func (s *Session) createRole(ctx context.Context, n *pg.CreateRoleStmt) (*Result, error) {
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	sn.ownRoles() // the new role is checked against its memberships below
	if !sn.superuser(s.user) {
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to create role")
	}
	if err := checkRoleName(n.Role); err != nil {
		return nil, err
	}
	o, err := parseRoleOptions(n.Options)
	if err != nil {
		return nil, err
	}
	r := Role{Name: n.Role, Login: n.StmtType == pg.RoleStmtType_ROLESTMT_USER}
	applyRoleOptions(&r, o)
	if o.password != nil {
		if r.Password, err = verifierOf(*o.password); err != nil {
			return nil, err
		}
	}
	if _, ok := sn.roles[r.Name]; ok {
		return nil, sqlerr.Errorf(sqlerr.DuplicateObject, "role %q already exists", r.Name)
	}
	// The memberships are checked against the role to be before anything
	// is stored, so that a refused membership leaves no role behind.
	sn.roles[r.Name] = r
	grants, err := s.createRoleMemberships(sn, r.Name, o)
	if err != nil {
		return nil, err
	}
	// The role and its memberships are one durable change.
	if err := s.engine.backend.CreateRole(ctx, r, grants); err != nil {
		return nil, err
	}
	return tagf("CREATE ROLE"), nil
}

func applyRoleOptions(r *Role, o roleOptions) {
	if o.superuser != nil {
		r.Superuser = *o.superuser
	}
	if o.login != nil {
		r.Login = *o.login
	}
	if o.inherit != nil {
		r.NoInherit = !*o.inherit
	}
}

// roleSpecName resolves a RoleSpec (a name, CURRENT_USER, SESSION_USER).
func (s *Session) roleSpecName(rs *pg.RoleSpec) (string, error) {
	switch rs.GetRoletype() {
	case pg.RoleSpecType_ROLESPEC_CSTRING:
		return rs.Rolename, nil
	case pg.RoleSpecType_ROLESPEC_CURRENT_USER, pg.RoleSpecType_ROLESPEC_CURRENT_ROLE:
		return s.user, nil
	case pg.RoleSpecType_ROLESPEC_SESSION_USER:
		return s.sessionUser, nil
	case pg.RoleSpecType_ROLESPEC_PUBLIC:
		return "", nil
	}
	return "", sqlerr.Unsupported("this role specification")
}

// alterRole executes ALTER ROLE (and ALTER USER) ... [WITH] options. A
// superuser may change any role; any role may change its own password.
func (s *Session) alterRole(ctx context.Context, n *pg.AlterRoleStmt) (*Result, error) {
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	name, err := s.roleSpecName(n.Role)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, sqlerr.New(sqlerr.UndefinedObject, `role "public" does not exist`)
	}
	o, err := parseRoleOptions(n.Options)
	if err != nil {
		return nil, err
	}
	r, ok := sn.roles[name]
	if !ok {
		return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", name)
	}
	if o.inRoles != nil || o.members != nil || o.admins != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "ALTER ROLE takes no role lists: use GRANT role TO role")
	}
	onlyOwnPassword := name == s.user && o.superuser == nil && o.login == nil && o.inherit == nil
	if !sn.superuser(s.user) && (o.superuser != nil || r.Superuser) {
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "must be superuser to alter superuser roles or change superuser attribute")
	}
	if !sn.superuser(s.user) && !onlyOwnPassword {
		return nil, withDetail(sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to alter role"),
			"Only roles with the SUPERUSER attribute may change the attributes of other roles.")
	}
	applyRoleOptions(&r, o)
	if o.password != nil {
		if r.Password, err = verifierOf(*o.password); err != nil {
			return nil, err
		}
	}
	if err := s.engine.backend.AlterRole(ctx, r); err != nil {
		return nil, err
	}
	return tagf("ALTER ROLE"), nil
}

// dropRole executes DROP ROLE [IF EXISTS] a, b: all of them or none.
func (s *Session) dropRole(ctx context.Context, n *pg.DropRoleStmt) (*Result, error) {
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !sn.superuser(s.user) {
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to drop role")
	}
	var names []string
	for _, node := range n.Roles {
		name, err := s.roleSpecName(node.GetRoleSpec())
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, sqlerr.Errorf(sqlerr.ReservedName, "role name %q is reserved", "public")
		}
		if _, ok := sn.roles[name]; !ok {
			if n.MissingOk {
				continue
			}
			return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", name)
		}
		if name == s.user {
			return nil, sqlerr.New(sqlerr.ObjectInUse, "current user cannot be dropped")
		}
		if detail := sn.roleDependents(name); detail != "" {
			return nil, withDetail(sqlerr.Errorf(sqlerr.DependentObjectsStillExist, "role %q cannot be dropped because some objects depend on it", name), detail)
		}
		names = append(names, name)
	}
	for _, name := range names {
		if err := s.engine.backend.DropRole(ctx, name); err != nil {
			return nil, err
		}
	}
	return tagf("DROP ROLE"), nil
}

// setRole executes SET ROLE name | NONE and RESET ROLE: the session acts
// as another role. The user who logged in must be a superuser or a member
// of that role (directly or not, whatever INHERIT says), as in PostgreSQL.
func (s *Session) setRole(ctx context.Context, v *pg.VariableSetStmt) (*Result, error) {
	switch v.Kind {
	case pg.VariableSetKind_VAR_RESET, pg.VariableSetKind_VAR_SET_DEFAULT:
		s.user = s.sessionUser
		return tagf("RESET"), nil
	case pg.VariableSetKind_VAR_SET_VALUE:
	default:
		return nil, sqlerr.Unsupported("this form of SET ROLE")
	}
	name, err := setValue(v.Args)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(name, "none") {
		s.user = s.sessionUser
		return tagf("SET"), nil
	}
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := sn.roles[name]; !ok {
		return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", name)
	}
	if !sn.isMemberOf(s.sessionUser, name) {
		return nil, sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied to set role %q", name)
	}
	s.user = name
	return tagf("SET"), nil
}
