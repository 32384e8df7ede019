package sql

import (
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// pg_class.relacl, PostgreSQL's access privileges of a relation in
// aclitem's text form, as text[] (Tandem has no aclitem type):
// "grantee=privileges/grantor", PUBLIC's grantee empty. As in PostgreSQL
// the owner's entry comes first and holds every relation privilege
// (arwdDxt), the other entries follow in the order their grantees were
// first granted something (acl_edit.go), and every grant's grantor is the
// owner: in Tandem only the owner's privileges (the owner, its members,
// superusers) grant, and PostgreSQL records such grants as the owner's,
// also after ALTER ... OWNER TO. A relation never granted on or revoked
// from has NULL (PostgreSQL's default privileges); afterwards the owner's
// entry stays, also when every other grant was revoked.

// aclRelationLetters is PostgreSQL's order of a relation's privilege
// letters, and what its owner holds.
const aclRelationLetters = "arwdDxt"

// relACL returns the relacl of it.
func (sn *snapshot) relACL(it *Item) row.Datum {
	grants := sn.grants[relationObject(it.ID)]
	if len(grants) == 0 || it.Kind == KindIndex {
		return row.Null()
	}
	var items []row.Datum
	grantor := it.Owner
	if it.Owner != "" {
		items = append(items, row.Text(aclName(it.Owner)+"="+aclRelationLetters+"/"+aclName(it.Owner)))
	}
	for _, g := range sortedACL(grants) {
		if grantor == "" {
			grantor = g.Grantor
		}
		var letters []byte
		for i := 0; i < len(aclRelationLetters); i++ {
			if strings.IndexByte(g.Privileges, aclRelationLetters[i]) >= 0 {
				letters = append(letters, aclRelationLetters[i])
			}
		}
		if len(letters) == 0 || (g.Grantee != "" && g.Grantee == it.Owner) {
			// The owner's own entry is the first.
			continue
		}
		grantee := ""
		if g.Grantee != "" {
			grantee = aclName(g.Grantee)
		}
		items = append(items, row.Text(grantee+"="+string(letters)+"/"+aclName(grantor)))
	}
	d, err := row.Array(row.TypeTextArray, items)
	if err != nil {
		return row.Null()
	}
	return d
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
