package sql

import (
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/planner"
)

// The privilege relations of the pg_catalog emulation beside pg_class's
// relacl, what psql's \dp reads: pg_attribute (the relations' columns,
// with attacl, their column privileges: colpriv.go) and pg_policy
// (row security policies: Tandem has none, so it is empty).
//
// pg_attribute lists each table's, materialized view's, source's and
// view's columns by attnum from 1, and for the relations PostgreSQL gives
// system columns (all but views) those too, with PostgreSQL's negative
// attnums. Indexes' columns are not listed.

// systemColumns are PostgreSQL's system columns by attnum -1, -2, ...
var systemColumns = []string{"ctid", "xmin", "cmin", "xmax", "cmax", "tableoid"}

// aclRelation returns the emulated pg_attribute or pg_policy, if name is
// one of them.
func (sn *snapshot) aclRelation(name string) (planner.Relation, bool) {
	var cr constRelation
	add, col := cr.add, cr.col
	switch name {
	case "pg_attribute":
		col("attrelid", row.ColumnType{Type: row.TypeInt64})
		col("attname", row.ColumnType{Type: row.TypeText})
		col("attnum", row.ColumnType{Type: row.TypeInt64})
		col("attnotnull", row.ColumnType{Type: row.TypeBool})
		col("attisdropped", row.ColumnType{Type: row.TypeBool})
		col("attacl", nullable(row.TypeTextArray))
		for _, it := range sn.items {
			if it.Kind == KindIndex {
				continue
			}
			oid := row.Int64(itemOID(it.ID))
			if it.Kind != KindView {
				for i, c := range systemColumns {
					add(oid, row.Text(c), row.Int64(int64(-1-i)), row.Bool(true), row.Bool(false), row.Null())
				}
			}
			for i := range it.Desc.Arity() {
				add(oid, row.Text(it.Desc.Name(i)), row.Int64(int64(i+1)), row.Bool(!it.Desc.Types[i].Nullable), row.Bool(false), sn.attACL(&it, i))
			}
		}
	case "pg_policy":
		col("oid", row.ColumnType{Type: row.TypeInt64})
		col("polname", row.ColumnType{Type: row.TypeText})
		col("polrelid", row.ColumnType{Type: row.TypeInt64})
		col("polcmd", row.ColumnType{Type: row.TypeText})
		col("polpermissive", row.ColumnType{Type: row.TypeBool})
		col("polroles", row.ColumnType{Type: row.TypeInt64Array})
		col("polqual", nullable(row.TypeText))
		col("polwithcheck", nullable(row.TypeText))
	default:
		return planner.Relation{}, false
	}
	return cr.relation(name), true
}
