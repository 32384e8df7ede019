package planner

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestSearchCycleColumns: the added columns follow the CTE's, in
// PostgreSQL's order and types (record[] for a depth-first sequence and
// a path, record for a breadth-first one, the mark's TO/DEFAULT type),
// with OIDs 2287 and 2249; a UNION recursion with them is still
// maintained incrementally.
func TestSearchCycleColumns(t *testing.T) {
	tests := []struct {
		sql   string
		names []string
		types []row.Type
	}{
		{"WITH RECURSIVE r(n) AS (SELECT k FROM kv UNION SELECT n + 1 FROM r WHERE n < 3) SEARCH DEPTH FIRST BY n SET o SELECT * FROM r",
			[]string{"n", "o"}, []row.Type{row.TypeInt64, row.TypeRecordArray}},
		{"WITH RECURSIVE r(n, m) AS (SELECT k, v FROM kv UNION SELECT n + 1, m FROM r WHERE n < 3) SEARCH BREADTH FIRST BY m SET o CYCLE n, m SET c TO 'y' DEFAULT 'n' USING p SELECT * FROM r",
			[]string{"n", "m", "o", "c", "p"}, []row.Type{row.TypeInt64, row.TypeText, row.TypeRecord, row.TypeText, row.TypeRecordArray}},
		{"WITH RECURSIVE r(n) AS (SELECT k FROM kv UNION SELECT r.n + 1 FROM r JOIN kv ON kv.k = r.n) CYCLE n SET c USING p SELECT * FROM r",
			[]string{"n", "c", "p"}, []row.Type{row.TypeInt64, row.TypeBool, row.TypeRecordArray}},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			q, err := planSQL(t, &Planner{Catalog: testCatalog()}, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(q.Desc.Names, ",") != strings.Join(tc.names, ",") {
				t.Fatalf("names %v, want %v", q.Desc.Names, tc.names)
			}
			for i, want := range tc.types {
				if got := q.Desc.Types[i].Type; got != want {
					t.Errorf("column %s has type %s, want %s", tc.names[i], got, want)
				}
			}
			if ex := Explain(q); !strings.Contains(ex, "(incremental: ") {
				t.Errorf("EXPLAIN does not say incremental:\n%s", ex)
			}
		})
	}
	if oid, _ := PGType(row.TypeRecord, 0, TypeMod{}); oid != 2249 {
		t.Errorf("record OID %d", oid)
	}
	if oid, _ := PGType(row.TypeRecordArray, 0, TypeMod{}); oid != 2287 {
		t.Errorf("record[] OID %d", oid)
	}
}

func TestSearchCycleErrors(t *testing.T) {
	const rec = "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) "
	tests := []struct{ sql, code, msg string }{
		{"WITH t(n) AS (SELECT 1) SEARCH DEPTH FIRST BY n SET o SELECT * FROM t", sqlerr.SyntaxError, "WITH query is not recursive"},
		{rec + "SEARCH DEPTH FIRST BY x SET o SELECT * FROM t", sqlerr.SyntaxError, `search column "x" not in WITH query column list`},
		{rec + "CYCLE n, n SET c USING p SELECT * FROM t", sqlerr.DuplicateColumn, `cycle column "n" specified more than once`},
		{rec + "CYCLE n SET c USING c SELECT * FROM t", sqlerr.SyntaxError, "cycle mark column name and cycle path column name are the same"},
		{rec + "SEARCH DEPTH FIRST BY n SET p CYCLE n SET c USING p SELECT * FROM t", sqlerr.SyntaxError, "search sequence column name and cycle path column name are the same"},
		{rec + "SEARCH DEPTH FIRST BY n SET n SELECT * FROM t", sqlerr.AmbiguousColumn, `column reference "n" is ambiguous`},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT 2 FROM t WHERE false) CYCLE n SET c USING n SELECT * FROM t", sqlerr.SyntaxError, `cycle path column name "n" already used in WITH query column list`},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL (SELECT n FROM t UNION ALL SELECT 5)) CYCLE n SET c USING p SELECT * FROM t", sqlerr.SyntaxError, "the right side of the UNION must be a SELECT"},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n FROM (SELECT 1 AS n) AS s WHERE EXISTS (SELECT FROM t)) CYCLE n SET c USING p SELECT * FROM t", invalidRecursion, "must not appear within a subquery"},
		{rec + "CYCLE n SET c TO true DEFAULT 55 USING p SELECT * FROM t", sqlerr.DatatypeMismatch, ""},
		{"WITH RECURSIVE t(r) AS (SELECT ROW(1) UNION ALL SELECT r FROM t WHERE false) CYCLE r SET c USING p SELECT * FROM t", sqlerr.FeatureNotSupported, "records nested in records"},
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
