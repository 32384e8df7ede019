package sql_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestTransactionBlocks pins what BEGIN ... COMMIT/ROLLBACK means for
// writes: INSERTs are applied at COMMIT and discarded by ROLLBACK or by
// an error, as in PostgreSQL; what Tandem cannot roll back is refused.
// UPDATE and DELETE: tx_block_test.go.
func TestTransactionBlocks(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, "CREATE TABLE t (a int, b text)")

	// ROLLBACK discards the block's inserts.
	run(t, s, "BEGIN; INSERT INTO t VALUES (1, 'x'); INSERT INTO t VALUES (2, 'y'); ROLLBACK")
	wantRows(t, s, "SELECT count(*) FROM t", "0")

	// COMMIT applies them.
	run(t, s, "BEGIN; INSERT INTO t VALUES (1, 'x'); INSERT INTO t VALUES (2, 'y'); COMMIT")
	wantRows(t, s, "SELECT a FROM t ORDER BY a", "1", "2")

	// Statements sent one at a time, as drivers do.
	for _, q := range []string{"BEGIN", "INSERT INTO t VALUES (3, 'z')"} {
		run(t, s, q)
	}
	if !s.InTransaction() {
		t.Fatal("not in a transaction after BEGIN")
	}
	// A read after a write sees it.
	wantRows(t, s, "SELECT a FROM t ORDER BY a", "1", "2", "3")
	wantCode(t, s, "SELECT 1/0", sqlerr.DivisionByZero)
	if !s.TransactionFailed() {
		t.Fatal("an error inside a block must abort it")
	}
	// An aborted block ignores everything until it ends ...
	wantCode(t, s, "INSERT INTO t VALUES (4, 'w')", sqlerr.InFailedTransaction)
	// ... and COMMIT rolls it back.
	res, err := s.ExecuteSQL(context.Background(), "COMMIT")
	if err != nil || res[0].Tag != "ROLLBACK" {
		t.Fatalf("COMMIT of an aborted block: %v %v, want tag ROLLBACK", res, err)
	}
	wantRows(t, s, "SELECT count(*) FROM t", "2")

	// An INSERT that fails aborts the block; earlier inserts are lost.
	run(t, s, "BEGIN; INSERT INTO t VALUES (5, 'v')")
	wantCode(t, s, "INSERT INTO t VALUES ('nope', 'v')", sqlerr.InvalidTextRepresentation)
	run(t, s, "ROLLBACK")
	wantRows(t, s, "SELECT count(*) FROM t", "2")

	// What cannot be rolled back is refused inside a block.
	for _, q := range []string{
		"CREATE TABLE u (a int)",
		"CREATE VIEW v AS SELECT 1",
		"DROP TABLE t",
		"CREATE SOURCE c FROM LOAD GENERATOR COUNTER",
	} {
		run(t, s, "BEGIN")
		wantCode(t, s, q, sqlerr.ActiveSQLTransaction)
		run(t, s, "ROLLBACK")
	}
	wantRows(t, s, "SELECT a FROM t ORDER BY a", "1", "2")

	// Reads before the first write, and INSERT ... SELECT as the first
	// write, are fine.
	run(t, s, "BEGIN; SELECT * FROM t; INSERT INTO t SELECT a + 10, b FROM t; COMMIT")
	wantRows(t, s, "SELECT a FROM t ORDER BY a", "1", "2", "11", "12")
	// A second INSERT reading the table sees the first's rows.
	run(t, s, "BEGIN; INSERT INTO t VALUES (20, 'q')")
	run(t, s, "INSERT INTO t SELECT a + 100, b FROM t WHERE a >= 12")
	wantRows(t, s, "SELECT a FROM t WHERE a >= 12 ORDER BY a", "12", "20", "112", "120")
	run(t, s, "ROLLBACK")
}

