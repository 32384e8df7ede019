package pgwire

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestImplicitTransactionOverWire sends several statements in one simple
// Query, as psql -c does: an error in the middle undoes the INSERTs before
// it, and an error inside BEGIN leaves the session in a failed block
// (ReadyForQuery 'E') until ROLLBACK.
func TestImplicitTransactionOverWire(t *testing.T) {
	addr := startServer(t, Config{})
	c := connect(t, addr, "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE t (a int)"); err != nil {
		t.Fatal(err)
	}
	pc := c.PgConn()
	_, err := pc.Exec(ctx, "INSERT INTO t VALUES (1); SELECT 1/0; INSERT INTO t VALUES (2)").ReadAll()
	if pgCode(err) != "22012" {
		t.Fatalf("error %v, want 22012", err)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 0 {
		t.Fatalf("count = %d (%v), want 0: the failed query string's INSERT was applied", n, err)
	}

	if _, err := pc.Exec(ctx, "BEGIN; INSERT INTO t VALUES (1)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Exec(ctx, "SELECT 1/0").ReadAll(); pgCode(err) != "22012" {
		t.Fatalf("error %v, want 22012", err)
	}
	if got := pc.TxStatus(); got != 'E' {
		t.Fatalf("transaction status %q after an error in a block, want 'E'", got)
	}
	if _, err := pc.Exec(ctx, "SELECT 1").ReadAll(); pgCode(err) != "25P02" {
		t.Fatalf("error %v, want 25P02", err)
	}
	if _, err := pc.Exec(ctx, "ROLLBACK").ReadAll(); err != nil {
		t.Fatal(err)
	}
	if got := pc.TxStatus(); got != 'I' {
		t.Fatalf("transaction status %q after ROLLBACK, want 'I'", got)
	}
	// pgx's transaction helper: Rollback discards, Commit applies.
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO t VALUES ($1)", 7); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO t VALUES ($1)", 8)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var got []int64
	rows, _ := c.Query(ctx, "SELECT a FROM t")
	got, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(got) != 1 || got[0] != 8 {
		t.Fatalf("rows %v (%v), want [8]", got, err)
	}
}

// TestPreparedAfterDDL reuses a prepared statement after its table was
// dropped and created again with other columns: PostgreSQL refuses with
// 0A000 "cached plan must not change result type" rather than sending
// rows that do not match the description the client holds.
func TestPreparedAfterDDL(t *testing.T) {
	addr := startServer(t, Config{})
	c := connect(t, addr, "")
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE pd (a bigint, b text)", "INSERT INTO pd VALUES (1, 'one')"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Prepare(ctx, "q", "SELECT * FROM pd WHERE a = $1"); err != nil {
		t.Fatal(err)
	}
	var a int64
	var b string
	if err := c.QueryRow(ctx, "q", 1).Scan(&a, &b); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TABLE pd", "CREATE TABLE pd (a bigint, b bigint, c text)", "INSERT INTO pd VALUES (1, 2, 'three')"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rows, _ := c.Query(ctx, "q", 1)
	rows.Close()
	if err := rows.Err(); pgCode(err) != "0A000" {
		t.Fatalf("error %v, want 0A000 (cached plan must not change result type)", err)
	}
	// The session is still usable and the statement prepared anew works.
	if _, err := c.Exec(ctx, "DEALLOCATE ALL"); err != nil {
		t.Fatal(err)
	}
	var b2 int64
	var c3 string
	if err := c.QueryRow(ctx, "SELECT * FROM pd WHERE a = $1", 1).Scan(&a, &b2, &c3); err != nil || c3 != "three" {
		t.Fatalf("%v %q", err, c3)
	}
}
