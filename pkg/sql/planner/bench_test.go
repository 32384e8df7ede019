package planner

import (
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// BenchmarkParsePlanPointLookup measures the SQL layer's per-statement
// cost of a fast-path point lookup: parsing with libpg_query plus
// planning (name resolution, typing, fast-path detection).
func BenchmarkParsePlanPointLookup(b *testing.B) {
	cat := testCatalog()
	b.ReportAllocs()
	for b.Loop() {
		res, err := pg.Parse("SELECT v, f FROM kv WHERE k = 42")
		if err != nil {
			b.Fatal(err)
		}
		q, err := (&Planner{Catalog: cat, Cluster: "default"}).PlanQuery(res.Stmts[0].Stmt.GetSelectStmt())
		if err != nil || q.FastPath == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanJoinAggregate measures planning alone of a join with an
// outer join and an aggregation.
func BenchmarkPlanJoinAggregate(b *testing.B) {
	cat := testCatalog()
	res, err := pg.Parse("SELECT a.k, count(*), sum(b.f) FROM kv a LEFT JOIN pk b ON a.k = b.k WHERE a.v LIKE 'x%' GROUP BY a.k HAVING count(*) > 1 ORDER BY 2 DESC LIMIT 10")
	if err != nil {
		b.Fatal(err)
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (&Planner{Catalog: cat}).PlanQuery(sel); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanSubqueries measures planning alone of a query with a CTE
// referenced twice, a correlated EXISTS, a NOT IN and a scalar subquery;
// the correlated subquery is planned twice (the uncorrelated attempt
// fails first).
func BenchmarkPlanSubqueries(b *testing.B) {
	cat := subqueryCatalog()
	res, err := pg.Parse(`WITH c AS (SELECT k, w FROM s WHERE k > 0)
		SELECT t.k, (SELECT max(w) FROM c) FROM t JOIN c USING (k)
		WHERE EXISTS (SELECT 1 FROM s WHERE s.k = t.k AND s.w <> 'x') AND t.v NOT IN (SELECT w FROM c)`)
	if err != nil {
		b.Fatal(err)
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (&Planner{Catalog: cat}).PlanQuery(sel); err != nil {
			b.Fatal(err)
		}
	}
}
