package planner

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// recursiveNodes returns the Recursive nodes of p, outermost first.
func recursiveNodes(p *plan.Plan) []*plan.Recursive {
	var out []*plan.Recursive
	if p.Recursive != nil {
		out = append(out, p.Recursive)
	}
	for _, in := range p.Inputs() {
		out = append(out, recursiveNodes(in)...)
	}
	return out
}

func TestPlanRecursive(t *testing.T) {
	tests := []struct {
		sql      string
		nodes    int
		distinct bool
		explain  string
	}{
		{"WITH RECURSIVE r(n) AS (SELECT k FROM kv UNION SELECT n + 1 FROM r WHERE n < 10) SELECT * FROM r", 1, true, `Recursive l1 "r" UNION max_iterations=10000`},
		{"WITH RECURSIVE r(a, b) AS (SELECT k, k FROM kv UNION ALL SELECT r.a, kv.k FROM r JOIN kv ON kv.k = r.b + 1) SELECT * FROM r", 1, false, "UNION ALL"},
		// Several CTEs, some recursive, one read before it is defined; b,
		// read by the query and by c's base, is computed once (a Let).
		{"WITH RECURSIVE a AS (SELECT * FROM b), b(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM b WHERE x < 3), c(y) AS (SELECT x FROM a UNION SELECT y FROM c) SELECT * FROM a, c", 2, false, "Recursive l2"},
		// A recursive CTE without a self-reference is an ordinary one.
		{"WITH RECURSIVE r(n) AS (SELECT k FROM kv) SELECT * FROM r", 0, false, "Get u1"},
		// A correlated subquery over the working table reads it twice.
		{"WITH RECURSIVE r(n) AS (SELECT k FROM kv UNION SELECT n + 1 FROM r WHERE EXISTS (SELECT 1 FROM kv WHERE kv.k = r.n)) SELECT * FROM r", 1, true, "Get l1"},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			q, err := planSQL(t, &Planner{Catalog: testCatalog()}, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			nodes := recursiveNodes(&q.Plan)
			if len(nodes) != tc.nodes {
				t.Fatalf("%d recursive nodes, want %d:\n%s", len(nodes), tc.nodes, Explain(q))
			}
			if tc.nodes > 0 && nodes[0].Distinct != tc.distinct {
				t.Errorf("distinct = %v, want %v", nodes[0].Distinct, tc.distinct)
			}
			for _, id := range q.DependsOn {
				if id.Kind == plan.KindLocal {
					t.Errorf("DependsOn lists the binding %s", id)
				}
			}
			if _, err := q.Plan.Desc(plan.MapEnv(nil)); err == nil && len(q.DependsOn) > 0 {
				t.Errorf("plan validates without its inputs")
			}
			ex := Explain(q)
			if !strings.Contains(ex, tc.explain) {
				t.Errorf("EXPLAIN lacks %q:\n%s", tc.explain, ex)
			}
			if tc.nodes > 0 && (!strings.Contains(ex, "non-recursive term:") || !strings.Contains(ex, "recursive term (each round")) {
				t.Errorf("EXPLAIN does not label the terms:\n%s", ex)
			}
		})
	}
}

func TestRecursionLimitIsThePlannersSetting(t *testing.T) {
	q, err := planSQL(t, &Planner{Catalog: testCatalog(), RecursionLimit: 7}, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n FROM r) SELECT * FROM r")
	if err != nil {
		t.Fatal(err)
	}
	if n := recursiveNodes(&q.Plan); len(n) != 1 || n[0].MaxIterations != 7 {
		t.Fatalf("nodes %v, want one with limit 7", n)
	}
}

