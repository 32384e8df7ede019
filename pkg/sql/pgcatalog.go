package sql

import (
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/planner"
)

// The pg_catalog emulation is the part of PostgreSQL's catalog that psql's
// relation listings (\d, \dt, \dv, \dm) read: pg_class, pg_namespace and
// pg_am, as constants computed from the statement's catalog snapshot
// (pg_class.relacl: acl.go).
// Oids are stable for an item's lifetime: user item uN is
// planner.FirstUserOID+N-1, system item sN is systemOIDBase+N, and the
// schemas have fixed oids (public's is Postgres' own, 2200). Sources are
// listed as foreign tables ('f'): relations whose data lives elsewhere.
// Other pg_catalog relations stay refused with a message pointing at SHOW.
const (
	oidPGCatalog         = 11
	oidPublic            = 2200
	oidIntrospection     = 12000
	oidInformationSchema = 13000
	systemOIDBase        = 14000
	oidHeap              = 2
	oidBtree             = 403
)

func itemOID(id plan.GlobalID) int64 {
	if id.Kind == plan.KindUser {
		return planner.FirstUserOID + int64(id.N) - 1
	}
	return systemOIDBase + int64(id.N)
}

func relkind(k ItemKind) string {
	switch k {
	case KindTable:
		return "r"
	case KindView:
		return "v"
	case KindMaterializedView:
		return "m"
	case KindIndex:
		return "i"
	case KindSource:
		return "f"
	}
	return ""
}

func catalogDesc(cols ...any) row.RelationDesc {
	var d row.RelationDesc
	for i := 0; i < len(cols); i += 2 {
		d.Names = append(d.Names, cols[i].(string))
		d.Types = append(d.Types, row.ColumnType{Type: cols[i+1].(row.Type)})
	}
	return d
}

// pgCatalogRelation returns the emulated pg_catalog relation name, if it
// is one.
func (sn *snapshot) pgCatalogRelation(name string) (planner.Relation, bool) {
	var desc row.RelationDesc
	var rows []plan.ConstantRow
	add := func(ds ...row.Datum) { rows = append(rows, plan.ConstantRow{Datums: ds, Diff: 1}) }
	switch name {
	case "pg_namespace":
		desc = catalogDesc("oid", row.TypeInt64, "nspname", row.TypeText)
		add(row.Int64(oidPGCatalog), row.Text("pg_catalog"))
		add(row.Int64(oidPublic), row.Text(SchemaPublic))
		add(row.Int64(oidIntrospection), row.Text(SchemaIntrospection))
		add(row.Int64(oidInformationSchema), row.Text("information_schema"))
	case "pg_am":
		desc = catalogDesc("oid", row.TypeInt64, "amname", row.TypeText)
		add(row.Int64(oidHeap), row.Text("heap"))
		add(row.Int64(oidBtree), row.Text("btree"))
	case "pg_class":
		desc = catalogDesc("oid", row.TypeInt64, "relname", row.TypeText, "relnamespace", row.TypeInt64,
			"relkind", row.TypeText, "relowner", row.TypeInt64, "relam", row.TypeInt64)
		desc.Names = append(desc.Names, "relacl")
		desc.Types = append(desc.Types, row.ColumnType{Type: row.TypeTextArray, Nullable: true})
		for _, it := range sn.items {
			ns := int64(oidPublic)
			if it.Schema == SchemaIntrospection {
				ns = oidIntrospection
			}
			am := int64(0)
			switch it.Kind {
			case KindTable, KindMaterializedView:
				am = oidHeap
			case KindIndex:
				am = oidBtree
			}
			add(row.Int64(itemOID(it.ID)), row.Text(it.Name), row.Int64(ns), row.Text(relkind(it.Kind)), row.Int64(roleOID(it.Owner)), row.Int64(am), sn.relACL(&it))
		}
	default:
		return planner.Relation{}, false
	}
	p := plan.NewConstant(desc, rows...)
	return planner.Relation{ID: plan.GlobalID{Kind: plan.KindSystem}, Name: name, Desc: desc, Plan: &p}, true
}
