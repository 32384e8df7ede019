package planner

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/reference"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// subqueryCatalog has t(k bigint, v text) and s(k bigint, w text), both
// nullable.
func subqueryCatalog() mapCatalog {
	desc := func(names ...string) row.RelationDesc {
		return row.RelationDesc{Names: names, Types: []row.ColumnType{{Type: row.TypeInt64, Nullable: true}, {Type: row.TypeText, Nullable: true}}}
	}
	return mapCatalog{
		"t": {ID: plan.User(10), Name: "t", Desc: desc("k", "v")},
		"s": {ID: plan.User(11), Name: "s", Desc: desc("k", "w")},
	}
}

// evalRows plans sql over subqueryCatalog, type-checks the plan and
// evaluates it with the reference evaluator over the given rows of t and
// s (nil k is NULL). It returns the result rows, sorted, and the SQLSTATEs
// of the errors.
func evalRows(t *testing.T, sql string, tRows, sRows []row.Row) ([]string, []string) {
	t.Helper()
	cat := subqueryCatalog()
	q, err := planSQL(t, &Planner{Catalog: cat}, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	descs := map[plan.GlobalID]row.RelationDesc{}
	env := map[plan.GlobalID]reference.Result{}
	for _, in := range []struct {
		name string
		rows []row.Row
	}{{"t", tRows}, {"s", sRows}} {
		rel := cat[in.name]
		descs[rel.ID] = rel.Desc
		res := reference.Result{Rows: reference.Collection{}, Errors: reference.Collection{}}
		for _, r := range in.rows {
			res.Rows[string(r)]++
		}
		env[rel.ID] = res
	}
	if _, err := q.Plan.Desc(plan.MapEnv(descs)); err != nil {
		t.Fatalf("%s: plan does not type-check: %v\n%s", sql, err, Explain(q))
	}
	res, err := reference.EvalPlan(&q.Plan, env)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var rows []string
	for _, k := range slices.Sorted(maps.Keys(res.Rows)) {
		for range res.Rows[k] {
			rows = append(rows, reference.FormatRow(row.Row(k)))
		}
	}
	var codes []string
	for _, e := range res.Errs() {
		codes = append(codes, e.(interface{ SQLState() string }).SQLState())
	}
	return rows, codes
}

func kv(k any, v string) row.Row {
	kd := row.Null()
	if i, ok := k.(int); ok {
		kd = row.Int64(int64(i))
	}
	return row.Pack(kd, row.Text(v))
}

func TestSubqueriesEvaluate(t *testing.T) {
	ts := []row.Row{kv(1, "a"), kv(2, "b"), kv(nil, "n")}
	tests := []struct {
		name     string
		sql      string
		tRows    []row.Row
		sRows    []row.Row
		want     string // rows joined by " "
		wantCode string
	}{
		{"scalar one row", "SELECT k, (SELECT w FROM s) FROM t", ts, []row.Row{kv(5, "x")},
			"(1, x) (2, x) (NULL, x)", ""},
		{"scalar no row is NULL", "SELECT k, (SELECT w FROM s) FROM t", ts, nil,
			"(1, NULL) (2, NULL) (NULL, NULL)", ""},
		{"scalar two rows is an error", "SELECT k, (SELECT w FROM s) FROM t", ts, []row.Row{kv(5, "x"), kv(6, "y")},
			"", "21000"},
		{"scalar two rows over no outer row is no error", "SELECT k, (SELECT w FROM s) FROM t", nil, []row.Row{kv(5, "x"), kv(6, "y")},
			"", ""},
		{"scalar duplicate rows are two rows", "SELECT k FROM t WHERE k = (SELECT k FROM s)", ts, []row.Row{kv(1, "x"), kv(1, "x")},
			"", "21000"},
		{"IN", "SELECT k FROM t WHERE k IN (SELECT k FROM s)", ts, []row.Row{kv(1, "x"), kv(nil, "y")},
			"(1)", ""},
		{"IN three-valued", "SELECT k, k IN (SELECT k FROM s) FROM t", ts, []row.Row{kv(1, "x"), kv(nil, "y")},
			"(1, t) (2, NULL) (NULL, NULL)", ""},
		{"IN empty is false even for NULL", "SELECT k, k IN (SELECT k FROM s) FROM t", ts, nil,
			"(1, f) (2, f) (NULL, f)", ""},
		{"NOT IN with a NULL keeps nothing", "SELECT k FROM t WHERE k NOT IN (SELECT k FROM s)", ts, []row.Row{kv(1, "x"), kv(nil, "y")},
			"", ""},
		{"NOT IN without NULLs", "SELECT k FROM t WHERE k NOT IN (SELECT k FROM s)", ts, []row.Row{kv(1, "x")},
			"(2)", ""},
		{"NOT IN empty keeps NULL", "SELECT k FROM t WHERE k NOT IN (SELECT k FROM s)", ts, nil,
			"(1) (2) (NULL)", ""},
		{"EXISTS", "SELECT k, EXISTS (SELECT 1 FROM s) FROM t", ts[:1], []row.Row{kv(1, "x")},
			"(1, t)", ""},
		{"NOT EXISTS empty", "SELECT k FROM t WHERE NOT EXISTS (SELECT 1 FROM s)", ts, nil,
			"(1) (2) (NULL)", ""},
		{"correlated EXISTS", "SELECT k FROM t WHERE EXISTS (SELECT 1 FROM s WHERE s.k = t.k)", ts, []row.Row{kv(2, "x"), kv(2, "y"), kv(nil, "z")},
			"(2)", ""},
		{"correlated NOT EXISTS", "SELECT k FROM t WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.k = t.k)", ts, []row.Row{kv(2, "x"), kv(nil, "z")},
			"(1) (NULL)", ""},
		{"correlated EXISTS as a value", "SELECT k, EXISTS (SELECT 1 FROM s WHERE t.k = s.k) FROM t", ts, []row.Row{kv(2, "x"), kv(2, "y")},
			"(1, f) (2, t) (NULL, f)", ""},
		{"correlated IN", "SELECT k, v IN (SELECT w FROM s WHERE s.k = t.k) FROM t", ts, []row.Row{kv(1, "a"), kv(2, "x"), kv(2, "")},
			"(1, t) (2, f) (NULL, f)", ""},
		{"correlated NOT IN with a NULL in the group", "SELECT k, v NOT IN (SELECT NULLIF(w, 'n') FROM s WHERE s.k = t.k) FROM t", ts, []row.Row{kv(1, "z"), kv(1, "n"), kv(2, "x")},
			"(1, NULL) (2, t) (NULL, t)", ""},
		{"correlated scalar", "SELECT k, (SELECT w FROM s WHERE s.k = t.k) FROM t", ts, []row.Row{kv(1, "x"), kv(3, "y")},
			"(1, x) (2, NULL) (NULL, NULL)", ""},
		// The row whose key has two partners is an error (a read reports
		// it); the others are unaffected.
		{"correlated scalar with two rows for one key", "SELECT k, (SELECT w FROM s WHERE s.k = t.k) FROM t", ts, []row.Row{kv(1, "x"), kv(1, "y")},
			"(2, NULL) (NULL, NULL)", "21000"},
		{"correlated count", "SELECT k, (SELECT count(*) FROM s WHERE s.k = t.k) FROM t", ts, []row.Row{kv(2, "x"), kv(2, "y"), kv(nil, "z")},
			"(1, 0) (2, 2) (NULL, 0)", ""},
		{"correlated max and count", "SELECT k, (SELECT max(w) || count(w) FROM s WHERE s.k = t.k) FROM t", ts, []row.Row{kv(2, "x"), kv(2, "y")},
			"(1, NULL) (2, y2) (NULL, NULL)", ""},
		{"correlated aggregate errors per outer row", "SELECT k, (SELECT 10 / count(*) FROM s WHERE s.k = t.k) FROM t", ts[1:2], []row.Row{kv(2, "x")},
			"(2, 10)", ""},
		{"correlated aggregate error for an unmatched row", "SELECT k, (SELECT 10 / count(*) FROM s WHERE s.k = t.k) FROM t", ts, []row.Row{kv(2, "x")},
			"(2, 10)", "22012"},
		{"correlated aggregate IN", "SELECT k FROM t WHERE k IN (SELECT max(k) FROM s WHERE s.w = t.v)", ts, []row.Row{kv(1, "a"), kv(7, "b")},
			"(1)", ""},
		{"correlated aggregate NOT IN", "SELECT k FROM t WHERE k NOT IN (SELECT max(k) FROM s WHERE s.w = t.v)", ts, []row.Row{kv(1, "a"), kv(7, "b")},
			"(2)", ""},
		{"> ALL", "SELECT k, k > ALL (SELECT k FROM s) FROM t", ts, []row.Row{kv(0, "x"), kv(1, "y")},
			"(1, f) (2, t) (NULL, NULL)", ""},
		{"> ALL with a NULL", "SELECT k, k > ALL (SELECT k FROM s) FROM t", ts, []row.Row{kv(1, "x"), kv(nil, "y")},
			"(1, f) (2, NULL) (NULL, NULL)", ""},
		{"> ALL empty", "SELECT k, k > ALL (SELECT k FROM s) FROM t", ts, nil,
			"(1, t) (2, t) (NULL, t)", ""},
		{"< ANY with a NULL", "SELECT k, k < ANY (SELECT k FROM s) FROM t", ts, []row.Row{kv(2, "x"), kv(nil, "y")},
			"(1, t) (2, NULL) (NULL, NULL)", ""},
		{"<> ANY and = ALL", "SELECT k, k <> ANY (SELECT k FROM s), k = ALL (SELECT k FROM s) FROM t", ts, []row.Row{kv(1, "x"), kv(1, "y")},
			"(1, f, t) (2, t, f) (NULL, NULL, NULL)", ""},
		{"correlated >= ALL", "SELECT k, v >= ALL (SELECT w FROM s WHERE s.k = t.k) FROM t", ts, []row.Row{kv(1, "a"), kv(1, "b"), kv(2, "a")},
			"(1, f) (2, t) (NULL, t)", ""},
		{"CTE referenced twice", "WITH c AS (SELECT k FROM s WHERE k > 1) SELECT a.k, b.k FROM c a JOIN c b ON a.k < b.k", nil, []row.Row{kv(1, "x"), kv(2, "y"), kv(3, "z")},
			"(2, 3)", ""},
		{"subquery in HAVING", "SELECT count(*) FROM t HAVING count(*) > (SELECT count(*) FROM s)", ts, []row.Row{kv(1, "x")},
			"(3)", ""},
		// AND-ed subquery conjuncts (conjuncts.go) are applied by one
		// filter, which stops at the first false: key 2's scalar subquery
		// has two rows, and whether that is an error depends on which
		// conjunct runs first. As in PostgreSQL, a correlated IN (a
		// condition of the scan there) runs in the order written, before
		// the scalar comparison, and drops key 2's row first; an EXISTS
		// (a semi-join above the scan there) runs after it.
		{"AND-ed conjuncts: an IN before drops the row", "SELECT k FROM t WHERE v IN (SELECT 'a' FROM s WHERE s.k = t.k AND s.w = 'z') AND v <> (SELECT w FROM s WHERE s.k = t.k)",
			ts, []row.Row{kv(1, "z"), kv(2, "x"), kv(2, "y")}, "(1)", ""},
		{"AND-ed conjuncts: an EXISTS runs last", "SELECT k FROM t WHERE EXISTS (SELECT 1 FROM s WHERE s.k = t.k AND s.w = 'z') AND v <> (SELECT w FROM s WHERE s.k = t.k)",
			ts, []row.Row{kv(1, "z"), kv(2, "x"), kv(2, "y")}, "(1)", "21000"},
		{"AND-ed conjuncts: a plain one drops the row first", "SELECT k FROM t WHERE v <> (SELECT w FROM s WHERE s.k = t.k) AND EXISTS (SELECT 1 FROM s WHERE s.k = t.k) AND k < 2",
			ts, []row.Row{kv(1, "z"), kv(2, "x"), kv(2, "y")}, "(1)", ""},
		{"AND-ed EXISTS, NOT EXISTS, IN, NOT IN", "SELECT k FROM t WHERE EXISTS (SELECT 1 FROM s WHERE s.k >= t.k) AND NOT EXISTS (SELECT 1 FROM s WHERE s.k = t.k AND s.w = t.v) AND v IN (SELECT w FROM s WHERE s.k <> t.k) AND v NOT IN (SELECT w FROM s WHERE s.k > t.k)",
			[]row.Row{kv(9, "a"), kv(1, "a"), kv(2, "b"), kv(3, "c"), kv(4, "e"), kv(nil, "n")}, []row.Row{kv(1, "a"), kv(2, "c"), kv(3, "b"), kv(4, "a"), kv(5, "d")},
			"(3)", ""},
		{"AND-ed conjuncts with plain ones", "SELECT k FROM t WHERE EXISTS (SELECT 1 FROM s WHERE s.k = t.k) AND k > 1 AND v IN (SELECT w FROM s WHERE s.k < t.k) AND k IS NOT NULL",
			ts, []row.Row{kv(1, "b"), kv(2, "x")}, "(2)", ""},
		{"AND-ed NULL keys", "SELECT v FROM t WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.k = t.k) AND NOT EXISTS (SELECT 1 FROM s WHERE s.k < t.k)",
			append(ts, kv(3, "c")), []row.Row{kv(2, "x"), kv(nil, "y")}, "(a) (n)", ""},
		{"grouped correlated EXISTS", "SELECT k, count(*) FROM t GROUP BY k HAVING EXISTS (SELECT 1 FROM s WHERE s.k = t.k)", ts, []row.Row{kv(2, "x")},
			"(2, 1)", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, codes := evalRows(t, tc.sql, tc.tRows, tc.sRows)
			if got := strings.Join(rows, " "); got != tc.want || strings.Join(codes, " ") != tc.wantCode {
				t.Fatalf("%s:\nrows %q errors %v\nwant %q errors %q", tc.sql, got, codes, tc.want, tc.wantCode)
			}
		})
	}
}

