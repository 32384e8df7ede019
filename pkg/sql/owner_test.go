package sql_test

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestAlterOwner: OWNER TO moves a table with its indexes to the new
// owner, who then holds every privilege and may drop it while the old
// owner may not; the checks for non-superusers are PostgreSQL's (checked
// by testdata/ownership.slt).
func TestAlterOwner(t *testing.T) {
	f := sqltest.New()
	e := sql.NewEngine(f)
	admin := e.NewSession("admin")
	run(t, admin, `CREATE ROLE a LOGIN; CREATE ROLE b LOGIN; CREATE ROLE c;
		GRANT CREATE ON SCHEMA public TO a, b;
		CREATE TABLE t (k int); CREATE INDEX t_k ON t (k); INSERT INTO t VALUES (1)`)
	wantRows(t, admin, "SELECT relname, pg_get_userbyid(relowner) FROM pg_class ORDER BY 1", "t,admin", "t_k,admin")
	run(t, admin, "ALTER TABLE t OWNER TO a")
	wantRows(t, admin, "SELECT relname, pg_get_userbyid(relowner) FROM pg_class ORDER BY 1", "t,a", "t_k,a")
	a, b := e.NewSession("a"), e.NewSession("b")
	wantRows(t, a, "SELECT k FROM t", "1")
	wantCode(t, b, "SELECT k FROM t", sqlerr.InsufficientPrivilege)
	for _, tc := range []struct {
		s          *sql.Session
		stmt, code string
	}{
		{a, "ALTER TABLE t OWNER TO b", sqlerr.InsufficientPrivilege}, // a is no member of b
		{b, "ALTER TABLE t OWNER TO b", sqlerr.InsufficientPrivilege}, // b is not the owner
		{admin, "ALTER INDEX t OWNER TO b", sqlerr.WrongObjectType},
		{admin, "ALTER VIEW t OWNER TO b", sqlerr.WrongObjectType},
		{admin, "ALTER TABLE t OWNER TO nobody", sqlerr.UndefinedObject},
		{admin, "ALTER TABLE nothing OWNER TO b", sqlerr.UndefinedTable},
		{admin, "REASSIGN OWNED BY nobody TO b", sqlerr.UndefinedObject},
		{b, "REASSIGN OWNED BY a TO b", sqlerr.InsufficientPrivilege},
		{b, "DROP OWNED BY a", sqlerr.InsufficientPrivilege},
		{admin, "DROP ROLE a", sqlerr.DependentObjectsStillExist},
	} {
		wantCode(t, tc.s, tc.stmt, tc.code)
	}
	run(t, admin, "GRANT b TO a")
	run(t, a, "ALTER TABLE t OWNER TO b")
	run(t, admin, "REVOKE b FROM a")
	wantCode(t, a, "DROP TABLE t", sqlerr.InsufficientPrivilege)
	wantRows(t, b, "SELECT k FROM t", "1")
	// An index follows its table: ALTER INDEX changes nothing.
	run(t, admin, "ALTER INDEX t_k OWNER TO c")
	wantRows(t, admin, "SELECT relname, pg_get_userbyid(relowner) FROM pg_class ORDER BY 1", "t,b", "t_k,b")
	run(t, admin, "REASSIGN OWNED BY b TO c")
	wantRows(t, admin, "SELECT relname, pg_get_userbyid(relowner) FROM pg_class ORDER BY 1", "t,c", "t_k,c")
	run(t, admin, "GRANT SELECT ON t TO a; CREATE TABLE u (x int); GRANT SELECT ON u TO c")
	run(t, admin, "DROP OWNED BY c")
	wantRows(t, admin, "SELECT relname FROM pg_class ORDER BY 1", "u")
	// The grant to c on u went with DROP OWNED; c can be dropped.
	run(t, admin, "DROP ROLE c")
}
