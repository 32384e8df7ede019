package sql

import (
	"slices"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Role membership, PostgreSQL 15's rules:
//
//   - A membership is stored as a grant on the object roleObject(group) to
//     the member: letters "m", plus "A" with the admin option.
//   - A role holds the privileges of the roles it is a member of, directly
//     or through other roles, when it has INHERIT (the default); a role
//     with NOINHERIT stops the inheritance at itself: its own memberships
//     count only after SET ROLE. The superuser attribute is never inherited.
//   - Membership as such (what SET ROLE and the cycle check read) ignores
//     INHERIT.
//   - The membership graph has no cycles: granting a role to one of its
//     own members (or to itself) is refused with 0LP01.

// Membership letters of a grant on a role.
const (
	privMember = 'm'
	privAdmin  = 'A'
)

func roleObject(name string) string { return "role:" + name }

// membership is one direct membership of a role in group.
type membership struct {
	group   string
	admin   bool
	grantor string
}

// directGroups lists the roles member is directly a member of.
func (sn *snapshot) directGroups(member string) []membership {
	return sn.memberOf[member]
}

// addMembership records a membership grant while loading the snapshot.
func (sn *snapshot) addMembership(g Grant) {
	group := g.Object[len("role:"):]
	m := membership{group: group, grantor: g.Grantor}
	for i := 0; i < len(g.Privileges); i++ {
		if g.Privileges[i] == privAdmin {
			m.admin = true
		}
	}
	if sn.memberOf == nil {
		sn.memberOf = map[string][]membership{}
	}
	sn.memberOf[g.Grantee] = append(sn.memberOf[g.Grantee], m)
}

// closure lists role and every role it reaches through memberships; with
// inherit, only through roles that inherit (PostgreSQL's
// roles_is_member_of with ROLERECURSE_PRIVS), else through all.
func (sn *snapshot) closure(role string, inherit bool) map[string]bool {
	out := map[string]bool{role: true}
	queue := []string{role}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		if inherit && sn.roles[r].NoInherit {
			continue
		}
		for _, m := range sn.directGroups(r) {
			if !out[m.group] {
				out[m.group] = true
				queue = append(queue, m.group)
			}
		}
	}
	return out
}

// privsOf lists the roles whose privileges user holds: itself and the
// roles it inherits from.
func (sn *snapshot) privsOf(user string) map[string]bool { return sn.closure(user, true) }

// hasPrivsOfRole reports whether user holds role's privileges (a
// superuser holds every role's).
func (sn *snapshot) hasPrivsOfRole(user, role string) bool {
	return sn.superuser(user) || (role != "" && sn.privsOf(user)[role])
}

// isMemberOf reports whether member is role or a member of it, directly or
// not, whatever INHERIT says (a superuser is a member of every role).
func (sn *snapshot) isMemberOf(member, role string) bool {
	return sn.superuser(member) || sn.closure(member, false)[role]
}

// isAdminOf reports whether member may grant and revoke membership in
// role: a superuser, a member holding the admin option through any chain
// of memberships, or, as PostgreSQL 15 allows, the session's own role
// administering itself (sessionUser is the role that logged in).
func (sn *snapshot) isAdminOf(member, role, sessionUser string) bool {
	if sn.superuser(member) {
		return true
	}
	if member == role {
		return member == sessionUser
	}
	for r := range sn.closure(member, false) {
		for _, m := range sn.directGroups(r) {
			if m.group == role && m.admin {
				return true
			}
		}
	}
	return false
}

// memberRows lists every membership as (group, member, grantor, admin),
// sorted, for pg_auth_members.
func (sn *snapshot) memberRows() [][4]string {
	var out [][4]string
	for member, ms := range sn.memberOf {
		for _, m := range ms {
			admin := "f"
			if m.admin {
				admin = "t"
			}
			out = append(out, [4]string{m.group, member, m.grantor, admin})
		}
	}
	slices.SortFunc(out, func(a, b [4]string) int {
		for i := range a {
			if c := compareStrings(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkSetRole refuses every statement of a session acting as a role that
// has been dropped since it logged in (sessionRole: its role was seen) or
// since its SET ROLE: a name without a catalog role would otherwise count
// as a superuser (privileges.go). RESET ROLE and SET ROLE NONE, which read
// no snapshot, still work.
func (sn *snapshot) checkSetRole(user, sessionUser string, sessionRole bool) error {
	if _, ok := sn.roles[user]; ok || (user == sessionUser && !sessionRole) {
		return nil
	}
	if user == sessionUser {
		return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "role %q no longer exists", user)
	}
	return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "role %q, set by SET ROLE, no longer exists: RESET ROLE", user)
}
