package sql

import (
	"maps"
	"slices"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// An object's grants are its ACL, kept as PostgreSQL keeps an aclitem
// array: one entry per grantee and grantor, holding privileges and the
// grant options of some of them (Options, always some of Privileges).
//
//   - No grants: the object has its default privileges (relacl NULL): a
//     relation's owner holds every privilege.
//   - The first GRANT or REVOKE on a relation stores its owner's entry
//     (the owner as grantee and grantor, every relation privilege), as
//     PostgreSQL writes the default ACL out. From then on the owner holds
//     the privileges its entries give it, like any role: REVOKE from the
//     owner takes them away (the entry stays, empty, with Keep, so the
//     owner then holds nothing rather than the default). An ACL written
//     before owners' entries were stored gives the owner everything.
//   - The owner (and whoever holds its privileges) always holds every
//     grant option; grants made with them are the owner's.
//   - An entry keeps its place; a new entry goes last (Seq); one left
//     without privileges is removed.
//   - ALTER ... OWNER TO puts the new owner in place of the old one as
//     grantee and grantor, merging entries that then coincide into the
//     first, as PostgreSQL's aclnewowner.
//
// On objects without an owner (schema public, the database, clusters:
// only superusers grant on them) entries are matched by grantee alone.

// aclKey identifies an ACL entry.
type aclKey struct{ grantee, grantor string }

// aclEdit is the ACL of one object being changed by a statement.
type aclEdit struct {
	object string
	// owner is the object's owner ("" for objects only superusers own).
	owner string
	// relation: the object is a relation, whose owner's emptied entry is
	// kept (Keep).
	relation bool
	rows     map[aclKey]Grant
	// stored are the entries as loaded: a removed one is deleted under
	// its stored grantor.
	stored  map[aclKey]Grant
	changed map[aclKey]bool
	nextSeq uint64
}

func newACLEdit(object, owner string, grants []Grant) *aclEdit {
	_, _, column := columnOfObject(object)
	e := &aclEdit{object: object, owner: owner, relation: strings.HasPrefix(object, "relation:") && !column,
		rows: map[aclKey]Grant{}, stored: map[aclKey]Grant{}, changed: map[aclKey]bool{}, nextSeq: 1}
	for _, g := range grants {
		e.rows[e.key(g.Grantee, g.Grantor)] = g
		e.stored[e.key(g.Grantee, g.Grantor)] = g
		e.nextSeq = max(e.nextSeq, g.Seq+1)
	}
	return e
}

// key is the key of grantee's entry from grantor.
func (e *aclEdit) key(grantee, grantor string) aclKey {
	if e.owner == "" {
		return aclKey{grantee: grantee}
	}
	return aclKey{grantee, grantor}
}

// ownerEntry reports whether k is the owner's own entry of a relation.
func (e *aclEdit) ownerEntry(k aclKey) bool {
	return e.relation && e.owner != "" && k.grantee == e.owner && k.grantor == e.owner
}

// set stores what grantee holds from grantor (privs, and opts of them
// with the grant option), keeping its entry's place, or removes the
// entry when privs is empty (empties it, for a relation's owner's own).
func (e *aclEdit) set(grantee, grantor, privs, opts string) {
	k := e.key(grantee, grantor)
	old, ok := e.rows[k]
	opts = intersectLetters(opts, privs)
	switch {
	case privs == "" && !ok:
		return
	case privs == "" && e.ownerEntry(k):
		if old.Privileges == "" && old.Keep {
			return
		}
		old.Privileges, old.Options, old.Keep = "", "", true
		e.rows[k] = old
	case privs == "":
		delete(e.rows, k)
	case ok && old.Privileges == privs && old.Options == opts && !old.Keep:
		return
	case ok:
		// An ownerless object's entry keeps its stored grantor (its key);
		// the owner's emptied entry is a new one, last.
		if old.Keep && old.Privileges == "" {
			old.Seq = e.nextSeq
			e.nextSeq++
		}
		old.Privileges, old.Options, old.Keep = privs, opts, false
		e.rows[k] = old
	default:
		e.rows[k] = Grant{Object: e.object, Grantee: grantee, Privileges: privs, Options: opts, Grantor: grantor, Seq: e.nextSeq}
		e.nextSeq++
	}
	e.changed[k] = true
}

// held returns what grantee holds from grantor: its privileges and those
// of them it holds with the grant option.
func (e *aclEdit) held(grantee, grantor string) (privs, opts string) {
	g := e.rows[e.key(grantee, grantor)]
	return g.Privileges, g.Options
}

// entries returns the entries in ACL order.
func (e *aclEdit) entries() []Grant {
	out := make([]Grant, 0, len(e.rows))
	for _, g := range e.rows {
		out = append(out, g)
	}
	return sortedACL(out, e.owner)
}

// clone returns a copy of e to try changes on.
func (e *aclEdit) clone() *aclEdit {
	c := *e
	c.rows = make(map[aclKey]Grant, len(e.rows))
	for k, g := range e.rows {
		c.rows[k] = g
	}
	c.changed = map[aclKey]bool{}
	return &c
}

// intersectLetters returns the letters of a that are also in b.
func intersectLetters(a, b string) string {
	var out []byte
	for i := 0; i < len(a); i++ {
		if strings.IndexByte(b, a[i]) >= 0 {
			out = append(out, a[i])
		}
	}
	return string(out)
}

// changes returns the grants to store: each changed entry, an empty one
// for a removed entry.
func (e *aclEdit) changes() []Grant {
	var out []Grant
	for k := range e.changed {
		g, ok := e.rows[k]
		if !ok {
			g = Grant{Object: e.object, Grantee: k.grantee, Grantor: k.grantor}
			if old, ok := e.stored[k]; ok {
				g.Grantor = old.Grantor
			}
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b Grant) int {
		return strings.Compare(a.Grantee+"\x00"+a.Grantor, b.Grantee+"\x00"+b.Grantor)
	})
	return out
}

// ensureOwner writes out a relation's default ACL, its owner's entry,
// before the first grant or revoke changes it; an ACL stored before
// owners' entries were gets it too (first, as relacl showed it), so that
// a revoke from the owner has an entry to take letters from.
func (e *aclEdit) ensureOwner() {
	k := aclKey{e.owner, e.owner}
	if _, ok := e.rows[k]; ok || e.owner == "" {
		return
	}
	e.rows[k] = Grant{Object: e.object, Grantee: e.owner, Privileges: aclRelationLetters, Grantor: e.owner}
	e.changed[k] = true
}

// newOwner rewrites the ACL for ALTER ... OWNER TO: the new owner takes
// the old one's place as grantee and grantor, and entries that then have
// the same grantee and grantor merge into the first of them.
func (e *aclEdit) newOwner(owner string) {
	old := e.owner
	e.owner = owner
	rows := sortedACL(slices.Collect(maps.Values(e.rows)), old)
	for k := range e.rows {
		e.changed[k] = true // removed unless written again
	}
	e.rows = map[aclKey]Grant{}
	for _, g := range rows {
		if old != "" && g.Grantee == old {
			g.Grantee = owner
		}
		if old == "" || g.Grantor == old {
			g.Grantor = owner // an owner-less relation's grants were superusers'
		}
		k := e.key(g.Grantee, g.Grantor)
		if first, ok := e.rows[k]; ok {
			first.Privileges = mergeLetters(first.Privileges, g.Privileges, true)
			first.Options = mergeLetters(first.Options, g.Options, true)
			first.Keep = first.Keep && g.Keep
			g = first
		}
		e.rows[k] = g
		e.changed[k] = true
	}
}

// ownerChangeGrants returns the grants ALTER ... OWNER TO and REASSIGN
// OWNED store with the new owner of the items ids (and their columns').
func (sn *snapshot) ownerChangeGrants(ids []plan.GlobalID, owner string) []Grant {
	var out []Grant
	for _, id := range ids {
		it, ok := sn.byID[id]
		if !ok || it.Owner == owner {
			continue
		}
		objects := []string{relationObject(id)}
		for i := range it.Desc.Arity() {
			objects = append(objects, columnObject(relationObject(id), i))
		}
		for _, object := range objects {
			if len(sn.grants[object]) == 0 {
				continue
			}
			e := newACLEdit(object, it.Owner, sn.grants[object])
			e.newOwner(owner)
			out = append(out, e.changes()...)
		}
	}
	return out
}

// sortedACL returns an object's grants in their ACL order: by Seq, the
// owner's own entry first among equals (entries stored before Seq was).
func sortedACL(grants []Grant, owner string) []Grant {
	out := slices.Clone(grants)
	self := func(g Grant) bool { return owner != "" && g.Grantee == owner && g.Grantor == owner }
	slices.SortStableFunc(out, func(a, b Grant) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		case self(a) && !self(b):
			return -1
		case self(b) && !self(a):
			return 1
		}
		return strings.Compare(a.Grantee+"\x00"+a.Grantor, b.Grantee+"\x00"+b.Grantor)
	})
	return out
}
