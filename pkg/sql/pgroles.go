package sql

import (
	"hash/fnv"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// The role relations of the pg_catalog emulation, as psql's \du reads
// them: pg_roles (passwords shown as ********), pg_authid (the stored
// SCRAM verifiers; superusers only, as in PostgreSQL), pg_user and
// pg_auth_members (the memberships, membership.go). A role's oid is
// a hash of its name, stable for the role's lifetime; roles the front door
// trusts without a catalog role have none and are not listed.

// oidBootstrapSuperuser is the owner oid of objects without an owner.
const oidBootstrapSuperuser = 10

// roleOID is the stable oid of the role name.
func roleOID(name string) int64 {
	if name == "" {
		return oidBootstrapSuperuser
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return 16384 + int64(h.Sum32()%(1<<30))
}

func nullable(t row.Type) row.ColumnType { return row.ColumnType{Type: t, Nullable: true} }

// constRelation builds an emulated catalog relation: its columns (col),
// then its rows (add).
type constRelation struct {
	desc row.RelationDesc
	rows []plan.ConstantRow
}

func (c *constRelation) col(name string, t row.ColumnType) {
	c.desc.Names = append(c.desc.Names, name)
	c.desc.Types = append(c.desc.Types, t)
}

func (c *constRelation) add(ds ...row.Datum) {
	c.rows = append(c.rows, plan.ConstantRow{Datums: ds, Diff: 1})
}

// relation is the emulated relation name with the rows added so far.
func (c *constRelation) relation(name string) planner.Relation {
	p := plan.NewConstant(c.desc, c.rows...)
	return planner.Relation{ID: plan.GlobalID{Kind: plan.KindSystem}, Name: name, Desc: c.desc, Plan: &p}
}

// roleRelation returns the emulated role relation name, if it is one.
func (sn *snapshot) roleRelation(name string) (planner.Relation, bool, error) {
	var cr constRelation
	add, col := cr.add, cr.col
	b := func(n string) { col(n, row.ColumnType{Type: row.TypeBool}) }
	password := func(r Role, shown bool) row.Datum {
		switch {
		case r.Password == "":
			return row.Null()
		case shown:
			return row.Text(r.Password)
		}
		return row.Text("********")
	}
	switch name {
	case "pg_roles", "pg_authid":
		if name == "pg_authid" && !sn.superuser(sn.user) {
			return planner.Relation{}, true, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for table pg_authid")
		}
		col("oid", row.ColumnType{Type: row.TypeInt64})
		col("rolname", row.ColumnType{Type: row.TypeText})
		for _, n := range []string{"rolsuper", "rolinherit", "rolcreaterole", "rolcreatedb", "rolcanlogin", "rolreplication"} {
			b(n)
		}
		col("rolconnlimit", row.ColumnType{Type: row.TypeInt64})
		col("rolpassword", nullable(row.TypeText))
		col("rolvaliduntil", nullable(row.TypeTimestampTZ))
		b("rolbypassrls")
		for _, r := range sn.sortedRoles() {
			add(row.Int64(roleOID(r.Name)), row.Text(r.Name), row.Bool(r.Superuser), row.Bool(!r.NoInherit),
				row.Bool(r.Superuser), row.Bool(r.Superuser), row.Bool(r.Login), row.Bool(false),
				row.Int64(-1), password(r, name == "pg_authid"), row.Null(), row.Bool(false))
		}
	case "pg_user":
		col("usename", row.ColumnType{Type: row.TypeText})
		col("usesysid", row.ColumnType{Type: row.TypeInt64})
		for _, n := range []string{"usecreatedb", "usesuper", "userepl", "usebypassrls"} {
			b(n)
		}
		col("passwd", nullable(row.TypeText))
		for _, r := range sn.sortedRoles() {
			if !r.Login {
				continue
			}
			add(row.Text(r.Name), row.Int64(roleOID(r.Name)), row.Bool(r.Superuser), row.Bool(r.Superuser),
				row.Bool(false), row.Bool(false), password(r, false))
		}
	case "pg_auth_members":
		for _, n := range []string{"roleid", "member", "grantor"} {
			col(n, row.ColumnType{Type: row.TypeInt64})
		}
		b("admin_option")
		for _, m := range sn.memberRows() {
			add(row.Int64(roleOID(m[0])), row.Int64(roleOID(m[1])), row.Int64(roleOID(m[2])), row.Bool(m[3] == "t"))
		}
	default:
		rel, ok := sn.aclRelation(name)
		return rel, ok, nil
	}
	return cr.relation(name), true, nil
}

// sortedRoles lists the catalog's roles by name.
func (sn *snapshot) sortedRoles() []Role {
	out := make([]Role, 0, len(sn.roles))
	for _, r := range sn.roles {
		out = append(out, r)
	}
	slicesSortRoles(out)
	return out
}

// roleNames names the oids of the catalog's roles and of item owners, for
// pg_get_userbyid.
func (sn *snapshot) roleNames() map[int64]string {
	out := map[int64]string{}
	for name := range sn.roles {
		out[roleOID(name)] = name
	}
	for _, it := range sn.items {
		if it.Owner != "" {
			out[roleOID(it.Owner)] = it.Owner
		}
	}
	return out
}
