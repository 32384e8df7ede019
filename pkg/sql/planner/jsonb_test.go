package planner

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

func jsonbCatalog() mapCatalog {
	d := row.RelationDesc{Names: []string{"id", "doc"}, Types: []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeJSONB, Nullable: true}}}
	return mapCatalog{"docs": {ID: plan.User(5), Name: "docs", Desc: d, Indexes: []Index{{ID: plan.User(6), Keys: []expr.Expr{expr.Column(0)}}}}}
}

// TestJSONBPlanTypes: the jsonb operators and functions have
// PostgreSQL's result types (-> may be NULL even over a non-NULL
// document), and the plans type-check.
func TestJSONBPlanTypes(t *testing.T) {
	env := plan.MapEnv(map[plan.GlobalID]row.RelationDesc{plan.User(5): jsonbCatalog()["docs"].Desc})
	for _, tt := range []struct {
		sql  string
		want []row.ColumnType
	}{
		{"SELECT doc -> 'a', doc ->> 0, doc #> '{a,1}', doc #>> '{a}' FROM docs", []row.ColumnType{
			{Type: row.TypeJSONB, Nullable: true}, {Type: row.TypeText, Nullable: true}, {Type: row.TypeJSONB, Nullable: true}, {Type: row.TypeText, Nullable: true}}},
		{"SELECT doc @> '{}', '{}' <@ doc, doc ? 'k', doc ?| '{a,b}', doc ?& ARRAY['a'] FROM docs", []row.ColumnType{
			{Type: row.TypeBool, Nullable: true}, {Type: row.TypeBool, Nullable: true}, {Type: row.TypeBool, Nullable: true}, {Type: row.TypeBool, Nullable: true}, {Type: row.TypeBool, Nullable: true}}},
		{"SELECT doc || '[1]', doc - 'a', doc - 0, jsonb_build_object('id', id), to_jsonb(id) FROM docs", []row.ColumnType{
			{Type: row.TypeJSONB, Nullable: true}, {Type: row.TypeJSONB, Nullable: true}, {Type: row.TypeJSONB, Nullable: true}, {Type: row.TypeJSONB}, {Type: row.TypeJSONB}}},
		{"SELECT '{}'::jsonb -> 'a', '[]'::jsonb ->> 0 FROM docs", []row.ColumnType{
			{Type: row.TypeJSONB, Nullable: true}, {Type: row.TypeText, Nullable: true}}},
		{"SELECT jsonb_agg(doc), jsonb_object_agg(id, doc) FROM docs", []row.ColumnType{
			{Type: row.TypeJSONB, Nullable: true}, {Type: row.TypeJSONB, Nullable: true}}},
	} {
		t.Run(tt.sql, func(t *testing.T) {
			q, err := planSQL(t, &Planner{Catalog: jsonbCatalog()}, tt.sql)
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
			}
		})
	}
}

func TestJSONBPlanErrors(t *testing.T) {
	for _, tt := range []struct{ sql, code string }{
		{"SELECT 1 -> 'a'", sqlerr.UndefinedFunction},
		{"SELECT doc #> t FROM docs, (SELECT '{a}' AS t) s", sqlerr.FeatureNotSupported},
		{"SELECT '{'::json", sqlerr.InvalidTextRepresentation},
		{"SELECT '{}'::json = '{}'::json", sqlerr.UndefinedFunction},
		{"SELECT DISTINCT doc::json FROM docs", sqlerr.UndefinedFunction},
		{"SELECT doc::json FROM docs GROUP BY 1", sqlerr.UndefinedFunction},
		{"SELECT doc::json FROM docs ORDER BY 1", sqlerr.UndefinedFunction},
		{"SELECT '{\"a\":'::jsonb", sqlerr.InvalidTextRepresentation},
		{"SELECT max(doc) FROM docs", sqlerr.UndefinedFunction},
		{"SELECT jsonb_agg(doc) OVER () FROM docs", sqlerr.FeatureNotSupported},
		{"SELECT to_jsonb(now())", sqlerr.FeatureNotSupported},
		{"SELECT jsonb_object_agg(doc, id) FROM docs", sqlerr.InvalidParameterValue},
	} {
		t.Run(tt.sql, func(t *testing.T) {
			_, err := planSQL(t, &Planner{Catalog: jsonbCatalog(), Session: SessionInfo{Now: 1}}, tt.sql)
			if got := sqlerr.Code(err); got != tt.code {
				t.Fatalf("code %q (%v), want %q", got, err, tt.code)
			}
		})
	}
}
