package planner

import (
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

type mapCatalog map[string]Relation

func (m mapCatalog) Resolve(schema, name string) (Relation, error) {
	if r, ok := m[name]; ok {
		return r, nil
	}
	return Relation{}, sqlerr.Errorf(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

func testCatalog() mapCatalog {
	kv := row.RelationDesc{Names: []string{"k", "v", "f"}, Types: []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeText, Nullable: true}, {Type: row.TypeFloat64, Nullable: true}}}
	return mapCatalog{
		"kv": {ID: plan.User(1), Name: "kv", Desc: kv, Indexes: []Index{{ID: plan.User(2), Cluster: "default", Keys: []expr.Expr{expr.Column(0)}}}},
		"pk": {ID: plan.User(3), Name: "pk", Desc: kv, Indexes: []Index{{ID: plan.User(4), Cluster: "other", Keys: []expr.Expr{expr.Column(0), expr.Column(1)}}}},
	}
}

func planSQL(t *testing.T, p *Planner, sql string) (*Query, error) {
	t.Helper()
	res, err := pg.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	return p.PlanQuery(res.Stmts[0].Stmt.GetSelectStmt())
}

func TestFastPath(t *testing.T) {
	tests := []struct {
		sql     string
		cluster string
		want    string // "lookup N", "scan", or "none"
	}{
		{"SELECT v FROM kv WHERE k = 5", "default", "lookup 1"},
		{"SELECT v FROM kv WHERE 5 = k AND v LIKE 'a%'", "default", "lookup 1"},
		{"SELECT * FROM kv WHERE k IN (1, 2, 3)", "default", "lookup 3"},
		{"SELECT upper(v) FROM kv WHERE f > 1", "default", "scan"},
		{"SELECT v FROM kv WHERE k = 5", "elsewhere", "none"},
		{"SELECT v FROM kv WHERE k = 5.5", "default", "scan"},
		{"SELECT count(*) FROM kv WHERE k = 5", "default", "none"},
		{"SELECT a.v FROM kv a JOIN kv b ON a.k = b.k WHERE a.k = 1", "default", "none"},
		{"SELECT k FROM pk WHERE k = 1 AND v = 'x'", "other", "lookup 1"},
		{"SELECT k FROM pk WHERE k = 1", "other", "scan"},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			q, err := planSQL(t, &Planner{Catalog: testCatalog(), Cluster: tc.cluster}, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			got := "none"
			if q.FastPath != nil {
				got = "scan"
				if q.FastPath.Keys != nil {
					got = "lookup " + string(rune('0'+len(q.FastPath.Keys)))
				}
			}
			if got != tc.want {
				t.Fatalf("path %s, want %s\n%s", got, tc.want, Explain(q))
			}
		})
	}
}