// TestSubscribeInBlock pins SUBSCRIBE inside a transaction block: a
// subscription reads committed data, so one that reads a table the block
// has written is refused (0A000, naming the table; the block is then
// aborted, as by any error); one of anything else runs, before or after the block's writes,
// and does not include them.
func TestSubscribeInBlock(t *testing.T) {
	tests := []struct {
		name   string
		writes string // the block's writes before the SUBSCRIBE
		sub    string
		// refused names the table in the 0A000 message; else the
		// snapshot's rows (a, as the subscription reports them).
		refused string
		rows    []string
	}{
		{name: "no writes", sub: "SUBSCRIBE t", rows: []string{"1", "2"}},
		{name: "written table", writes: "INSERT INTO t VALUES (3)", sub: "SUBSCRIBE t", refused: "t"},
		{name: "written table through a view", writes: "DELETE FROM t WHERE a = 1", sub: "SUBSCRIBE v", refused: "t"},
		{name: "written table in a query", writes: "UPDATE t SET a = a + 10", sub: "SUBSCRIBE (SELECT a FROM u UNION ALL SELECT a FROM t)", refused: "t"},
		{name: "truncated table", writes: "TRUNCATE t", sub: "SUBSCRIBE (SELECT count(*) AS a FROM t)", refused: "t"},
		{name: "other table", writes: "INSERT INTO t VALUES (3); UPDATE t SET a = 0 WHERE a = 1", sub: "SUBSCRIBE u", rows: []string{"7"}},
		{name: "other table, as a cursor", writes: "DELETE FROM t", sub: "DECLARE c CURSOR FOR SUBSCRIBE (SELECT a + 1 AS a FROM u)", rows: []string{"8"}},
		{name: "subscription before the write", sub: "DECLARE c CURSOR FOR SUBSCRIBE t", rows: []string{"1", "2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newSession(t)
			run(t, s, "CREATE TABLE t (a int); INSERT INTO t VALUES (1), (2); CREATE VIEW v AS SELECT a FROM t WHERE a > 0")
			run(t, s, "CREATE TABLE u (a int); INSERT INTO u VALUES (7)")
			run(t, s, "BEGIN")
			if tc.writes != "" {
				run(t, s, tc.writes)
			}
			res, err := s.ExecuteSQL(context.Background(), tc.sub)
			if tc.refused != "" {
				if sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.refused)) {
					t.Fatalf("%s after %s: %v, want 0A000 naming %q", tc.sub, tc.writes, err, tc.refused)
				}
				// Like any error, the refusal aborts the block.
				wantCode(t, s, "SELECT 1", sqlerr.InFailedTransaction)
				run(t, s, "ROLLBACK")
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.sub, err)
			}
			var got []string
			if strings.HasPrefix(tc.sub, "DECLARE") {
				run(t, s, "INSERT INTO t VALUES (99)") // after the cursor: not in it
				got = run(t, s, "FETCH ALL c WITH (timeout = '10ms')")
			} else {
				rows, err := res[0].Copy.Next(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				res[0].Copy.Close()
				got = rowsText(rows)
			}
			var vals []string
			for _, r := range got {
				vals = append(vals, r[strings.LastIndex(r, ",")+1:])
			}
			slices.Sort(vals)
			if strings.Join(vals, "|") != strings.Join(tc.rows, "|") {
				t.Fatalf("%s snapshot: %q, want values %q", tc.sub, got, tc.rows)
			}
			run(t, s, "COMMIT")
		})
	}
}

// TestImplicitTransaction pins PostgreSQL's rule for a query string of
// several statements: it is one transaction, so an error in the middle
// undoes the INSERTs before it.
func TestImplicitTransaction(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, "CREATE TABLE t (a int)")
	wantCode(t, s, "INSERT INTO t VALUES (1); INSERT INTO t VALUES (1/0); INSERT INTO t VALUES (3)", sqlerr.DivisionByZero)
	wantRows(t, s, "SELECT count(*) FROM t", "0")
	if s.InTransaction() || s.TransactionFailed() {
		t.Fatal("an implicit transaction must end with its query")
	}
	// A read in the same string sees the INSERTs before it.
	wantRows(t, s, "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); SELECT count(*) FROM t", "2")
	// DDL in the string runs as before (Tandem cannot roll it back).
	run(t, s, "CREATE TABLE u (a int); INSERT INTO u VALUES (7)")
	wantRows(t, s, "SELECT a FROM u", "7")
}
