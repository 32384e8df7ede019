package sql_test

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestPrimaryKeyIndex checks that a primary key is kept as an index: a
// read by key is a fast-path lookup, the index goes with DROP TABLE, and
// ADD COLUMN rebuilds it.
func TestPrimaryKeyIndex(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, "CREATE TABLE emp (id int PRIMARY KEY, name text)")
	run(t, s, "INSERT INTO emp VALUES (1, 'a'), (2, 'b')")
	if got := strings.Join(run(t, s, "SHOW INDEXES ON emp"), "|"); !strings.Contains(got, "emp_pkey") {
		t.Fatalf("SHOW INDEXES: %s", got)
	}
	if got := strings.Join(run(t, s, "EXPLAIN SELECT name FROM emp WHERE id = 2"), "\n"); !strings.Contains(strings.ToLower(got), "lookup") {
		t.Fatalf("EXPLAIN of a read by key:\n%s", got)
	}
	wantCode(t, s, "INSERT INTO emp VALUES (2, 'dup')", sqlerr.UniqueViolation)
	run(t, s, "ALTER TABLE emp ADD COLUMN dept text DEFAULT 'x'")
	wantRows(t, s, "SELECT name, dept FROM emp WHERE id = 2", "b,x")
	wantCode(t, s, "INSERT INTO emp VALUES (1, 'dup', 'y')", sqlerr.UniqueViolation)
	run(t, s, "CREATE TABLE other (k int)")
	run(t, s, "INSERT INTO other VALUES (1), (1)")
	wantCode(t, s, "ALTER TABLE other ADD PRIMARY KEY (k)", sqlerr.UniqueViolation)
	run(t, s, "DELETE FROM other")
	run(t, s, "ALTER TABLE other ADD PRIMARY KEY (k)")
	if got := strings.Join(run(t, s, "SHOW INDEXES ON other"), "|"); !strings.Contains(got, "other_pkey") {
		t.Fatalf("SHOW INDEXES after ADD PRIMARY KEY: %s", got)
	}
	run(t, s, "DROP TABLE emp, other")
	if got := run(t, s, "SHOW INDEXES"); len(got) != 0 {
		t.Fatalf("indexes after DROP TABLE: %v", got)
	}
}