// TestSubqueriesUseOnlyTheIR checks that subqueries compile to the plan
// IR's existing operators and the single_value function, and that a
// scalar subquery's cardinality check sits in a per-row expression (so a
// maintained dataflow reports it in its error collection).
func TestSubqueriesUseOnlyTheIR(t *testing.T) {
	q, err := planSQL(t, &Planner{Catalog: subqueryCatalog()}, "SELECT k, (SELECT w FROM s) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	var walk func(p *plan.Plan)
	walk = func(p *plan.Plan) {
		if p.Kind() == "" {
			t.Fatalf("malformed node %v", p)
		}
		if p.Mfp != nil {
			for _, e := range append(p.Mfp.MFP.Expressions, p.Mfp.MFP.Predicates...) {
				if e.Op == expr.OpCall && e.Func == expr.FuncSingleValue {
					found = true
				}
			}
		}
		for _, in := range p.Inputs() {
			walk(in)
		}
	}
	walk(&q.Plan)
	if !found {
		t.Fatalf("no single_value check in\n%s", Explain(q))
	}
}

func TestTooManySubqueriesIsRefused(t *testing.T) {
	// Each subquery adds a bounded number of nodes (conjuncts.go; about
	// 50 with the relation read through a Let, sharedrel.go), so only
	// very many of them exceed maxPlanNodes (from about 320 of these; 200
	// plan).
	sql := "SELECT k FROM t WHERE " + strings.Repeat("v NOT IN (SELECT w FROM s WHERE s.k < t.k) AND ", 400) + "true"
	_, err := planSQL(t, &Planner{Catalog: subqueryCatalog()}, sql)
	if err == nil || !strings.Contains(err.Error(), "too many subqueries") || sqlerr.Code(err) != statementTooComplex {
		t.Fatalf("err %v, want 54001 too many subqueries", err)
	}
}

// TestSubqueriesOfOneLevelGrowThePlanBySums checks distinctkeys.go:
// subqueries attached to one query level without a filter between them
// (OR-ed tests, select-list columns) read the level's relation before
// its subquery columns, so each adds a bounded number of nodes instead of
// multiplying the plan.
func TestSubqueriesOfOneLevelGrowThePlanBySums(t *testing.T) {
	forms := map[string]string{
		"in":     "v IN (SELECT w FROM s WHERE s.k = t.k)",
		"not in": "v NOT IN (SELECT w FROM s WHERE s.k < t.k)",
		"scalar": "v = (SELECT max(w) FROM s WHERE s.k > t.k)",
		"any":    "v < ANY (SELECT w FROM s WHERE s.k <> t.k)",
		"all":    "k >= ALL (SELECT k FROM s WHERE s.w = t.v)",
		"count":  "0 < (SELECT count(*) FROM s WHERE s.k = t.k)",
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			checkSumGrowth(t, func(n int) string {
				return "SELECT k FROM t WHERE " + strings.Repeat(form+" OR ", n) + "false"
			})
		})
	}
}

