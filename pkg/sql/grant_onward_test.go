package sql_test

import (
	"context"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql"
)

// TestGrantOnwardCascade: a chain of grants made with grant options
// (o to a to b to c), the circularity check (0LP01), a grantee holding
// SELECT from two grantors keeping one after the other's revoke, and
// REVOKE ... CASCADE taking the chain (checked against PostgreSQL by
// testdata/grant_onward.slt).
func TestGrantOnwardCascade(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, `CREATE ROLE o; CREATE ROLE a; CREATE ROLE b; CREATE ROLE c;
		CREATE TABLE t (x int); INSERT INTO t VALUES (1); ALTER TABLE t OWNER TO o;
		GRANT SELECT ON t TO a WITH GRANT OPTION;
		SET ROLE a; GRANT SELECT ON t TO b WITH GRANT OPTION;
		SET ROLE b; GRANT SELECT ON t TO c; RESET ROLE`)
	wantRows(t, s, relacl, "{o=arwdDxt/o,a=r*/o,b=r*/a,c=r/b}")
	run(t, s, "SET ROLE b")
	wantCode(t, s, "GRANT SELECT ON t TO a WITH GRANT OPTION", "0LP01")
	run(t, s, "RESET ROLE; GRANT SELECT ON t TO c; SET ROLE c")
	wantRows(t, s, "SELECT x FROM t", "1")
	run(t, s, "RESET ROLE")
	wantCode(t, s, "REVOKE SELECT ON t FROM a", "2BP01")
	wantRows(t, s, relacl, "{o=arwdDxt/o,a=r*/o,b=r*/a,c=r/b,c=r/o}")
	run(t, s, "REVOKE SELECT ON t FROM a CASCADE")
	wantRows(t, s, relacl, "{o=arwdDxt/o,c=r/o}")
	run(t, s, "SET ROLE c")
	wantRows(t, s, "SELECT x FROM t", "1")
	run(t, s, "RESET ROLE; REVOKE SELECT ON t FROM c; SET ROLE c")
	wantCode(t, s, "SELECT x FROM t", "42501")
	run(t, s, "RESET ROLE")
	// Roles that granted nothing and hold nothing drop.
	run(t, s, "DROP ROLE a, b, c")
}

// TestRevokeFromOwner: REVOKE from the owner removes its letters (it then
// reads nothing, though it still grants), REVOKE ALL removes its entry,
// and granting itself SELECT again puts its entry last.
func TestRevokeFromOwner(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, `CREATE ROLE o; CREATE ROLE a; CREATE TABLE t (x int); INSERT INTO t VALUES (1);
		ALTER TABLE t OWNER TO o; SET ROLE o; REVOKE SELECT ON t FROM o`)
	wantRows(t, s, relacl, "{o=awdDxt/o}")
	wantCode(t, s, "SELECT x FROM t", "42501")
	run(t, s, "GRANT SELECT ON t TO a; REVOKE ALL ON t FROM o")
	wantRows(t, s, relacl, "{a=r/o}")
	wantCode(t, s, "INSERT INTO t VALUES (2)", "42501")
	run(t, s, "GRANT SELECT ON t TO o")
	wantRows(t, s, relacl, "{a=r/o,o=r/o}")
	wantRows(t, s, "SELECT x FROM t", "1")
}

// TestPrivilegeViews: information_schema.table_privileges and
// column_privileges list each entry's privileges, and a role sees only
// rows whose grantor or grantee it holds the privileges of, or PUBLIC's.
func TestPrivilegeViews(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, `CREATE ROLE o; CREATE ROLE a; CREATE ROLE b; CREATE TABLE t (x int, y int);
		ALTER TABLE t OWNER TO o; GRANT SELECT ON t TO a WITH GRANT OPTION; GRANT INSERT (y) ON t TO b;
		GRANT UPDATE ON t TO PUBLIC`)
	const tp = "SELECT grantor, grantee, privilege_type, is_grantable FROM information_schema.table_privileges WHERE table_name = 't' AND grantee <> 'o' ORDER BY 1, 2, 3"
	const cp = "SELECT grantee, column_name, privilege_type, is_grantable FROM information_schema.column_privileges WHERE table_name = 't' AND grantee <> 'o' ORDER BY 1, 2, 3"
	wantRows(t, s, tp, "o,PUBLIC,UPDATE,NO", "o,a,SELECT,YES")
	wantRows(t, s, cp, "PUBLIC,x,UPDATE,NO", "PUBLIC,y,UPDATE,NO", "a,x,SELECT,YES", "a,y,SELECT,YES", "b,y,INSERT,NO")
	run(t, s, "SET ROLE b")
	wantRows(t, s, tp, "o,PUBLIC,UPDATE,NO")
	wantRows(t, s, cp, "PUBLIC,x,UPDATE,NO", "PUBLIC,y,UPDATE,NO", "b,y,INSERT,NO")
}

// TestACLWithoutOwnerEntry: an ACL stored before owners' entries were
// (grants, none to the owner from itself) gives the owner everything and
// shows its entry first; a REVOKE from the owner then writes the entry
// out and takes the letters from it.
func TestACLWithoutOwnerEntry(t *testing.T) {
	s, f := newSession(t)
	ctx := context.Background()
	run(t, s, `CREATE ROLE o; CREATE ROLE a; CREATE TABLE t (x int); INSERT INTO t VALUES (1);
		ALTER TABLE t OWNER TO o; GRANT SELECT ON t TO a`)
	gs, err := f.Grants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if g.Grantee == "o" && g.Grantor == "o" {
			if err := f.SetGrants(ctx, []sql.Grant{{Object: g.Object, Grantee: "o", Grantor: "o"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	run(t, s, "SET ROLE o")
	wantRows(t, s, relacl, "{o=arwdDxt/o,a=r/o}")
	wantRows(t, s, "SELECT x FROM t", "1")
	run(t, s, "REVOKE SELECT ON t FROM o")
	wantRows(t, s, relacl, "{o=awdDxt/o,a=r/o}")
	wantCode(t, s, "SELECT x FROM t", "42501")
}
