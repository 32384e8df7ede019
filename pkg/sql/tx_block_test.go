package sql_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// txStep is one statement of a transaction block test: its expected
// rows, or its expected SQLSTATE.
type txStep struct {
	sql  string
	rows []string
	code string
}

// TestTransactionBlockUpdateDelete pins UPDATE and DELETE inside BEGIN
// ... COMMIT: computed over the table's committed rows plus the block's
// buffered writes, read back by the block's own SELECTs, checked against
// the table's constraints when they run (as PostgreSQL checks them), and
// applied at COMMIT with the block's other writes in one commit, or
// discarded by ROLLBACK or an error. The expected answers are
// PostgreSQL's (testdata/oracle script tx_update_delete).
func TestTransactionBlockUpdateDelete(t *testing.T) {
	const setup = `CREATE TABLE t (a int PRIMARY KEY CHECK (a > 0), b text NOT NULL);
		INSERT INTO t VALUES (1, 'x'), (2, 'y');
		CREATE TABLE u (k int); INSERT INTO u VALUES (7), (8)`
	cases := []struct {
		name  string
		steps []txStep
		// after is t's rows (a,b ordered by a) once the block ended.
		after []string
		// commits is the number of table writes the block's end made.
		commits uint64
	}{
		{name: "update commit", steps: []txStep{
			{sql: "UPDATE t SET b = 'z' WHERE a = 1 RETURNING a, b", rows: []string{"1,z"}},
			{sql: "SELECT a, b FROM t ORDER BY a", rows: []string{"1,z", "2,y"}},
			{sql: "COMMIT"},
		}, after: []string{"1,z", "2,y"}, commits: 1},
		{name: "delete rollback", steps: []txStep{
			{sql: "DELETE FROM t WHERE a = 1 RETURNING b", rows: []string{"x"}},
			{sql: "SELECT count(*) FROM t", rows: []string{"1"}},
			{sql: "ROLLBACK"},
		}, after: []string{"1,x", "2,y"}},
		{name: "update and delete of buffered inserts", steps: []txStep{
			{sql: "INSERT INTO t VALUES (3, 'w'), (4, 'v')"},
			{sql: "UPDATE t SET b = b || '!' WHERE a >= 2 RETURNING a, b", rows: []string{"2,y!", "3,w!", "4,v!"}},
			{sql: "DELETE FROM t WHERE a = 4 OR a = 1 RETURNING a", rows: []string{"1", "4"}},
			{sql: "SELECT a, b FROM t ORDER BY a", rows: []string{"2,y!", "3,w!"}},
			{sql: "COMMIT"},
		}, after: []string{"2,y!", "3,w!"}, commits: 1},
		{name: "several tables in one commit", steps: []txStep{
			{sql: "UPDATE t SET b = 'q' WHERE a = 2"},
			{sql: "DELETE FROM u WHERE k = 7"},
			{sql: "INSERT INTO u SELECT a FROM t"},
			{sql: "SELECT k FROM u ORDER BY k", rows: []string{"1", "2", "8"}},
			{sql: "COMMIT"},
		}, after: []string{"1,x", "2,q"}, commits: 1},
		{name: "truncate then update", steps: []txStep{
			{sql: "TRUNCATE t"},
			{sql: "INSERT INTO t VALUES (5, 'p')"},
			{sql: "UPDATE t SET b = 'r' RETURNING a", rows: []string{"5"}},
			{sql: "SELECT a, b FROM t", rows: []string{"5,r"}},
			{sql: "COMMIT"},
		}, after: []string{"5,r"}, commits: 1},
		{name: "key freed by a buffered delete", steps: []txStep{
			{sql: "DELETE FROM t WHERE a = 2"},
			{sql: "UPDATE t SET a = 2 WHERE a = 1"},
			{sql: "INSERT INTO t VALUES (1, 'n')"},
			{sql: "COMMIT"},
		}, after: []string{"1,n", "2,x"}, commits: 1},
		{name: "update to an existing key", steps: []txStep{
			{sql: "UPDATE t SET a = 2 WHERE a = 1", code: sqlerr.UniqueViolation},
			{sql: "SELECT 1", code: sqlerr.InFailedTransaction},
			{sql: "COMMIT"}, // rolls back
		}, after: []string{"1,x", "2,y"}},
		{name: "insert of a key a buffered update took", steps: []txStep{
			{sql: "UPDATE t SET a = 10 WHERE a = 1"},
			{sql: "INSERT INTO t VALUES (10, 'd')", code: sqlerr.UniqueViolation},
			{sql: "ROLLBACK"},
		}, after: []string{"1,x", "2,y"}},
		{name: "not null", steps: []txStep{
			{sql: "UPDATE t SET b = NULL WHERE a = 1", code: sqlerr.NotNullViolation},
			{sql: "ROLLBACK"},
		}, after: []string{"1,x", "2,y"}},
		{name: "check", steps: []txStep{
			{sql: "DELETE FROM t WHERE a = 2"},
			{sql: "UPDATE t SET a = a - 1", code: sqlerr.CheckViolation},
			{sql: "COMMIT"},
		}, after: []string{"1,x", "2,y"}},
		{name: "error discards earlier writes", steps: []txStep{
			{sql: "UPDATE t SET b = 'e'"},
			{sql: "DELETE FROM u"},
			{sql: "SELECT 1 / 0", code: sqlerr.DivisionByZero},
			{sql: "ROLLBACK"},
		}, after: []string{"1,x", "2,y"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := sqltest.New()
			s := sql.NewEngine(f).NewSession("alice")
			run(t, s, setup)
			run(t, s, "BEGIN")
			before := f.Commits()
			for _, st := range tc.steps {
				if st.code != "" {
					wantCode(t, s, st.sql, st.code)
					continue
				}
				if got := run(t, s, st.sql); st.rows != nil && strings.Join(got, "|") != strings.Join(st.rows, "|") {
					t.Fatalf("%s:\n got %q\nwant %q", st.sql, got, st.rows)
				}
				if f.Commits() != before && s.InTransaction() {
					t.Fatalf("%s wrote a table before COMMIT", st.sql)
				}
			}
			if s.InTransaction() {
				t.Fatal("the block did not end")
			}
			if got := f.Commits() - before; got != tc.commits {
				t.Errorf("the block's end made %d commits, want %d", got, tc.commits)
			}
			wantRows(t, s, "SELECT a, b FROM t ORDER BY a", tc.after...)
		})
	}
}

