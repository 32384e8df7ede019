package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/planner"
)

// The information_schema emulation: tables, columns, table_constraints,
// key_column_usage, table_privileges and column_privileges
// (infoschema_privs.go), as constants computed from the statement's
// catalog snapshot like the pg_catalog relations (pgcatalog.go), with the
// columns tools read most. Identifiers are text. NOT NULL constraints are
// not listed in table_constraints (PostgreSQL lists them as CHECK
// constraints with generated names).

// informationSchemaRelation returns the emulated relation name, if it is
// one.
func (sn *snapshot) informationSchemaRelation(name string) (planner.Relation, bool) {
	var desc row.RelationDesc
	var rows []plan.ConstantRow
	add := func(ds ...row.Datum) { rows = append(rows, plan.ConstantRow{Datums: ds, Diff: 1}) }
	text := row.Text
	switch name {
	case "tables":
		desc = catalogDesc("table_catalog", row.TypeText, "table_schema", row.TypeText, "table_name", row.TypeText, "table_type", row.TypeText)
		for _, it := range sn.items {
			kind := ""
			switch it.Kind {
			case KindTable:
				kind = "BASE TABLE"
			case KindView, KindMaterializedView:
				kind = "VIEW"
			case KindSource:
				kind = "FOREIGN"
			default:
				continue
			}
			add(text(Database), text(schemaOf(&it)), text(it.Name), text(kind))
		}
	case "columns":
		desc = catalogDesc("table_catalog", row.TypeText, "table_schema", row.TypeText, "table_name", row.TypeText,
			"column_name", row.TypeText, "ordinal_position", row.TypeInt64, "column_default", row.TypeText,
			"is_nullable", row.TypeText, "data_type", row.TypeText)
		for _, it := range sn.items {
			if it.Kind == KindIndex {
				continue
			}
			widths, mods := planner.TableIntWidths(it.SQL), planner.TableTypeMods(it.SQL)
			var defaults []string
			if it.Kind == KindTable {
				defaults = defaultTexts(&it)
			}
			for i, t := range it.Desc.Types {
				def := row.Null()
				if i < len(defaults) && defaults[i] != "" {
					def = text(defaults[i])
				}
				// PostgreSQL reports every view column nullable.
				nullable := "YES"
				if !t.Nullable && it.Kind == KindTable {
					nullable = "NO"
				}
				typ := t.Type.PGName()
				if t.Type.IsArray() {
					typ = "ARRAY" // as PostgreSQL's data_type; udt_name names the element
				}
				if t.Type == row.TypeInt64 && len(widths) == it.Desc.Arity() {
					switch widths[i] {
					case planner.IntWidth2:
						typ = "smallint"
					case planner.IntWidth4:
						typ = "integer"
					}
				}
				if i < len(mods) {
					// data_type has no length: character varying, character.
					switch mods[i].Kind {
					case planner.ModVarchar:
						typ = "character varying"
					case planner.ModBpchar:
						typ = "character"
					}
				}
				add(text(Database), text(schemaOf(&it)), text(it.Name), text(it.Desc.Name(i)), row.Int64(int64(i+1)), def, text(nullable), text(typ))
			}
		}
	case "table_constraints", "key_column_usage":
		if name == "table_constraints" {
			desc = catalogDesc("constraint_catalog", row.TypeText, "constraint_schema", row.TypeText, "constraint_name", row.TypeText,
				"table_catalog", row.TypeText, "table_schema", row.TypeText, "table_name", row.TypeText, "constraint_type", row.TypeText)
		} else {
			desc = catalogDesc("constraint_catalog", row.TypeText, "constraint_schema", row.TypeText, "constraint_name", row.TypeText,
				"table_catalog", row.TypeText, "table_schema", row.TypeText, "table_name", row.TypeText, "column_name", row.TypeText,
				"ordinal_position", row.TypeInt64)
		}
		for _, it := range sn.items {
			if it.Kind != KindTable {
				continue
			}
			def, err := tableDefOf(&it)
			if err != nil {
				continue
			}
			prefix := []row.Datum{text(Database), text(SchemaPublic)}
			tbl := []row.Datum{text(Database), text(SchemaPublic), text(it.Name)}
			for _, k := range def.keys {
				if name == "table_constraints" {
					kind := "UNIQUE"
					if k.primary {
						kind = "PRIMARY KEY"
					}
					add(append(append(append([]row.Datum{}, prefix...), text(k.name)), append(tbl, text(kind))...)...)
					continue
				}
				for j, c := range k.cols {
					add(append(append(append([]row.Datum{}, prefix...), text(k.name)), append(tbl, text(it.Desc.Name(c)), row.Int64(int64(j+1)))...)...)
				}
			}
			if name == "table_constraints" {
				for _, ch := range def.checks {
					add(append(append(append([]row.Datum{}, prefix...), text(ch.name)), append(tbl, text("CHECK"))...)...)
				}
			}
		}
	default:
		return sn.privilegeRelation(name)
	}
	p := plan.NewConstant(desc, rows...)
	return planner.Relation{ID: plan.GlobalID{Kind: plan.KindSystem}, Name: name, Desc: desc, Plan: &p}, true
}

func schemaOf(it *Item) string {
	if it.Schema == "" {
		return SchemaPublic
	}
	return it.Schema
}

// defaultTexts returns the text of each column's DEFAULT expression (""
// for none).
func defaultTexts(it *Item) []string {
	if !mayDeclareConstraints(it.SQL) {
		return nil
	}
	c, err := parseCreateTable(it.SQL)
	if err != nil {
		return nil
	}
	var out []string
	for _, elt := range c.TableElts {
		cd := elt.GetColumnDef()
		if cd == nil {
			continue
		}
		s := ""
		for _, n := range cd.Constraints {
			if cons := n.GetConstraint(); cons.GetContype() == pg.ConstrType_CONSTR_DEFAULT && cons.RawExpr != nil {
				s = planner.ExprText(cons.RawExpr)
			}
		}
		out = append(out, s)
	}
	return out
}
