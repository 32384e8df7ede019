package sql_test

import (
	"context"
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
	// SUBSCRIBE after a write is refused: its dataflow cannot see the
	// block's writes.
	run(t, s, "BEGIN; INSERT INTO t VALUES (20, 'q')")
	wantCode(t, s, "SUBSCRIBE (SELECT * FROM t)", sqlerr.FeatureNotSupported)
	run(t, s, "ROLLBACK")
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
