package sql

import (
	"slices"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// An object's grants are its ACL, kept as PostgreSQL keeps an aclitem
// array (the grantor being the owner, as in Tandem only the owner's
// privileges grant):
//
//   - No grants: the object has its default privileges (relacl NULL).
//   - The first GRANT or REVOKE on a relation stores its owner's entry
//     (the owner as grantee, every relation privilege), as PostgreSQL
//     writes the default ACL out: relacl then shows the owner's entry
//     also after every other grant was revoked.
//   - A grantee's entry keeps its place; a new grantee's entry goes last
//     (Seq); one whose privileges are all revoked is removed.
//   - ALTER ... OWNER TO moves the old owner's entry to the new owner
//     (merged with the new owner's own entry, which keeps the first
//     place), as PostgreSQL's aclnewowner.
//
// Unlike PostgreSQL, the owner always holds every privilege: REVOKE from
// the owner leaves its entry as it is.

// aclEdit is the ACL of one object being changed by a statement.
type aclEdit struct {
	object  string
	rows    map[string]Grant // by grantee
	changed map[string]bool
	nextSeq uint64
}

func newACLEdit(object string, grants []Grant) *aclEdit {
	e := &aclEdit{object: object, rows: map[string]Grant{}, changed: map[string]bool{}, nextSeq: 1}
	for _, g := range grants {
		e.rows[g.Grantee] = g
		e.nextSeq = max(e.nextSeq, g.Seq+1)
	}
	return e
}

// set stores what grantee holds, keeping its entry's place, or removes
// the entry when privs is empty.
func (e *aclEdit) set(grantee, privs, grantor string) {
	old, ok := e.rows[grantee]
	switch {
	case privs == "" && !ok:
		return
	case privs == "":
		delete(e.rows, grantee)
	case ok && old.Privileges == privs && old.Grantor == grantor:
		return
	case ok:
		old.Privileges, old.Grantor = privs, grantor
		e.rows[grantee] = old
	default:
		e.rows[grantee] = Grant{Object: e.object, Grantee: grantee, Privileges: privs, Grantor: grantor, Seq: e.nextSeq}
		e.nextSeq++
	}
	e.changed[grantee] = true
}

func (e *aclEdit) held(grantee string) string { return e.rows[grantee].Privileges }

// changes returns the grants to store: each changed grantee's entry, an
// empty one for a removed entry.
func (e *aclEdit) changes() []Grant {
	var out []Grant
	for grantee := range e.changed {
		g, ok := e.rows[grantee]
		if !ok {
			g = Grant{Object: e.object, Grantee: grantee}
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b Grant) int { return strings.Compare(a.Grantee, b.Grantee) })
	return out
}

// ensureOwner writes out a relation's default ACL, its owner's entry,
// before the first grant or revoke changes it.
func (e *aclEdit) ensureOwner(owner string) {
	if _, ok := e.rows[owner]; ok || owner == "" {
		return
	}
	seq := uint64(0)
	if len(e.rows) > 0 {
		// An ACL stored before owners' entries were: the owner's goes
		// last rather than moving the others.
		seq = e.nextSeq
		e.nextSeq++
	}
	e.rows[owner] = Grant{Object: e.object, Grantee: owner, Privileges: aclRelationLetters, Grantor: owner, Seq: seq}
	e.changed[owner] = true
}

// newOwner rewrites the ACL for ALTER ... OWNER TO: the old owner's entry
// becomes (or merges into) the new owner's, and every grant the old owner
// made is the new owner's.
func (e *aclEdit) newOwner(old, owner string) {
	if o, ok := e.rows[old]; ok {
		n, had := e.rows[owner]
		delete(e.rows, old)
		e.changed[old] = true
		if had {
			n.Privileges = mergeLetters(n.Privileges, o.Privileges, true)
			n.Seq = min(n.Seq, o.Seq)
		} else {
			n = Grant{Object: e.object, Grantee: owner, Privileges: o.Privileges, Seq: o.Seq}
		}
		e.rows[owner] = n
		e.changed[owner] = true
	}
	for grantee, g := range e.rows {
		if g.Grantor == old || grantee == owner {
			g.Grantor = owner
			e.rows[grantee] = g
			e.changed[grantee] = true
		}
	}
}

// ownerChangeGrants returns the grants ALTER ... OWNER TO and REASSIGN
// OWNED store with the new owner of the items ids.
func (sn *snapshot) ownerChangeGrants(ids []plan.GlobalID, owner string) []Grant {
	var out []Grant
	for _, id := range ids {
		it, ok := sn.byID[id]
		if !ok || it.Owner == owner {
			continue
		}
		object := relationObject(id)
		if len(sn.grants[object]) == 0 {
			continue
		}
		e := newACLEdit(object, sn.grants[object])
		e.newOwner(it.Owner, owner)
		out = append(out, e.changes()...)
	}
	return out
}

// sortedACL returns an object's grants in their ACL order.
func sortedACL(grants []Grant) []Grant {
	out := slices.Clone(grants)
	slices.SortStableFunc(out, func(a, b Grant) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	})
	return out
}
