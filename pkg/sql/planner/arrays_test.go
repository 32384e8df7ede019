package planner

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

func arrayCatalog() mapCatalog {
	d := row.RelationDesc{Names: []string{"id", "a", "b"}, Types: []row.ColumnType{
		{Type: row.TypeInt64}, {Type: row.TypeInt64Array, Nullable: true}, {Type: row.TypeTextArray}}}
	return mapCatalog{"arr": {ID: plan.User(5), Name: "arr", Desc: d, IntWidths: []IntWidth{IntWidth4, IntWidth4, 0},
		Indexes: []Index{{ID: plan.User(6), Keys: []expr.Expr{expr.Column(0)}}}}}
}

// TestArrayPlanTypes: array expressions have PostgreSQL's result types
// and OIDs (the element width of int4[] kept), and the plans type-check.
func TestArrayPlanTypes(t *testing.T) {
	env := plan.MapEnv(map[plan.GlobalID]row.RelationDesc{plan.User(5): arrayCatalog()["arr"].Desc})
	for _, tt := range []struct {
		sql  string
		want []row.ColumnType
		oids []uint32
	}{
		{"SELECT a, b, a[1], b[id], cardinality(b), array_length(a, 1) FROM arr", []row.ColumnType{
			{Type: row.TypeInt64Array, Nullable: true}, {Type: row.TypeTextArray}, {Type: row.TypeInt64, Nullable: true},
			{Type: row.TypeText, Nullable: true}, {Type: row.TypeInt64}, {Type: row.TypeInt64, Nullable: true}},
			[]uint32{1007, 1009, 23, 25, 20, 20}},
		{"SELECT ARRAY[id, 2], ARRAY[1.5], ARRAY['x'], ARRAY[true], '{1}'::smallint[], '{1}'::int8[] FROM arr", []row.ColumnType{
			{Type: row.TypeInt64Array}, {Type: row.TypeNumericArray}, {Type: row.TypeTextArray}, {Type: row.TypeBoolArray},
			{Type: row.TypeInt64Array}, {Type: row.TypeInt64Array}},
			[]uint32{1007, 1231, 1009, 1000, 1005, 1016}},
		{"SELECT id = ANY(a), 'x' <> ALL(b) FROM arr", []row.ColumnType{{Type: row.TypeBool, Nullable: true}, {Type: row.TypeBool, Nullable: true}}, []uint32{16, 16}},
		{"SELECT u FROM arr, unnest(a) AS u", []row.ColumnType{{Type: row.TypeInt64, Nullable: true}}, []uint32{23}},
		{"SELECT ARRAY[NULL::int] = ARRAY[id], ARRAY[NULL::int], ARRAY[NULL::bool, NULL] FROM arr", []row.ColumnType{
			{Type: row.TypeBool}, {Type: row.TypeInt64Array}, {Type: row.TypeBoolArray}}, []uint32{16, 1007, 1000}},
		{"SELECT array_agg(id ORDER BY id DESC), array_agg(DISTINCT b[1]) FILTER (WHERE id > 1), jsonb_agg(id ORDER BY id), array_agg(id::bigint) FROM arr", []row.ColumnType{
			{Type: row.TypeInt64Array, Nullable: true}, {Type: row.TypeTextArray, Nullable: true}, {Type: row.TypeJSONB, Nullable: true}, {Type: row.TypeInt64Array, Nullable: true}},
			[]uint32{1007, 1009, 3802, 1016}},
		{"SELECT '{}'::date[], '{}'::timestamp[], '{}'::uuid[], '{}'::bytea[], '{}'::jsonb[], ARRAY['2024-01-01'::date]", []row.ColumnType{
			{Type: row.TypeDateArray}, {Type: row.TypeTimestampArray}, {Type: row.TypeUUIDArray}, {Type: row.TypeBytesArray}, {Type: row.TypeJSONBArray}, {Type: row.TypeDateArray}},
			[]uint32{1182, 1115, 2951, 1001, 3807, 1182}},
		{"SELECT '{a}'::varchar[]", []row.ColumnType{{Type: row.TypeTextArray}}, []uint32{1009}},
		{"SELECT ARRAY(SELECT id FROM arr), ARRAY(SELECT b[1] FROM arr x WHERE x.id = arr.id), ARRAY(SELECT count(*) FROM arr x WHERE x.id = arr.id) FROM arr", []row.ColumnType{
			{Type: row.TypeInt64Array}, {Type: row.TypeTextArray}, {Type: row.TypeInt64Array}},
			[]uint32{1007, 1009, 1016}},
	} {
		t.Run(tt.sql, func(t *testing.T) {
			q, err := planSQL(t, &Planner{Catalog: arrayCatalog()}, tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := q.Plan.Desc(env); err != nil {
				t.Fatalf("plan does not type-check: %v\n%s", err, Explain(q))
			}
			for i, w := range tt.want {
				if got := q.Desc.Types[i]; got.Type != w.Type || (w.Nullable && !got.Nullable) {
					t.Errorf("column %d: %v, want %v", i, got, w)
				}
				if oid, _ := PGType(q.Desc.Types[i].Type, q.Widths[i], TypeMod{}); oid != tt.oids[i] {
					t.Errorf("column %d: OID %d, want %d", i, oid, tt.oids[i])
				}
			}
		})
	}
}

func TestArrayPlanErrors(t *testing.T) {
	for _, tt := range []struct{ sql, code string }{
		{"SELECT ARRAY[]", sqlerr.InvalidParameterType},
		{"SELECT ARRAY[1, 'x']", sqlerr.InvalidTextRepresentation},
		{"SELECT ARRAY[ARRAY[1]]", sqlerr.FeatureNotSupported},
		{"SELECT id[1] FROM arr", sqlerr.DatatypeMismatch},
		{"SELECT a[1:2] FROM arr", sqlerr.FeatureNotSupported},
		{"SELECT '{1}'::time[]", sqlerr.FeatureNotSupported},
		{"SELECT ARRAY[now()]::text[]", sqlerr.FeatureNotSupported},
		{"SELECT array_to_string(ARRAY[now()], ',')", sqlerr.FeatureNotSupported},
		{"SELECT '{1.5}'::numeric(5,2)[]", sqlerr.FeatureNotSupported},
		{"SELECT '{1,x}'::int[]", sqlerr.InvalidTextRepresentation},
		{"SELECT array_length(a) FROM arr", sqlerr.UndefinedFunction},
		{"SELECT cardinality(id) FROM arr", sqlerr.UndefinedFunction},
		{"SELECT 1 = ANY(id) FROM arr", sqlerr.WrongObjectType},
		{"SELECT * FROM unnest(1)", sqlerr.UndefinedFunction},
		{"SELECT a = b FROM arr", sqlerr.UndefinedFunction},
		{"SELECT array_agg('x')", "42725"},
		{"SELECT array_agg(NULL)", "42725"},
		{"SELECT array_agg(a) FROM arr", sqlerr.FeatureNotSupported},
		{"SELECT array_agg(now())", sqlerr.FeatureNotSupported},
		{"SELECT array_agg(id, id) FROM arr", sqlerr.UndefinedFunction},
		{"SELECT array_agg(*) FROM arr", sqlerr.SyntaxError},
		{"SELECT array_agg(DISTINCT id ORDER BY a) FROM arr", "42P10"},
		{"SELECT array_agg(id) OVER () FROM arr", sqlerr.FeatureNotSupported},
		{"SELECT jsonb_object_agg(id, id ORDER BY id) FROM arr", sqlerr.FeatureNotSupported},
		{"SELECT ARRAY(SELECT a FROM arr)", sqlerr.FeatureNotSupported},
		{"SELECT ARRAY(SELECT id, b FROM arr)", sqlerr.SyntaxError},
	} {
		t.Run(tt.sql, func(t *testing.T) {
			_, err := planSQL(t, &Planner{Catalog: arrayCatalog()}, tt.sql)
			if got := sqlerr.Code(err); got != tt.code {
				t.Fatalf("code %q (%v), want %q", got, err, tt.code)
			}
		})
	}
}
