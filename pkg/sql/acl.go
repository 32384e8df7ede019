package sql

import (
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// pg_class.relacl, PostgreSQL's access privileges of a relation in
// aclitem's text form, as text[] (Tandem has no aclitem type):
// "grantee=privileges/grantor", PUBLIC's grantee empty, one entry per
// grantee and grantor in PostgreSQL's order (acl_edit.go), a privilege
// held WITH GRANT OPTION followed by "*" ("r*"). A relation never granted
// on or revoked from has NULL (PostgreSQL's default privileges);
// afterwards the owner's entry stays until privileges are revoked from
// the owner itself. An ACL stored before owners' entries were shows the
// owner's entry first, holding every privilege.

// aclRelationLetters is PostgreSQL's order of a relation's privilege
// letters, and what its owner holds.
const aclRelationLetters = "arwdDxt"

// relACL returns the relacl of it.
func (sn *snapshot) relACL(it *Item) row.Datum {
	object := relationObject(it.ID)
	grants := sn.grants[object]
	if len(grants) == 0 || it.Kind == KindIndex {
		return row.Null()
	}
	var items []row.Datum
	if it.Owner != "" && sn.ownerHoldsAll(object, it.Owner) {
		items = append(items, row.Text(aclItemText(it.Owner, it.Owner, aclRelationLetters, "")))
	}
	for _, g := range sortedACL(grants, it.Owner) {
		if g.Privileges != "" {
			items = append(items, row.Text(aclItemText(g.Grantee, g.Grantor, g.Privileges, g.Options)))
		}
	}
	return aclArray(items)
}

// aclItemText is one aclitem in its text form.
func aclItemText(grantee, grantor, privs, opts string) string {
	name := ""
	if grantee != "" {
		name = aclName(grantee)
	}
	return name + "=" + aclLetters(privs, opts) + "/" + aclName(grantor)
}

// aclArray is an ACL as text[] ({} when it has no entry).
func aclArray(items []row.Datum) row.Datum {
	d, err := row.Array(row.TypeTextArray, items)
	if err != nil {
		return row.Null()
	}
	return d
}

// aclLetters writes privileges in aclitem's order, each held with the
// grant option (in opts) followed by "*".
func aclLetters(privs, opts string) string {
	var out []byte
	for i := 0; i < len(aclRelationLetters); i++ {
		l := aclRelationLetters[i]
		if strings.IndexByte(privs, l) < 0 {
			continue
		}
		out = append(out, l)
		if strings.IndexByte(opts, l) >= 0 {
			out = append(out, '*')
		}
	}
	return string(out)
}

// aclName is a role name as aclitem's text form writes it: in double
// quotes (with quotes doubled) unless it is only letters, digits and
// underscores, as PostgreSQL's putid.
func aclName(name string) string {
	safe := name != ""
	for _, r := range name {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			safe = false
		}
	}
	if safe {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
