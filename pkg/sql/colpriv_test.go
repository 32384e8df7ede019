package sql_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestColumnPrivileges: a role holding privileges on some columns (here
// through a group) reads and writes those columns on every path and gets
// 42501 for any statement referencing another; a relation-level REVOKE
// takes the column privileges too.
func TestColumnPrivileges(t *testing.T) {
	f := sqltest.New()
	e := sql.NewEngine(f)
	admin := e.NewSession("admin")
	run(t, admin, `CREATE TABLE t (a int, b text, c int);
		INSERT INTO t VALUES (1, 'x', 10), (2, 'y', 20);
		CREATE INDEX t_a ON t (a);
		CREATE TABLE u (a int, d text);
		CREATE VIEW v AS SELECT a, b, c FROM t;
		CREATE ROLE grp; CREATE ROLE alice LOGIN IN ROLE grp;
		GRANT SELECT (a, b) ON t TO grp;
		GRANT SELECT (a) ON v, u TO grp;
		GRANT INSERT (a), UPDATE (b) ON t TO grp`)
	alice := e.NewSession("alice")
	// Column grants WITH GRANT OPTION, and their revokes.
	const attaclC = "SELECT attacl FROM pg_attribute a JOIN pg_class c ON a.attrelid = c.oid WHERE c.relname = 't' AND attname = 'c'"
	for _, st := range []struct{ sql, want string }{
		{"GRANT SELECT (c) ON t TO grp WITH GRANT OPTION", "{grp=r*/admin}"},
		{"REVOKE GRANT OPTION FOR SELECT (c) ON t FROM grp", "{grp=r/admin}"},
		{"REVOKE SELECT (c) ON t FROM grp", "NULL"},
	} {
		run(t, admin, st.sql)
		wantRows(t, admin, attaclC, st.want)
	}
	cases := []struct {
		sql    string
		denied bool
	}{
		{"SELECT a, b FROM t WHERE a = 1", false},
		{"SELECT count(*) FROM t", false},
		{"SELECT t.a FROM t JOIN u USING (a)", false},
		{"SELECT a FROM v", false},
		{"SELECT b FROM t WHERE c = 10", true},
		{"SELECT * FROM t WHERE a = 1", true},
		{"SELECT t.* FROM t", true},
		{"SELECT b FROM v", true},
		{"SELECT u.d FROM t JOIN u USING (a)", true},
		{"SUBSCRIBE t", true},
		{"SUBSCRIBE (SELECT c FROM t)", true},
		{"INSERT INTO t (a) VALUES (3)", false},
		{"INSERT INTO t (a, c) VALUES (4, 40)", true},
		{"INSERT INTO t VALUES (5, 'z')", true},
		{"UPDATE t SET b = 'w' WHERE a = 3", false},
		{"UPDATE t SET b = b || a::text", false},
		{"UPDATE t SET a = 6", true},
		{"UPDATE t SET b = 'v' WHERE c IS NULL", true},
		{"INSERT INTO t (a) VALUES (7) RETURNING c", true},
		{"DELETE FROM t", true},
	}
	for _, c := range cases {
		if c.denied {
			wantCode(t, alice, c.sql, sqlerr.InsufficientPrivilege)
		} else {
			run(t, alice, c.sql)
		}
	}
	wantRows(t, admin, "SELECT attname, attacl FROM pg_attribute a JOIN pg_class c ON a.attrelid = c.oid WHERE c.relname = 't' AND attnum > 0 ORDER BY attnum",
		"a,{grp=ar/admin}", "b,{grp=rw/admin}", "c,NULL")
	// A relation-level revoke revokes on the columns as well.
	run(t, admin, "REVOKE SELECT, UPDATE ON t FROM grp")
	wantRows(t, admin, "SELECT attname, attacl FROM pg_attribute a JOIN pg_class c ON a.attrelid = c.oid WHERE c.relname = 't' AND attnum > 0 ORDER BY attnum",
		"a,{grp=a/admin}", "b,NULL", "c,NULL")
	wantCode(t, alice, "SELECT count(*) FROM t", sqlerr.InsufficientPrivilege)
	wantCode(t, alice, "UPDATE t SET b = 'u'", sqlerr.InsufficientPrivilege)
	run(t, alice, "INSERT INTO t (a) VALUES (8)")
	// The column grant keeps the group from being dropped, with
	// PostgreSQL's DETAIL.
	_, err := admin.ExecuteSQL(context.Background(), "DROP ROLE grp")
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.DependentObjectsStillExist || !strings.Contains(se.Detail, "privileges for column a of table t\n") {
		t.Fatalf("DROP ROLE grp: %v (%+v)", err, se)
	}
	// Dropping the table drops its column grants, so the group drops.
	run(t, admin, "DROP VIEW v; DROP TABLE t; DROP TABLE u; DROP ROLE alice; DROP ROLE grp")
}