// planSizeOf plans sql over subqueryCatalog and returns its plan's size.
func planSizeOf(t *testing.T, sql string) int {
	t.Helper()
	q, err := planSQL(t, &Planner{Catalog: subqueryCatalog()}, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return planSize(q.Plan, 1<<30)
}

// checkSumGrowth plans query(n) for n = 4, 8 and 12 subqueries and fails
// unless each 4 more add about the same number of plan nodes.
func checkSumGrowth(t *testing.T, query func(n int) string) {
	t.Helper()
	var sizes [3]int
	for i, n := range []int{4, 8, 12} {
		sizes[i] = planSizeOf(t, query(n))
	}
	if d1, d2 := sizes[1]-sizes[0], sizes[2]-sizes[1]; d2 > d1+d1/10 {
		t.Errorf("sizes %v for 4, 8, 12 subqueries: not growing by a sum", sizes)
	}
}

// TestAndedSubqueriesGrowThePlanBySums checks conjuncts.go: AND-ed WHERE
// (and ON) conjuncts with subqueries, correlated by equality or not, of
// one kind or mixed, each add a bounded number of plan nodes.
func TestAndedSubqueriesGrowThePlanBySums(t *testing.T) {
	forms := map[string][]string{
		"exists":     {"EXISTS (SELECT 1 FROM s WHERE s.k = t.k)", "EXISTS (SELECT 1 FROM s WHERE s.k < t.k)"},
		"not exists": {"NOT EXISTS (SELECT 1 FROM s WHERE s.w = t.v)", "NOT EXISTS (SELECT 1 FROM s WHERE s.k > t.k)"},
		"in":         {"t.v IN (SELECT w FROM s WHERE s.k = t.k)", "t.k IN (SELECT k FROM s WHERE s.w <> t.v)"},
		"not in":     {"t.v NOT IN (SELECT w FROM s WHERE s.k < t.k)"},
		"scalar":     {"t.v = (SELECT w FROM s WHERE s.k = t.k)", "t.v < (SELECT max(w) FROM s WHERE s.k > t.k)"},
		"count":      {"0 < (SELECT count(*) FROM s WHERE s.k <= t.k)"},
		"mixed": {"EXISTS (SELECT 1 FROM s WHERE s.k = t.k)", "NOT EXISTS (SELECT 1 FROM s WHERE s.k > t.k)",
			"t.v IN (SELECT w FROM s WHERE s.k <> t.k)", "t.v = (SELECT w FROM s WHERE s.k = t.k)"},
		"nested": {"EXISTS (SELECT 1 FROM s WHERE s.k < t.k AND s.w IN (SELECT u.v FROM t AS u WHERE u.k = s.k))"},
	}
	conjuncts := func(forms []string, n int) []string {
		var out []string
		for i := range n {
			// Distinct texts: the n conjuncts are n subqueries.
			out = append(out, fmt.Sprintf("%s AND t.k <> %d", forms[i%len(forms)], -1-i))
		}
		return out
	}
	for name, fs := range forms {
		t.Run(name, func(t *testing.T) {
			checkSumGrowth(t, func(n int) string {
				return "SELECT t.k FROM t WHERE " + strings.Join(conjuncts(fs, n), " AND ")
			})
		})
		t.Run(name+" with a select-list subquery", func(t *testing.T) {
			// The select list's subquery reads t before the WHERE
			// subqueries' columns: it adds as many nodes however many
			// conjuncts there are.
			added := func(n int) int {
				where := " FROM t WHERE " + strings.Join(conjuncts(fs, n), " AND ")
				return planSizeOf(t, "SELECT t.k, (SELECT max(w) FROM s WHERE s.k > t.k)"+where) - planSizeOf(t, "SELECT t.k"+where)
			}
			if a2, a6 := added(2), added(6); a6 != a2 {
				t.Errorf("a select-list subquery adds %d nodes over 2 conjuncts, %d over 6", a2, a6)
			}
		})
		t.Run(name+" in ON", func(t *testing.T) {
			checkSumGrowth(t, func(n int) string {
				return "SELECT t.k FROM t JOIN s AS o ON o.k = t.k AND " + strings.Join(conjuncts(fs, n), " AND ")
			})
		})
	}
}

// TestExplainAndedSubqueries checks the shape EXPLAIN shows for AND-ed
// subquery conjuncts (conjuncts.go): one filter on top applies them all,
// the NOT IN before the EXISTS written first (a join in PostgreSQL, so
// last), and the plain conjunct filters every read of t below them.
func TestExplainAndedSubqueries(t *testing.T) {
	q, err := planSQL(t, &Planner{Catalog: subqueryCatalog()},
		"SELECT k FROM t WHERE EXISTS (SELECT 1 FROM s WHERE s.k = t.k) AND v NOT IN (SELECT w FROM s WHERE s.k < t.k) AND k > 0")
	if err != nil {
		t.Fatal(err)
	}
	text := Explain(q)
	lines := strings.Split(text, "\n")
	if len(lines) < 3 || lines[1] != "  Mfp" || !strings.HasPrefix(lines[2], "    filter [NOT CASE") || !strings.HasSuffix(lines[2], ", #5]") {
		t.Errorf("want one filter on top, NOT IN then EXISTS:\n%s", text)
	}
	for i, l := range lines {
		if strings.TrimSpace(l) == "Get u10" && (i < 2 || strings.TrimSpace(lines[i-2]) != "filter [(#0 > 0)]") {
			t.Errorf("line %d reads t before the plain conjunct:\n%s", i, text)
		}
	}
}
