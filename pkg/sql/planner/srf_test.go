package planner

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestSetReturningSelectList: a set-returning call in the select list is
// a FlatMap over the query's rows after aggregation (so above the
// Reduce), its column hidden from *, and the plan type-checks.
func TestSetReturningSelectList(t *testing.T) {
	env := plan.MapEnv(map[plan.GlobalID]row.RelationDesc{plan.User(1): testCatalog()["kv"].Desc})
	for sql, want := range map[string][]string{
		"SELECT k, generate_series(1, k) + 1 FROM kv":            {"FlatMap generate_series(1, #0)"},
		"SELECT count(*), generate_series(1, 2) FROM kv":         {"FlatMap generate_series(1, 2)", "Reduce"},
		"SELECT * FROM (SELECT k, unnest(ARRAY[v]) FROM kv) s":   {"FlatMap unnest("},
		"SELECT generate_series(1, k), unnest(ARRAY[v]) FROM kv": {"FlatMap rows_from(generate_series(1, #0), unnest("},
		// A nested call is a FlatMap below its caller's, which reads its
		// column; the caller's lockstep partner of the lower level stays
		// in the lower FlatMap.
		"SELECT k, generate_series(1, generate_series(1, k)) FROM kv":               {"FlatMap generate_series(1, #3)", "FlatMap generate_series(1, #0)"},
		"SELECT unnest(ARRAY[k]), generate_series(1, unnest(ARRAY[k + 1])) FROM kv": {"FlatMap generate_series(1, #4)", "FlatMap rows_from(unnest("},
	} {
		q, err := planSQL(t, &Planner{Catalog: testCatalog()}, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		got := Explain(q)
		at := -1
		for _, w := range want {
			i := strings.Index(got, w)
			if i < 0 || i < at {
				t.Errorf("%s: EXPLAIN lacks %q after %v:\n%s", sql, w, want, got)
			}
			at = i
		}
		d, err := q.Plan.Desc(env)
		if err != nil {
			t.Fatalf("%s: plan does not type-check: %v\n%s", sql, err, got)
		}
		if q.Desc.Arity() != 2 || len(d.Types) < 2 {
			t.Errorf("%s: columns %v, want 2", sql, q.Desc.Names)
		}
	}
}

// TestSetReturningRefused: PostgreSQL's errors where set-returning calls
// are not allowed, and what Tandem does not run yet.
func TestSetReturningRefused(t *testing.T) {
	for sql, msg := range map[string]string{
		"SELECT k FROM kv WHERE unnest(ARRAY[k]) = 1":                   "set-returning functions are not allowed in WHERE",
		"SELECT sum(generate_series(1, k)) FROM kv":                     "aggregate function calls cannot contain set-returning function calls",
		"SELECT CASE WHEN k > 0 THEN generate_series(1, k) END FROM kv": "set-returning functions are not allowed in CASE",
		"SELECT COALESCE(generate_series(1, k), 0) FROM kv":             "set-returning functions are not allowed in COALESCE",
		"SELECT jsonb_each('{}'::jsonb)":                                "several columns",
		"SELECT k FROM kv GROUP BY k HAVING generate_series(1, 2) > 1":  "not allowed in HAVING",
	} {
		_, err := planSQL(t, &Planner{Catalog: testCatalog()}, sql)
		if sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want 0A000 %q", sql, err, msg)
		}
	}
}
