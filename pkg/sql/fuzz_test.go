package sql_test

import (
	"context"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// FuzzExecute feeds arbitrary text to the SQL entry point (parse, plan,
// execute against the fake backend): it must never panic, and no error
// may be internal_error (XX000), which is what the fake backend's plan
// validation, the reference evaluator and the planner's own consistency
// checks report for a plan the planner should never have produced.
func FuzzExecute(f *testing.F) {
	for _, s := range []string{
		"SELECT a, count(*) FROM t GROUP BY a HAVING sum(b) > 1 ORDER BY 2 DESC LIMIT 3",
		"SELECT * FROM t LEFT JOIN u ON t.a = u.a AND t.b < u.c FULL JOIN t t2 USING (a)",
		"SELECT a FROM t UNION SELECT c FROM u EXCEPT ALL SELECT 1 INTERSECT SELECT NULL",
		"INSERT INTO t VALUES (1, 2), (NULL, 3); UPDATE t SET b = b * 2 WHERE a IS NULL; DELETE FROM t",
		"CREATE VIEW v AS SELECT a, b FROM t; CREATE MATERIALIZED VIEW m AS SELECT count(*) FROM v",
		"CREATE INDEX ON t (a + 1); SELECT * FROM t WHERE a = 1; EXPLAIN SELECT b FROM t WHERE a IN (1, 2)",
		"SUBSCRIBE (SELECT a FROM t) WITH (SNAPSHOT = false)",
		"SELECT CASE WHEN a > 1 THEN 'x' ELSE NULL END, coalesce(a, 1.5), a::text || 'z' FROM t",
		"SHOW INDEXES; SET cluster = default; SHOW ALL; ALTER SYSTEM SET max_result_size = 5",
		"SELECT * FROM (VALUES (1, 'a'), (2, NULL)) v(x, y) WHERE y LIKE 'a%' OR x BETWEEN 1 AND $1",
		"WITH w AS (SELECT a FROM t) SELECT a, (SELECT max(c) FROM u), a NOT IN (SELECT a FROM w) FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a)",
		"SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > (SELECT count(*) FROM u WHERE u.a = t.a OR true)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fake := sqltest.New()
		s := sql.NewEngine(fake).NewSession("fuzz")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, err := s.ExecuteSQL(ctx, "CREATE TABLE t (a bigint, b bigint); CREATE TABLE u (a bigint, c double precision, d text); INSERT INTO t VALUES (1, 2), (2, NULL), (NULL, 5); INSERT INTO u VALUES (1, 0.5, 'x')"); err != nil {
			t.Fatal(err)
		}
		// Statements that would block (SUBSCRIBE cursors waiting for data)
		// end with the context.
		_, err := s.ExecuteSQL(ctx, text)
		if err != nil && sqlerr.Code(err) == sqlerr.InternalError {
			t.Fatalf("internal error for %q: %v", text, err)
		}
		s.Close()
	})
}
