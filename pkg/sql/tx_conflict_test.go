package sql_test

import (
	"runtime"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestWriteSkewFailsWith40001 pins the optimistic validation of a
// block's reads at COMMIT (tx_conflict.go). Classic write skew: two
// doctors on call, each block checks that the other is still on call and
// takes itself off (here by INSERTing an "off" row, as INSERT-only blocks
// take no lock before COMMIT). Interleaved, both would commit and leave
// nobody on call; the second COMMIT must fail with 40001 and write
// nothing. The other cases pin what must still commit: a block whose
// reads nobody wrote since, a read of another table, a read-only block,
// and a retry of the failed block.
func TestWriteSkewFailsWith40001(t *testing.T) {
	const setup = `CREATE TABLE doctors (name text, on_call bool);
		INSERT INTO doctors VALUES ('alice', true), ('bob', true);
		CREATE TABLE off (name text);
		CREATE TABLE other (k int);
		CREATE VIEW on_call AS SELECT d.name FROM doctors d WHERE d.on_call AND d.name NOT IN (SELECT name FROM off)`
	cases := []struct {
		name string
		// a runs in a block begun before b's statements; b runs and
		// commits between a's read and a's COMMIT.
		a, b []string
		// aCommit is the SQLSTATE of a's COMMIT ("" for success).
		aCommit string
		// offAfter is the count of rows in off at the end.
		offAfter string
	}{
		{name: "write skew through a view",
			a:       []string{"SELECT count(*) FROM on_call", "INSERT INTO off VALUES ('alice')"},
			b:       []string{"BEGIN", "SELECT count(*) FROM on_call", "INSERT INTO off VALUES ('bob')", "COMMIT"},
			aCommit: sqlerr.SerializationFailure, offAfter: "1"},
		{name: "write skew on the table read",
			a:       []string{"SELECT count(*) FROM off", "INSERT INTO off VALUES ('alice')"},
			b:       []string{"INSERT INTO off VALUES ('bob')"},
			aCommit: sqlerr.SerializationFailure, offAfter: "1"},
		{name: "read of a table another session did not write",
			a: []string{"SELECT count(*) FROM doctors", "INSERT INTO off VALUES ('alice')"},
			b: []string{"INSERT INTO other VALUES (1)"}, offAfter: "1"},
		{name: "write with no read",
			a: []string{"INSERT INTO off VALUES ('alice')"},
			b: []string{"INSERT INTO off VALUES ('bob')"}, offAfter: "2"},
		{name: "read-only block",
			a: []string{"SELECT count(*) FROM off"},
			b: []string{"INSERT INTO off VALUES ('bob')"}, offAfter: "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := sqltest.New()
			e := sql.NewEngine(f)
			a, b := e.NewSession("alice"), e.NewSession("alice")
			run(t, a, setup)
			run(t, a, "BEGIN")
			for _, st := range tc.a {
				run(t, a, st)
			}
			for _, st := range tc.b {
				run(t, b, st)
			}
			before := f.Commits()
			if tc.aCommit != "" {
				wantCode(t, a, "COMMIT", tc.aCommit)
				if f.Commits() != before {
					t.Error("the failed COMMIT wrote")
				}
			} else {
				run(t, a, "COMMIT")
			}
			if a.InTransaction() {
				t.Error("the block did not end")
			}
			wantRows(t, b, "SELECT count(*) FROM off", tc.offAfter)
		})
	}
}

// TestWriteSkewRetrySucceeds: the block that failed with 40001 succeeds
// when run again, and then sees the other session's write.
func TestWriteSkewRetrySucceeds(t *testing.T) {
	e := sql.NewEngine(sqltest.New())
	a, b := e.NewSession("alice"), e.NewSession("alice")
	run(t, a, "CREATE TABLE off (name text)")
	block := func() {
		run(t, a, "BEGIN")
		run(t, a, "SELECT count(*) FROM off")
		run(t, a, "INSERT INTO off VALUES ('alice')")
	}
	block()
	run(t, b, "INSERT INTO off VALUES ('bob')")
	wantCode(t, a, "COMMIT", sqlerr.SerializationFailure)
	block()
	run(t, a, "COMMIT")
	wantRows(t, a, "SELECT name FROM off ORDER BY name", "alice", "bob")
}

// TestImplicitTransactionWriteSkew: a query string of several statements
// is one transaction, validated when its INSERTs are applied: another
// session's write to the table it read, made while the string's read is
// in flight (held by BlockPeeks), fails it with 40001 and its INSERT is
// not applied. (This read does see the write, as the fake evaluates it
// after the release; the validation cannot tell, and a retry succeeds.)
func TestImplicitTransactionWriteSkew(t *testing.T) {
	f := sqltest.New()
	e := sql.NewEngine(f)
	a, b := e.NewSession("alice"), e.NewSession("alice")
	run(t, a, "CREATE TABLE off (name text); CREATE TABLE other (k int)")
	release := f.BlockPeeks()
	done := make(chan error, 1)
	go func() {
		_, err := a.ExecuteSQL(t.Context(), "SELECT count(*) FROM off; INSERT INTO off VALUES ('alice')")
		done <- err
	}()
	for f.HeldPeeks() == 0 {
		select {
		case err := <-done:
			t.Fatalf("the string ended before its read was held: %v", err)
		default:
			runtime.Gosched()
		}
	}
	run(t, b, "INSERT INTO off VALUES ('bob')")
	release()
	if err := <-done; sqlerr.Code(err) != sqlerr.SerializationFailure {
		t.Fatalf("the string ended with %v, want 40001", err)
	}
	wantRows(t, b, "SELECT name FROM off", "bob")
}

// TestBlockReadsAreStrict: reads in a transaction block are strict
// serializable whatever transaction_isolation says, as the COMMIT's
// validation needs (a serializable read could miss a write that returned
// before it). Outside a block the session's isolation holds.
func TestBlockReadsAreStrict(t *testing.T) {
	f := sqltest.New()
	s := sql.NewEngine(f).NewSession("alice")
	run(t, s, "CREATE TABLE t (a int); SET transaction_isolation = serializable")
	run(t, s, "SELECT a FROM t")
	if got := f.LastPeek().Isolation; got != sql.IsolationSerializable {
		t.Errorf("outside a block: isolation %q", got)
	}
	run(t, s, "BEGIN")
	run(t, s, "SELECT a FROM t")
	if got := f.LastPeek().Isolation; got != sql.IsolationStrictSerializable {
		t.Errorf("in a block: isolation %q, want strict", got)
	}
	run(t, s, "COMMIT")
}
