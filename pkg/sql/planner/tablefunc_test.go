package planner

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestTableFunctionPlans: a function in FROM is a FlatMap of the items to
// its left (no join, no distinct outer values), its columns named as
// PostgreSQL names them, and the plan type-checks.
func TestTableFunctionPlans(t *testing.T) {
	tests := []struct {
		sql, explain string
		names        []string
	}{
		{"SELECT * FROM generate_series(1, 3)", "FlatMap generate_series(1, 3)", []string{"generate_series"}},
		{"SELECT * FROM generate_series(1, 3) AS g", "FlatMap", []string{"g"}},
		{"SELECT * FROM generate_series(1, 3) WITH ORDINALITY AS t(a, b)", "FlatMap generate_series(1, 3) with ordinality", []string{"a", "b"}},
		{"SELECT * FROM generate_series(1, 3) WITH ORDINALITY", "with ordinality", []string{"generate_series", "ordinality"}},
		{"SELECT k, g FROM kv, generate_series(1, kv.k) AS g", "FlatMap generate_series(1, #0)", []string{"k", "g"}},
		{"SELECT k, g FROM kv LEFT JOIN LATERAL generate_series(1, k) AS g ON g > 1", "FlatMap generate_series(1, #0)", []string{"k", "g"}},
		{"SELECT * FROM ROWS FROM (generate_series(1, 2), unnest('{a}'::text[]))", "FlatMap rows_from(generate_series(1, 2), unnest(", []string{"generate_series", "unnest"}},
		{"SELECT * FROM ROWS FROM (generate_series(1, 2), jsonb_each('{}')) WITH ORDINALITY AS x", "with ordinality", []string{"generate_series", "key", "value", "ordinality"}},
		{"SELECT * FROM ROWS FROM (generate_series(1, 2)) AS x", "FlatMap generate_series(1, 2)", []string{"x"}},
		{"SELECT r.* FROM kv, ROWS FROM (generate_series(1, k), generate_series(k, 3)) AS r(a, b)", "rows_from(generate_series(1, #0), generate_series(#0, 3))", []string{"a", "b"}},
		{"SELECT * FROM jsonb_to_record('{}') AS x(a int, b text)", "FlatMap jsonb_to_record(", []string{"a", "b"}},
		{"SELECT * FROM ROWS FROM (json_to_recordset('[]') AS (a date), generate_series(1, 2)) AS r", "rows_from(json_to_recordset(", []string{"a", "generate_series"}},
	}
	env := plan.MapEnv(map[plan.GlobalID]row.RelationDesc{plan.User(1): testCatalog()["kv"].Desc})
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			q, err := planSQL(t, &Planner{Catalog: testCatalog()}, tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			got := Explain(q)
			if !strings.Contains(got, tt.explain) {
				t.Fatalf("EXPLAIN lacks %q:\n%s", tt.explain, got)
			}
			d, err := q.Plan.Desc(env)
			if err != nil {
				t.Fatalf("plan does not type-check: %v\n%s", err, got)
			}
			if q.Desc.Arity() != len(tt.names) || strings.Join(q.Desc.Names, ",") != strings.Join(tt.names, ",") {
				t.Fatalf("columns %v, want %v (plan %v)", q.Desc.Names, tt.names, d.Names)
			}
		})
	}
}

func TestTableFunctionErrors(t *testing.T) {
	for _, tt := range []struct{ sql, code string }{
		{"SELECT * FROM ROWS FROM (generate_series(1, 2), generate_series(1, 3)) AS x(a, b, c)", "42P10"},
		{"SELECT * FROM jsonb_to_record('{}')", sqlerr.SyntaxError},
		{"SELECT * FROM generate_series(1, 2) AS x(a int)", sqlerr.SyntaxError},
		{"SELECT * FROM jsonb_to_record('{}') WITH ORDINALITY AS x(a int)", sqlerr.SyntaxError},
		{"SELECT * FROM ROWS FROM (jsonb_to_record('{}'), generate_series(1, 2)) AS x(a int)", sqlerr.SyntaxError},
		{"SELECT * FROM jsonb_to_record('{}') AS x(a int, a text)", "42701"},
		{"SELECT * FROM jsonb_to_record('{}') AS x(a int[])", sqlerr.FeatureNotSupported},
		{"SELECT * FROM jsonb_to_record('{}', 1) AS x(a int)", sqlerr.UndefinedFunction},
		{"SELECT * FROM no_such_function(1)", sqlerr.UndefinedFunction},
		{"SELECT * FROM lower('a')", sqlerr.FeatureNotSupported},
		{"SELECT * FROM generate_series(1)", sqlerr.UndefinedFunction},
		{"SELECT * FROM generate_series(1.5, 3)", sqlerr.FeatureNotSupported},
		{"SELECT * FROM generate_series(1, 3) AS t(a, b)", "42P10"},
		{"SELECT * FROM generate_series(1, count(*))", sqlerr.GroupingError},
		{"SELECT * FROM kv FULL JOIN generate_series(1, kv.k) AS g ON true", sqlerr.UndefinedTable},
	} {
		t.Run(tt.sql, func(t *testing.T) {
			_, err := planSQL(t, &Planner{Catalog: testCatalog()}, tt.sql)
			if got := sqlerr.Code(err); got != tt.code {
				t.Fatalf("code %q (%v), want %q", got, err, tt.code)
			}
		})
	}
}