// TestTransactionBlockSerialisesWriters pins the rule that keeps a
// block's UPDATE or DELETE from losing another session's write: from its
// first UPDATE or DELETE until it ends, the block holds the engine's
// write lock, so another writer waits for it and then sees its writes.
func TestTransactionBlockSerialisesWriters(t *testing.T) {
	ends := []struct {
		name string
		end  func(t *testing.T, s *sql.Session)
		want string // v after both writes
	}{
		{name: "commit", end: func(t *testing.T, s *sql.Session) { run(t, s, "COMMIT") }, want: "12"},
		{name: "rollback", end: func(t *testing.T, s *sql.Session) { run(t, s, "ROLLBACK") }, want: "11"},
		{name: "error", end: func(t *testing.T, s *sql.Session) { wantCode(t, s, "SELECT 1/0", sqlerr.DivisionByZero) }, want: "11"},
		{name: "session closed", end: func(t *testing.T, s *sql.Session) { s.Close() }, want: "11"},
	}
	for _, tc := range ends {
		t.Run(tc.name, func(t *testing.T) {
			e := sql.NewEngine(sqltest.New())
			a, b := e.NewSession("alice"), e.NewSession("alice")
			run(t, a, "CREATE TABLE t (k int, v int); INSERT INTO t VALUES (1, 1)")
			run(t, a, "BEGIN")
			run(t, a, "UPDATE t SET v = v + 1")
			done := make(chan error, 1)
			go func() {
				_, err := b.ExecuteSQL(context.Background(), "UPDATE t SET v = v + 10")
				done <- err
			}()
			// Without the lock b's UPDATE completes at once; the wait can
			// only let a broken lock go unnoticed, never fail a good one.
			select {
			case err := <-done:
				t.Fatalf("another session's UPDATE ran inside the block's snapshot (err %v)", err)
			case <-time.After(100 * time.Millisecond):
			}
			tc.end(t, a)
			if err := <-done; err != nil {
				t.Fatalf("the other session's UPDATE: %v", err)
			}
			wantRows(t, b, "SELECT v FROM t", tc.want)
		})
	}
}