func TestRecursiveErrors(t *testing.T) {
	tests := []struct{ sql, code, msg string }{
		{"WITH RECURSIVE t(n) AS (SELECT 1 INTERSECT SELECT n FROM t) SELECT * FROM t", "42P19", `recursive query "t" does not have the form non-recursive-term UNION [ALL] recursive-term`},
		{"WITH RECURSIVE t(n) AS (SELECT n FROM t UNION ALL SELECT 1) SELECT * FROM t", "42P19", "must not appear within its non-recursive term"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT t.n FROM t, t AS u) SELECT * FROM t", "42P19", "must not appear more than once"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT k FROM kv WHERE k IN (SELECT n FROM t)) SELECT * FROM t", "42P19", "must not appear within a subquery"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT k FROM kv LEFT JOIN t ON n = k) SELECT * FROM t", "42P19", "must not appear within an outer join"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT k FROM t FULL JOIN kv ON n = k) SELECT * FROM t", "42P19", "must not appear within an outer join"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL (SELECT n FROM t INTERSECT ALL SELECT 1)) SELECT * FROM t", "42P19", "must not appear within INTERSECT"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL (SELECT 1 EXCEPT SELECT n FROM t)) SELECT * FROM t", "42P19", "must not appear within EXCEPT"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT count(*) FROM t) SELECT * FROM t", "42P19", "aggregate functions are not allowed in a recursive query's recursive term"},
		{"WITH RECURSIVE a(x) AS (SELECT 1 UNION ALL SELECT x FROM b), b(x) AS (SELECT x FROM a) SELECT * FROM a", sqlerr.FeatureNotSupported, "mutual recursion between WITH items is not implemented"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n FROM t ORDER BY 1) SELECT * FROM t", sqlerr.FeatureNotSupported, "ORDER BY in a recursive query is not implemented"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n FROM t OFFSET 1) SELECT * FROM t", sqlerr.FeatureNotSupported, "OFFSET in a recursive query"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n::bigint FROM t) SELECT * FROM t", sqlerr.DatatypeMismatch, `recursive query "t" column 1 has type integer in non-recursive term but type bigint overall`},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT v FROM t, kv) SELECT * FROM t", sqlerr.DatatypeMismatch, "UNION types integer and text cannot be matched"},
		{"WITH RECURSIVE t(n, m) AS (SELECT 1 UNION ALL SELECT n FROM t) SELECT * FROM t", "42P10", "has 1 columns available but 2 columns specified"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n, n FROM t) SELECT * FROM t", sqlerr.SyntaxError, "each UNION query must have the same number of columns"},
		{"WITH RECURSIVE t(n) AS (SELECT 1), t(m) AS (SELECT 2) SELECT * FROM t", "42712", "specified more than once"},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := planSQL(t, &Planner{Catalog: testCatalog()}, tc.sql)
			if err == nil || sqlerr.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v (code %q), want %s %q", err, sqlerr.Code(err), tc.code, tc.msg)
			}
		})
	}
}

// TestExplainRecursiveMode checks that EXPLAIN names how a recursive node
// is maintained: incrementally for a UNION recursion whose recursive term
// is a join, filter or projection of the CTE, from scratch otherwise.
func TestExplainRecursiveMode(t *testing.T) {
	tests := []struct{ sql, mode string }{
		{"WITH RECURSIVE r(n) AS (SELECT k FROM kv UNION SELECT n + 1 FROM r WHERE n < 10) SELECT * FROM r", "incremental"},
		{"WITH RECURSIVE r(a, b) AS (SELECT k, k FROM kv UNION SELECT r.a, kv.k FROM r JOIN kv ON kv.k = r.b + 1) SELECT * FROM r", "incremental"},
		{"WITH RECURSIVE r(n) AS (SELECT k FROM kv UNION SELECT kv.k FROM kv JOIN r ON kv.k = r.n + 1 WHERE kv.v IS NOT NULL) SELECT * FROM r", "incremental"},
		// UNION ALL counts derivations.
		{"WITH RECURSIVE r(a, b) AS (SELECT k, k FROM kv UNION ALL SELECT r.a, kv.k FROM r JOIN kv ON kv.k = r.b + 1) SELECT * FROM r", "full"},
		// A semijoin with a table: a join with the table's distinct keys.
		{"WITH RECURSIVE r(n) AS (SELECT k FROM kv UNION SELECT n + 1 FROM r WHERE EXISTS (SELECT 1 FROM kv WHERE kv.k = r.n)) SELECT * FROM r", "incremental"},
		// Negation over the working table.
		{"WITH RECURSIVE r(n) AS (SELECT k FROM kv UNION SELECT n + 1 FROM r WHERE n NOT IN (SELECT k FROM kv)) SELECT * FROM r", "full"},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			q, err := planSQL(t, &Planner{Catalog: testCatalog()}, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			if ex := Explain(q); !strings.Contains(ex, "("+tc.mode+": ") {
				t.Errorf("EXPLAIN does not say %s:\n%s", tc.mode, ex)
			}
		})
	}
}
