package planner

import (
	"slices"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// expandedSQL expands the expression of "SELECT expr" and deparses it.
func expandedSQL(t *testing.T, sql string) (string, error) {
	t.Helper()
	res, err := pg.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	rt := sel.TargetList[0].GetResTarget()
	p := &Planner{}
	out, err := p.expandRows(rt.Val)
	if err != nil || out == nil {
		return "", err
	}
	rt.Val = out
	text, err := pg.Deparse(res)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(text, "SELECT "), nil
}

func TestRowComparisonsExpand(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT (a, b) = (1, 2)", "a = 1 AND b = 2"},
		{"SELECT ROW(a, b) <> ROW(1, 2)", "a <> 1 OR b <> 2"},
		{"SELECT (a, b, c) < (1, 2, 3)", "a < 1 OR (a = 1 AND (b < 2 OR (b = 2 AND c < 3)))"},
		{"SELECT (a, b) >= (1, 2)", "a > 1 OR (a = 1 AND b >= 2)"},
		{"SELECT (a, b) IS DISTINCT FROM (1, 2)", "a IS DISTINCT FROM 1 OR b IS DISTINCT FROM 2"},
		{"SELECT (a, b) IS NOT DISTINCT FROM (1, 2)", "NOT (a IS DISTINCT FROM 1 OR b IS DISTINCT FROM 2)"},
		{"SELECT ROW(a, b) IS NULL", "a IS NULL AND b IS NULL"},
		{"SELECT ROW(a, b) IS NOT NULL", "a IS NOT NULL AND b IS NOT NULL"},
		{"SELECT (a, b) IN ((1, 2), (3, 4))", "(a = 1 AND b = 2) OR (a = 3 AND b = 4)"},
		{"SELECT (a, b) NOT IN ((1, 2), (3, 4))", "(a <> 1 OR b <> 2) AND (a <> 3 OR b <> 4)"},
		{"SELECT (a, b) BETWEEN (1, 2) AND (3, 4)", "(a > 1 OR (a = 1 AND b >= 2)) AND (a < 3 OR (a = 3 AND b <= 4))"},
		{"SELECT ROW(a) = ROW(1)", "a = 1"},
	} {
		got, err := expandedSQL(t, tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got != tc.want {
			t.Errorf("%s: expanded to %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRowComparisonErrors(t *testing.T) {
	for sql, code := range map[string]string{
		"SELECT (a, b) = (1, 2, 3)":                     sqlerr.SyntaxError,
		"SELECT (a, b) IS DISTINCT FROM (1)":            "", // (1) is no row: not expanded
		"SELECT ROW(a, b) IS DISTINCT FROM ROW(1)":      sqlerr.SyntaxError,
		"SELECT (a, b) IN ((1, 2), (1, 2, 3))":          sqlerr.SyntaxError,
		"SELECT ROW() = ROW()":                          sqlerr.FeatureNotSupported,
		"SELECT (a, b) IN (SELECT x FROM s)":            sqlerr.SyntaxError,
		"SELECT (a, b) = ANY (SELECT x, y, z FROM s)":   sqlerr.SyntaxError,
		"SELECT (a, b) = (SELECT x FROM s)":             sqlerr.SyntaxError,
		"SELECT (a, b) IN (SELECT * FROM s)":            "",
		"SELECT (a, b) IN (VALUES (1, 2))":              "",
		"SELECT (a, b) IN (SELECT 1 UNION SELECT 2)":    sqlerr.SyntaxError,
		"SELECT (a, b) IN (SELECT 1, 2 UNION SELECT 3)": "", // the UNION's own error, later
	} {
		_, err := expandedSQL(t, sql)
		if got := sqlerr.Code(err); code == "" && err != nil || code != "" && got != code {
			t.Errorf("%s: error %v, want SQLSTATE %q", sql, err, code)
		}
	}
}

// TestRowSubqueriesEvaluate checks the NULL rules of row subqueries with
// the reference evaluator: t's rows (k, v) against s's rows (k, w).
func TestRowSubqueriesEvaluate(t *testing.T) {
	ts := []row.Row{kv(1, "a"), kv(2, "b"), kv(nil, "a")}
	ss := []row.Row{kv(1, "a"), kv(nil, "b")}
	for _, tc := range []struct{ name, sql, want string }{
		{"IN three-valued", "SELECT k, (k, v) IN (SELECT k, w FROM s) FROM t",
			"(1, t) (2, NULL) (NULL, NULL)"},
		{"NOT IN three-valued", "SELECT k, (k, v) NOT IN (SELECT k, w FROM s) FROM t",
			"(1, f) (2, NULL) (NULL, NULL)"},
		{"IN as a WHERE conjunct", "SELECT k FROM t WHERE (k, v) IN (SELECT k, w FROM s)", "(1)"},
		{"NOT IN decided by an unequal field", "SELECT k FROM t WHERE (k, v) NOT IN (SELECT k, w FROM s WHERE w = 'b')",
			"(1) (NULL)"},
		{"< ANY", "SELECT k, (k, v) < ANY (SELECT k, w FROM s) FROM t",
			"(1, NULL) (2, NULL) (NULL, NULL)"},
		{"= ALL", "SELECT k, (k, v) = ALL (SELECT k, w FROM s WHERE k = 1) FROM t",
			"(1, t) (2, f) (NULL, NULL)"},
		{"ALL over no rows", "SELECT k, (k, v) > ALL (SELECT k, w FROM s WHERE false) FROM t",
			"(1, t) (2, t) (NULL, t)"},
		{"correlated", "SELECT k, (k, v) IN (SELECT k, w FROM s WHERE s.w = t.v) FROM t",
			"(1, t) (2, NULL) (NULL, NULL)"},
		{"correlated, no row matched", "SELECT k, (k, v) IN (SELECT k, w FROM s WHERE s.k = t.k) FROM t",
			"(1, t) (2, f) (NULL, f)"},
		{"row subquery", "SELECT k, (k, v) = (SELECT k, w FROM s WHERE k = 1) FROM t",
			"(1, t) (2, f) (NULL, NULL)"},
		{"a row field is a record, not NULL", "SELECT k, ROW(ROW(k), 'x') IS NOT NULL, ROW(ROW(k), NULL) IS NULL FROM t",
			"(1, t, f) (2, t, f) (NULL, t, f)"},
		{"rows of rows compare their row fields as records", "SELECT k, ROW(ROW(k), v) = ROW(ROW(1::bigint), 'a'), ROW(ROW(k), v) < ROW(ROW(NULL::bigint), 'z') FROM t",
			"(1, t, t) (2, f, t) (NULL, f, t)"},
		{"row subquery over no rows", "SELECT k, (k, v) = (SELECT k, w FROM s WHERE false) FROM t",
			"(1, NULL) (2, NULL) (NULL, NULL)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, codes := evalRows(t, tc.sql, ts, ss)
			if got := strings.Join(rows, " "); got != tc.want || len(codes) > 0 {
				t.Errorf("%s:\ngot  %s %v\nwant %s", tc.sql, got, codes, tc.want)
			}
		})
	}
}

// TestRowInConjunctIsASemiJoin checks that (a, b) IN (S) as a WHERE
// conjunct plans as the EXISTS it is there, without the NULL
// bookkeeping of the general form.
func TestRowInConjunctIsASemiJoin(t *testing.T) {
	in := planSizeOf(t, "SELECT k FROM t WHERE (k, v) IN (SELECT k, w FROM s)")
	exists := planSizeOf(t, "SELECT k FROM t WHERE EXISTS (SELECT 1 FROM (SELECT k, w FROM s) AS x(a, b) WHERE k = a AND v = b)")
	if in != exists {
		t.Errorf("row IN in WHERE plans %d nodes, EXISTS %d", in, exists)
	}
}

// TestRowComparisonParams checks that keyset pagination's parameters
// take their fields' types, as each is compared with one column.
func TestRowComparisonParams(t *testing.T) {
	for sql, want := range map[string][]row.Type{
		"SELECT k FROM kv WHERE (k, v) > ($1, $2) ORDER BY k, v LIMIT 10": {row.TypeInt64, row.TypeText},
		"SELECT k FROM kv WHERE ($2, $1) IN (SELECT k, v FROM pk)":        {row.TypeText, row.TypeInt64},
		"SELECT (f, k) IS DISTINCT FROM ($1, $2) FROM kv":                 {row.TypeFloat64, row.TypeInt64},
	} {
		p := &Planner{Catalog: testCatalog()}
		if _, err := planSQL(t, p, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if got := p.ResolvedParamTypes(); !slices.Equal(got, want) {
			t.Errorf("%s: parameter types %v, want %v", sql, got, want)
		}
	}
}
