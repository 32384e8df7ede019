package sql

import (
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// PostgreSQL 15's changes of one ACL (its acl.c and aclchk.c), on an
// aclEdit:
//
//   - A GRANT or REVOKE runs as the best grantor among the roles whose
//     privileges the current role holds (itself first): the owner when it
//     holds the owner's (or is a superuser), with every grant option;
//     otherwise the role holding the most of the grant options needed
//     (bestGrantor). What it lacks the option for is not granted or
//     revoked (a WARNING); holding no option and no privilege at all is
//     42501 (restrictGrant).
//   - A grant WITH GRANT OPTION by a role other than the owner may not
//     give back an option its grantor's own options depend on (0LP01,
//     checkCircularity).
//   - An entry losing grant options takes with it the privileges its
//     grantee granted with them, unless the grantee still holds the
//     options otherwise: 2BP01 without CASCADE (recursiveRevoke).

// aclMod is one change of an entry: its grantee and grantor, and the
// privileges and grant options added or removed.
type aclMod struct {
	grantee, grantor string
	privs, opts      string
}

// optionsOf returns the letters of want role holds with the grant option
// on e's object: all of them when it holds the owner's privileges,
// otherwise from entries to it or to roles whose privileges it holds
// (PostgreSQL's aclmask).
func (sn *snapshot) optionsOf(e *aclEdit, role, want string) string {
	if e.owner != "" && sn.hasPrivsOfRole(role, e.owner) {
		return want
	}
	privs := sn.privsOf(role)
	var out string
	for _, g := range e.rows {
		if g.Grantee != "" && privs[g.Grantee] {
			out = mergeLetters(out, intersectLetters(g.Options, want), true)
		}
	}
	return out
}

// directOptions returns the letters of want role itself holds with the
// grant option (PostgreSQL's aclmask_direct): all for the owner.
func (e *aclEdit) directOptions(role, want string) string {
	if e.owner != "" && role == e.owner {
		return want
	}
	var out string
	for _, g := range e.rows {
		if g.Grantee == role {
			out = mergeLetters(out, intersectLetters(g.Options, want), true)
		}
	}
	return out
}

// bestGrantor returns who a GRANT or REVOKE of letters by user acts as,
// and the grant options it has of them (PostgreSQL's
// select_best_grantor), over the entries of edits (a column's: its
// relation's and its own), which have one owner. On an object without
// owner a superuser grants as itself.
func (sn *snapshot) bestGrantor(user, letters string, edits ...*aclEdit) (string, string) {
	owner := edits[0].owner
	if user == owner || sn.superuser(user) {
		if owner == "" {
			return user, letters
		}
		return owner, letters
	}
	grantor, best := user, ""
	for _, role := range sn.privsOrder(user) {
		var got string
		for _, e := range edits {
			got = mergeLetters(got, e.directOptions(role, letters), true)
		}
		if len(got) == len(letters) {
			return role, got
		}
		if len(got) > len(best) {
			grantor, best = role, got
		}
	}
	return grantor, best
}

// update applies m to e (grant adds, else removes), with PostgreSQL's
// circularity check and cascade (aclupdate).
func (sn *snapshot) update(e *aclEdit, m aclMod, grant, cascade bool) error {
	if grant && m.opts != "" && m.grantor != e.owner {
		if err := sn.checkCircularity(e, m); err != nil {
			return err
		}
	}
	privs, opts := e.held(m.grantee, m.grantor)
	newPrivs := mergeLetters(privs, m.privs, grant)
	newOpts := mergeLetters(opts, m.opts, grant)
	e.set(m.grantee, m.grantor, newPrivs, newOpts)
	_, newOpts = e.held(m.grantee, m.grantor)
	if lost := mergeLetters(opts, newOpts, false); lost != "" && m.grantee != "" {
		return sn.recursiveRevoke(e, m.grantee, lost, cascade)
	}
	return nil
}

// recursiveRevoke removes, after grantee lost the grant options revoked,
// what it granted with them, unless it still holds them otherwise.
func (sn *snapshot) recursiveRevoke(e *aclEdit, grantee, revoked string, cascade bool) error {
	if e.owner != "" && grantee == e.owner {
		return nil // the owner never loses its grant options
	}
	revoked = mergeLetters(revoked, sn.optionsOf(e, grantee, revoked), false)
	if revoked == "" {
		return nil
	}
	for {
		var dep *Grant
		for _, g := range e.entries() {
			if g.Grantor == grantee && intersectLetters(g.Privileges, revoked) != "" {
				dep = &g
				break
			}
		}
		if dep == nil {
			return nil
		}
		if !cascade {
			err := sqlerr.New(sqlerr.DependentObjectsStillExist, "dependent privileges exist")
			err.Hint = "Use CASCADE to revoke them too."
			return err
		}
		m := aclMod{grantee: dep.Grantee, grantor: grantee, privs: revoked, opts: revoked}
		if err := sn.update(e, m, false, true); err != nil {
			return err
		}
	}
}

// checkCircularity refuses a grant of options by m.grantor that m.grantee
// would have granted it: with every grant option of m.grantee (and what
// depends on them) taken away, m.grantor must still hold them.
func (sn *snapshot) checkCircularity(e *aclEdit, m aclMod) error {
	c := e.clone()
	for {
		var zap *Grant
		for _, g := range c.entries() {
			if g.Grantee == m.grantee && g.Options != "" {
				zap = &g
				break
			}
		}
		if zap == nil {
			break
		}
		z := aclMod{grantee: zap.Grantee, grantor: zap.Grantor, privs: zap.Privileges, opts: zap.Options}
		if err := sn.update(c, z, false, true); err != nil {
			return err
		}
	}
	if own := sn.optionsOf(c, m.grantor, m.opts); len(own) != len(m.opts) {
		return sqlerr.New(sqlerr.InvalidGrantOperation, "grant options cannot be granted back to your own grantor")
	}
	return nil
}

// restrictGrant returns the letters of want the grantor may grant or
// revoke (those it has the grant option of, avail), PostgreSQL's
// WARNINGs when that is not all of them, and 42501 when it has no option
// and holds nothing at all on the object (holds). column names the column
// of a column privilege ("" for the object's own).
func restrictGrant(t grantTarget, column string, grant, all bool, want, avail string, holds bool) (string, []Notice, error) {
	if avail == "" && !holds {
		if column != "" {
			return "", nil, sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied for column %q of relation %q", column, t.name)
		}
		return "", nil, sqlerr.Errorf(sqlerr.InsufficientPrivilege, "permission denied for %s %s", t.kind, t.name)
	}
	this := intersectLetters(want, avail)
	what := "for " + quoteName(t.name)
	if column != "" {
		what = "for column " + quoteName(column) + " of relation " + quoteName(t.name)
	}
	switch {
	case this == "" && grant:
		return this, []Notice{warningf(codePrivilegeNotGranted, "no privileges were granted %s", what)}, nil
	case this == "":
		return this, []Notice{warningf(codePrivilegeNotRevoked, "no privileges could be revoked %s", what)}, nil
	case all || len(this) == len(want):
		return this, nil, nil
	case grant:
		return this, []Notice{warningf(codePrivilegeNotGranted, "not all privileges were granted %s", what)}, nil
	}
	return this, []Notice{warningf(codePrivilegeNotRevoked, "not all privileges could be revoked %s", what)}, nil
}

func quoteName(s string) string { return `"` + s + `"` }

// privsOrder lists user and the roles whose privileges it holds, in the
// order PostgreSQL's roles_is_member_of finds them (breadth first).
func (sn *snapshot) privsOrder(user string) []string {
	out := []string{user}
	seen := map[string]bool{user: true}
	for i := 0; i < len(out); i++ {
		if sn.roles[out[i]].NoInherit {
			continue
		}
		for _, m := range sn.directGroups(out[i]) {
			if !seen[m.group] {
				seen[m.group] = true
				out = append(out, m.group)
			}
		}
	}
	return out
}

// holdsOn reports whether role holds some privilege (or grant option) on
// the object e edits, itself or through PUBLIC or roles whose privileges
// it holds (PostgreSQL's pg_aclmask with ACLMASK_ANY); schema public and
// the database have PUBLIC's default privileges.
func (sn *snapshot) holdsOn(e *aclEdit, t grantTarget, role string) bool {
	if sn.superuser(role) || t.kind == "schema" || t.kind == "database" {
		return true
	}
	if e.owner != "" && sn.hasPrivsOfRole(role, e.owner) {
		return true // every grant option
	}
	privs := sn.privsOf(role)
	for _, g := range e.rows {
		if g.Privileges != "" && (g.Grantee == "" || privs[g.Grantee]) {
			return true
		}
	}
	return false
}
