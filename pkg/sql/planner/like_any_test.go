package planner

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestLikeAnyPlans: pattern matches with ANY/ALL lower to the element-wise
// LIKE over an ARRAY[...] and to array_cmp_any over array values and
// subqueries; a non-text array is 42883 naming the operator, as in
// PostgreSQL.
func TestLikeAnyPlans(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT k FROM kv WHERE v LIKE ANY (ARRAY['a%', 'b%'])": "LIKE",
		"SELECT k FROM kv WHERE v NOT ILIKE ALL (ARRAY['a%'])":  "NOT",
		"SELECT k FROM kv WHERE v LIKE ANY (SELECT v FROM kv)":  "array_cmp_any",
		"SELECT k FROM kv WHERE v !~~* ALL ('{x}'::text[])":     "array_cmp_any",
	} {
		q, err := planSQL(t, &Planner{Catalog: testCatalog()}, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if got := Explain(q); !strings.Contains(got, want) {
			t.Errorf("%s: EXPLAIN lacks %q:\n%s", sql, want, got)
		}
	}
	_, err := planSQL(t, &Planner{Catalog: testCatalog()}, "SELECT k FROM kv WHERE v LIKE ANY ('{1,2}'::int[])")
	if sqlerr.Code(err) != sqlerr.UndefinedFunction || !strings.Contains(err.Error(), "text ~~ ") {
		t.Errorf("LIKE ANY (integer[]): %v", err)
	}
}