// TestUpdateKeyCountsRemovedRows pins the key check of a change that
// removes and adds rows with the same key: the removed rows are rows of
// the table, so their key is read too (both rows of t end up with a = 2).
func TestUpdateKeyCountsRemovedRows(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, "CREATE TABLE t (a int PRIMARY KEY, b text); INSERT INTO t VALUES (1, 'x'), (2, 'y')")
	wantCode(t, s, "UPDATE t SET a = 2", sqlerr.UniqueViolation)
	run(t, s, "UPDATE t SET a = 3 - a")
	wantRows(t, s, "SELECT a, b FROM t ORDER BY a", "1,y", "2,x")
}

// TestWriterQueuedBehindBlockCanBeCanceled: a writer waiting for the write
// lock an open block holds ends with 57014 when its statement_timeout
// passes or its context is canceled, and the block is unaffected.
func TestWriterQueuedBehindBlockCanBeCanceled(t *testing.T) {
	e := sql.NewEngine(sqltest.New())
	a, b := e.NewSession("alice"), e.NewSession("alice")
	run(t, a, "CREATE TABLE t (k int, v int); INSERT INTO t VALUES (1, 1)")
	run(t, a, "BEGIN")
	run(t, a, "UPDATE t SET v = v + 1")

	run(t, b, "SET statement_timeout = '50ms'")
	wantCode(t, b, "UPDATE t SET v = v + 10", sqlerr.QueryCanceled)
	wantCode(t, b, "TRUNCATE t", sqlerr.QueryCanceled)
	run(t, b, "SET statement_timeout = 0")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecuteSQL(ctx, "DELETE FROM t")
		done <- err
	}()
	cancel()
	if err := <-done; sqlerr.Code(err) != sqlerr.QueryCanceled {
		t.Fatalf("canceled DELETE behind the block: %v, want 57014", err)
	}
	run(t, a, "COMMIT")
	wantRows(t, b, "SELECT v FROM t", "2")
}

// TestDDLQueuedBehindBlockCanBeCanceled: catalog changes wait for the
// write lock like writers, so one queued behind an open block ends with
// 57014 when its statement_timeout passes or its context is canceled,
// and changes nothing; once the block ends it runs.
func TestDDLQueuedBehindBlockCanBeCanceled(t *testing.T) {
	const relations = `SELECT c.relname, c.relkind, count(a.column_name)
		FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
		LEFT JOIN information_schema.columns a ON a.table_name = c.relname AND a.table_schema = 'public'
		WHERE n.nspname = 'public' GROUP BY c.relname, c.relkind ORDER BY 1`
	catalog := func(s *sql.Session) string {
		return strings.Join(append(run(t, s, relations), run(t, s, "SHOW CLUSTERS")...), "|")
	}
	tests := []string{
		"CREATE TABLE t2 (k int)",
		"CREATE VIEW v2 AS SELECT k FROM t",
		"CREATE MATERIALIZED VIEW m2 AS SELECT k FROM t",
		"CREATE INDEX t_v_idx ON t (v)",
		"CREATE SOURCE c2 FROM LOAD GENERATOR COUNTER",
		"DROP TABLE u",
		"DROP VIEW v",
		"DROP INDEX t_k_idx",
		"DROP SOURCE c",
		"DROP CLUSTER empty",
		"ALTER TABLE u ADD COLUMN w int",
		"ALTER TABLE u RENAME TO u3",
	}
	for _, ddl := range tests {
		t.Run(ddl, func(t *testing.T) {
			e := sql.NewEngine(sqltest.New())
			a, b := e.NewSession("alice"), e.NewSession("alice")
			run(t, a, `CREATE TABLE t (k int, v int); INSERT INTO t VALUES (1, 1);
				CREATE TABLE u (k int); CREATE VIEW v AS SELECT v FROM t;
				CREATE INDEX t_k_idx ON t (k); CREATE SOURCE c FROM LOAD GENERATOR COUNTER;
				CREATE CLUSTER empty REPLICAS ()`)
			before := catalog(a)
			run(t, a, "BEGIN")
			run(t, a, "UPDATE t SET v = v + 1")

			run(t, b, "SET statement_timeout = '20ms'")
			if err := execBounded(b, context.Background(), ddl); sqlerr.Code(err) != sqlerr.QueryCanceled {
				t.Fatalf("%s behind the block with statement_timeout: %v, want 57014", ddl, err)
			}
			run(t, b, "SET statement_timeout = 0")
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := execBounded(b, ctx, ddl); sqlerr.Code(err) != sqlerr.QueryCanceled {
				t.Fatalf("canceled %s behind the block: %v, want 57014", ddl, err)
			}
			if got := catalog(b); got != before {
				t.Fatalf("catalog changed by a canceled %s:\n got %q\nwant %q", ddl, got, before)
			}
			run(t, a, "COMMIT")
			run(t, b, ddl)
			if got := catalog(b); got == before {
				t.Fatalf("%s after the block changed nothing: %q", ddl, got)
			}
		})
	}
}