func TestParamInference(t *testing.T) {
	tests := []struct {
		sql  string
		want []row.Type
	}{
		{"SELECT v FROM kv WHERE k = $1", []row.Type{row.TypeInt64}},
		{"SELECT $2::float8 + f, $1 FROM kv", []row.Type{row.TypeText, row.TypeFloat64}},
		{"SELECT * FROM kv WHERE v LIKE $1 AND k BETWEEN $2 AND $3", []row.Type{row.TypeText, row.TypeInt64, row.TypeInt64}},
		{"SELECT * FROM kv LIMIT $1", []row.Type{row.TypeInt64}},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			p := &Planner{Catalog: testCatalog()}
			if _, err := planSQL(t, p, tc.sql); err != nil {
				t.Fatal(err)
			}
			got := p.ResolvedParamTypes()
			if len(got) != len(tc.want) {
				t.Fatalf("types %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("types %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestUnsupportedIsNamed(t *testing.T) {
	for sql, feature := range map[string]string{
		"SELECT ROW(k, v, k+1) @> ROW(1, 'a', 22) FROM kv":                  "row constructor comparisons",
		"WITH x AS (INSERT INTO kv VALUES (1) RETURNING k) SELECT * FROM x": "data-modifying statements in WITH",
		"SELECT k FROM kv WHERE v ? ANY (SELECT v FROM kv)":                 "? ANY (subquery)",
		"SELECT (SELECT string_agg(a.v, ',') FROM kv b) FROM kv a":          "string_agg (or FILTER, ORDER BY) over only outer columns",
		"SELECT sum(k) OVER (ORDER BY v RANGE 1 PRECEDING) FROM kv":         "RANGE with offset PRECEDING/FOLLOWING for column type",
		"SELECT setseed(0.5)":                   "(function setseed)",
		"SELECT now()":                          "now() is not allowed in a view",
		"SELECT justify_days(interval '1 day')": "time functions (function justify_days)",
	} {
		_, err := planSQL(t, &Planner{Catalog: testCatalog()}, sql)
		if err == nil || !strings.Contains(err.Error(), feature) {
			t.Errorf("%s: %v, want a message naming %q", sql, err, feature)
		}
		if c := sqlerr.Code(err); c != sqlerr.FeatureNotSupported && c != sqlerr.UndefinedFunction {
			t.Errorf("%s: code %s", sql, c)
		}
	}
}

// TestGeneralDecorrelation plans correlated subqueries the equality form
// refuses into plans that type-check and hold no per-row evaluation: the
// outer values are a Distinct the subquery is joined with (apply.go).
func TestGeneralDecorrelation(t *testing.T) {
	for _, sql := range []string{
		"SELECT k FROM kv a WHERE EXISTS (SELECT 1 FROM kv b WHERE b.k < a.k)",
		"SELECT k FROM kv a WHERE EXISTS (SELECT count(*) FROM kv b WHERE b.k = a.k)",
		"SELECT (SELECT count(*) FROM kv b WHERE b.k = a.k GROUP BY b.v) FROM kv a",
		"SELECT (SELECT count(*) + a.k FROM kv b WHERE b.k = a.k) FROM kv a",
		"SELECT k FROM kv a WHERE k IN (SELECT a.k FROM kv b WHERE b.v = a.v)",
		"SELECT k FROM kv a WHERE EXISTS (SELECT 1 FROM (SELECT a.k) b)",
		"SELECT k FROM kv a WHERE EXISTS (SELECT 1 FROM kv b WHERE b.k = a.k AND EXISTS (SELECT 1 FROM kv c WHERE c.v = a.v))",
		"SELECT k, (SELECT v FROM kv b WHERE b.k > a.k ORDER BY b.k LIMIT 1) FROM kv a",
		"SELECT k FROM kv a WHERE v <> ALL (SELECT v FROM kv b WHERE b.k < a.k UNION SELECT 'x')",
		"SELECT * FROM kv a LEFT JOIN kv b ON b.k < a.k AND EXISTS (SELECT 1 FROM kv c WHERE c.v > b.v AND c.k <> a.k)",
		"SELECT k FROM kv a WHERE EXISTS (SELECT 1 FROM kv b LEFT JOIN kv c ON c.k = a.k AND c.v = b.v)",
		"SELECT v, count(*) FROM kv a GROUP BY v HAVING count(*) > (SELECT count(*) FROM kv b WHERE b.v < a.v)",
	} {
		t.Run(sql, func(t *testing.T) {
			q, err := planSQL(t, &Planner{Catalog: testCatalog()}, sql)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := q.Plan.Desc(plan.MapEnv(map[plan.GlobalID]row.RelationDesc{plan.User(1): testCatalog()["kv"].Desc})); err != nil {
				t.Fatalf("plan does not type-check: %v\n%s", err, Explain(q))
			}
			if !strings.Contains(Explain(q), "Distinct") {
				t.Fatalf("no distinct outer values in\n%s", Explain(q))
			}
		})
	}
}

// TestExplainWindow shows how a window query was planned: one Window per
// distinct PARTITION BY / ORDER BY, with each function's frame.
func TestExplainWindow(t *testing.T) {
	q, err := planSQL(t, &Planner{Catalog: testCatalog()},
		"SELECT k, sum(k) OVER (PARTITION BY v ORDER BY k ROWS 1 PRECEDING), rank() OVER (PARTITION BY v ORDER BY k), row_number() OVER () FROM kv")
	if err != nil {
		t.Fatal(err)
	}
	got := Explain(q)
	for _, want := range []string{
		"Window partition_by=[1] order=[{0 false true}] funcs=[sum(#0) rows[preceding 1, current_row], rank() range[unbounded_preceding, current_row]]",
		"Window partition_by=[] order=[] funcs=[row_number() range[unbounded_preceding, current_row]]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, got)
		}
	}
	if _, err := q.Plan.Desc(plan.MapEnv(map[plan.GlobalID]row.RelationDesc{plan.User(1): testCatalog()["kv"].Desc})); err != nil {
		t.Fatalf("plan does not type-check: %v", err)
	}
}

func TestGlobalAggregateHasDefaultRow(t *testing.T) {
	q, err := planSQL(t, &Planner{Catalog: testCatalog()}, "SELECT count(*), max(v) FROM kv")
	if err != nil {
		t.Fatal(err)
	}
	// The plan is Union(Reduce, Constant(default), Negate(...)) under the
	// projection: without the constant an empty input gives no row.
	var constants int
	var walk func(p *plan.Plan)
	walk = func(p *plan.Plan) {
		if p.Constant != nil {
			constants++
		}
		for _, in := range p.Inputs() {
			walk(in)
		}
	}
	walk(&q.Plan)
	if constants != 1 {
		t.Fatalf("want one default-row constant, got %d:\n%s", constants, Explain(q))
	}
	if _, err := q.Plan.Desc(plan.MapEnv(map[plan.GlobalID]row.RelationDesc{plan.User(1): testCatalog()["kv"].Desc})); err != nil {
		t.Fatalf("plan does not type-check: %v", err)
	}
}
