package planner

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestAggregateFunctions checks how the aggregates beyond count, sum, min,
// max and avg are planned: the Reduce's aggregates as EXPLAIN shows them,
// and that every plan type-checks.
func TestAggregateFunctions(t *testing.T) {
	env := plan.MapEnv(map[plan.GlobalID]row.RelationDesc{plan.User(1): testCatalog()["kv"].Desc})
	for _, tc := range []struct{ sql, want string }{
		{"SELECT bool_and(k > 1), bool_or(k > 1), every(k > 1) FROM kv", "aggregates=[min((#0 > 1)), max((#0 > 1))]"},
		{"SELECT string_agg(v, ',' ORDER BY k DESC NULLS LAST) FROM kv", `string_agg(#1, ',' order by #0 desc nulls last)`},
		{"SELECT string_agg(DISTINCT v, '-' ORDER BY v) FROM kv", `string_agg(distinct #1, '-' order by #1)`},
		{"SELECT stddev(f), var_pop(f) FROM kv GROUP BY k", "aggregates=[stddev_samp(#2), var_pop(#2)]"},
		{"SELECT variance(k) FROM kv", "aggregates=[count(CAST(#0 AS numeric)), sum(CAST(#0 AS numeric)), sum_squares(CAST(#0 AS numeric))]"},
		{"SELECT count(*) FILTER (WHERE k > 2) FROM kv", "aggregates=[count(CASE WHEN (#0 > 2) THEN 1 ELSE NULL::int64 END)]"},
		{"SELECT sum(k) FILTER (WHERE v = 'a'), count(DISTINCT v) FILTER (WHERE k > 0) FROM kv", "count(distinct CASE WHEN (#0 > 0) THEN #1 ELSE NULL::text END)"},
		{"SELECT count(k ORDER BY v) FROM kv", "aggregates=[count(#0)]"},
		{"SELECT var_pop(DISTINCT k) FROM kv", "aggregates=[count(distinct CAST(#0 AS numeric)), sum(distinct CAST(#0 AS numeric)), sum_squares(distinct CAST(#0 AS numeric))]"},
	} {
		q, err := planSQL(t, &Planner{Catalog: testCatalog()}, tc.sql)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if got := Explain(q); !strings.Contains(got, tc.want) {
			t.Errorf("%s: plan\n%s\nwant it to contain %s", tc.sql, got, tc.want)
		}
		if _, err := q.Plan.Desc(env); err != nil {
			t.Errorf("%s: plan does not type-check: %v", tc.sql, err)
		}
	}
}

func TestAggregateFunctionErrors(t *testing.T) {
	for _, tc := range []struct{ sql, code string }{
		{"SELECT bool_and(k) FROM kv", sqlerr.UndefinedFunction},
		{"SELECT string_agg(k, ',') FROM kv", sqlerr.UndefinedFunction},
		{"SELECT string_agg(v) FROM kv", sqlerr.UndefinedFunction},
		{"SELECT stddev(v) FROM kv", sqlerr.UndefinedFunction},
		{"SELECT string_agg(DISTINCT v, ',' ORDER BY k) FROM kv", "42P10"},
		{"SELECT count(*) FILTER (WHERE k) FROM kv", sqlerr.DatatypeMismatch},
		{"SELECT upper(v) FILTER (WHERE true) FROM kv", sqlerr.WrongObjectType},
		{"SELECT stddev(f) OVER () FROM kv", sqlerr.FeatureNotSupported},
		{"SELECT string_agg(v, ',') OVER () FROM kv", sqlerr.FeatureNotSupported},
	} {
		_, err := planSQL(t, &Planner{Catalog: testCatalog()}, tc.sql)
		if c := sqlerr.Code(err); c != tc.code {
			t.Errorf("%s: %v (code %s), want code %s", tc.sql, err, c, tc.code)
		}
	}
}