// execBounded runs text and returns its error, or a failure of its own
// when the statement has not returned long after it should have (a
// statement that waits for a lock without its context would hang the
// test instead of failing it).
func execBounded(s *sql.Session, ctx context.Context, text string) error {
	done := make(chan error, 1)
	go func() {
		_, err := s.ExecuteSQL(ctx, text)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s still waiting 10s after its deadline", text)
	}
}

// TestUpsertInBlock pins INSERT ... ON CONFLICT DO UPDATE in transactions
// beyond the oracle script (testdata/onconflict_tx.slt): in a block it
// holds the write lock like an UPDATE, since the rows it retracts must
// still be there at COMMIT; in a query string of several statements it
// applies the INSERTs before it and is applied at once, like an UPDATE.
func TestUpsertInBlock(t *testing.T) {
	e := sql.NewEngine(sqltest.New())
	a, b := e.NewSession("alice"), e.NewSession("alice")
	run(t, a, "CREATE TABLE kv (k int PRIMARY KEY, n int); INSERT INTO kv VALUES (1, 1)")

	run(t, a, "BEGIN")
	wantRows(t, a, "INSERT INTO kv VALUES (1, 5) ON CONFLICT (k) DO UPDATE SET n = kv.n + excluded.n RETURNING n", "6")
	run(t, b, "SET statement_timeout = '20ms'")
	if err := execBounded(b, context.Background(), "UPDATE kv SET n = 100"); sqlerr.Code(err) != sqlerr.QueryCanceled {
		t.Fatalf("UPDATE behind a block's upsert: %v, want 57014 (the block holds the write lock)", err)
	}
	run(t, b, "SET statement_timeout = 0")
	wantRows(t, b, "SELECT n FROM kv", "1")
	run(t, a, "COMMIT")
	wantRows(t, b, "SELECT n FROM kv", "6")

	// A block's DO NOTHING takes no lock: it only inserts.
	run(t, a, "BEGIN; INSERT INTO kv VALUES (2, 2) ON CONFLICT DO NOTHING")
	run(t, b, "UPDATE kv SET n = n + 1 WHERE k = 1")
	run(t, a, "COMMIT")
	wantRows(t, b, "SELECT k, n FROM kv ORDER BY k", "1,7", "2,2")

	// Implicit transaction: the upsert sees the INSERT before it.
	wantRows(t, a, "INSERT INTO kv VALUES (3, 1); INSERT INTO kv VALUES (1, 1), (3, 1) ON CONFLICT (k) DO UPDATE SET n = kv.n + 10 RETURNING k, n", "1,17", "3,11")
	wantRows(t, b, "SELECT k, n FROM kv ORDER BY k", "1,17", "2,2", "3,11")
}
