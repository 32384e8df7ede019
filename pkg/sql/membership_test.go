package sql_test

import (
	"context"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestMembershipOnEveryReadPath: SELECT granted to a group reaches its
// members (through a chain of groups) on the fast path, on a one-shot
// dataflow and in SUBSCRIBE, and through a view read; a non-member, a
// NOINHERIT member (until SET ROLE) and a revoked member get 42501 on
// every one of them.
func TestMembershipOnEveryReadPath(t *testing.T) {
	f := sqltest.New()
	e := sql.NewEngine(f)
	admin := e.NewSession("admin") // no catalog role: a superuser
	run(t, admin, `CREATE TABLE t (k int, v text);
		INSERT INTO t VALUES (1, 'a'), (2, 'b');
		CREATE INDEX t_k ON t (k);
		CREATE VIEW tv AS SELECT k FROM t;
		CREATE ROLE readers; CREATE ROLE team;
		CREATE ROLE alice LOGIN; CREATE ROLE bob LOGIN; CREATE ROLE carol LOGIN NOINHERIT;
		GRANT SELECT ON t, tv TO readers;
		GRANT readers TO team;
		GRANT team TO alice;
		GRANT readers TO carol`)
	paths := []struct {
		name, query, peek string
	}{
		{"fast path", "SELECT v FROM t WHERE k = 2", "index"},
		{"one-shot dataflow", "SELECT count(*) FROM t", "dataflow"},
		{"view", "SELECT count(*) FROM tv", "dataflow"},
	}
	canRead := func(s *sql.Session) {
		t.Helper()
		for _, p := range paths {
			before := f.PeekCount(p.peek)
			run(t, s, p.query)
			if f.PeekCount(p.peek) != before+1 {
				t.Fatalf("%s: %q did not peek by %s", p.name, p.query, p.peek)
			}
		}
		run(t, s, "BEGIN; DECLARE c CURSOR FOR SUBSCRIBE (SELECT k FROM t)")
		if got := run(t, s, "FETCH ALL c"); len(got) != 2 {
			t.Fatalf("SUBSCRIBE snapshot = %q", got)
		}
		run(t, s, "COMMIT")
	}
	cannotRead := func(s *sql.Session) {
		t.Helper()
		for _, p := range paths {
			wantCode(t, s, p.query, sqlerr.InsufficientPrivilege)
		}
		wantCode(t, s, "SUBSCRIBE (SELECT k FROM t)", sqlerr.InsufficientPrivilege)
		wantCode(t, s, "BEGIN; DECLARE c CURSOR FOR SUBSCRIBE (SELECT k FROM t)", sqlerr.InsufficientPrivilege)
		run(t, s, "ROLLBACK")
	}
	alice, bob, carol := e.NewSession("alice"), e.NewSession("bob"), e.NewSession("carol")
	canRead(alice)
	cannotRead(bob)
	// NOINHERIT: carol is a member but uses the group's privileges only
	// as the group.
	cannotRead(carol)
	run(t, carol, "SET ROLE readers")
	canRead(carol)
	wantRows(t, carol, "SELECT current_user, session_user", "readers,carol")
	run(t, carol, "RESET ROLE")
	wantRows(t, carol, "SELECT current_user, session_user", "carol,carol")
	// bob is no member: SET ROLE is refused.
	wantCode(t, bob, "SET ROLE readers", sqlerr.InsufficientPrivilege)

	run(t, admin, "REVOKE team FROM alice")
	cannotRead(alice)
	run(t, admin, "GRANT readers TO bob")
	canRead(bob)
	run(t, admin, "ALTER ROLE bob NOINHERIT")
	cannotRead(bob)
}

// TestMembershipOwnership: a member of an object's owner role acts as the
// owner (ALTER, GRANT, DROP); others get 42501; DROP ROLE of a group
// removes its memberships, and of the owner is 2BP01.
func TestMembershipOwnership(t *testing.T) {
	f := sqltest.New()
	e := sql.NewEngine(f)
	admin := e.NewSession("admin")
	run(t, admin, `CREATE ROLE owners; CREATE ROLE dev LOGIN; CREATE ROLE other LOGIN;
		GRANT CREATE ON SCHEMA public TO owners;
		GRANT owners TO dev`)
	dev, other := e.NewSession("dev"), e.NewSession("other")
	run(t, dev, "SET ROLE owners; CREATE TABLE owned (a int); RESET ROLE")
	run(t, dev, "ALTER TABLE owned ADD COLUMN b int")
	run(t, dev, "GRANT SELECT ON owned TO other")
	run(t, other, "SELECT * FROM owned")
	wantCode(t, other, "ALTER TABLE owned ADD COLUMN c int", sqlerr.InsufficientPrivilege)
	wantCode(t, other, "DROP TABLE owned", sqlerr.InsufficientPrivilege)
	wantCode(t, admin, "DROP ROLE owners", sqlerr.DependentObjectsStillExist)
	run(t, dev, "DROP TABLE owned")
	run(t, admin, "REVOKE CREATE ON SCHEMA public FROM owners; DROP ROLE owners")
	wantRows(t, admin, "SELECT count(*) FROM pg_auth_members", "0")
	wantCode(t, dev, "SET ROLE owners", sqlerr.UndefinedObject)
}

// TestGrantRoleRules: who may grant membership, cycles, and what
// pg_auth_members and pg_roles show (the SQLSTATEs are PostgreSQL 15's,
// checked by testdata/roles_membership.slt).
func TestGrantRoleRules(t *testing.T) {
	f := sqltest.New()
	e := sql.NewEngine(f)
	admin := e.NewSession("admin")
	run(t, admin, `CREATE ROLE g; CREATE ROLE a LOGIN; CREATE ROLE b NOINHERIT;
		CREATE ROLE c IN ROLE g ROLE a ADMIN b`)
	wantRows(t, admin, `SELECT r.rolname, m.rolname, am.admin_option FROM pg_auth_members am
		JOIN pg_roles r ON r.oid = am.roleid JOIN pg_roles m ON m.oid = am.member ORDER BY 1, 2`,
		"c,a,f", "c,b,t", "g,c,f")
	wantRows(t, admin, "SELECT rolname, rolinherit FROM pg_roles ORDER BY 1", "a,t", "b,f", "c,t", "g,t")
	a := e.NewSession("a")
	for _, tc := range []struct {
		s          *sql.Session
		stmt, code string
	}{
		{admin, "GRANT c TO g", sqlerr.InvalidGrantOperation},
		{admin, "GRANT g TO g", sqlerr.InvalidGrantOperation},
		{admin, "GRANT g TO a, a", ""},
		{admin, "GRANT nosuch TO a", sqlerr.UndefinedObject},
		{admin, "GRANT g TO nosuch", sqlerr.UndefinedObject},
		{admin, "GRANT g TO PUBLIC", sqlerr.UndefinedObject},
		{admin, "GRANT g TO a WITH INHERIT TRUE", sqlerr.SyntaxError},
		{admin, "CREATE ROLE x ROLE x", sqlerr.InvalidGrantOperation},
		{admin, "CREATE ROLE y IN ROLE nosuch", sqlerr.UndefinedObject},
		{a, "GRANT g TO b", sqlerr.InsufficientPrivilege},
		{a, "GRANT g TO b GRANTED BY c", sqlerr.InsufficientPrivilege},
		{admin, "GRANT g TO a WITH ADMIN OPTION", ""},
		{a, "GRANT g TO b", ""},
		{a, "REVOKE g FROM b", ""},
		{a, "REVOKE g FROM b", ""}, // not a member: PostgreSQL's WARNING
		{admin, "REVOKE ADMIN OPTION FOR g FROM a", ""},
		{a, "GRANT g TO b", sqlerr.InsufficientPrivilege},
		{a, "REVOKE g FROM a", sqlerr.InsufficientPrivilege},
	} {
		if tc.code == "" {
			run(t, tc.s, tc.stmt)
			continue
		}
		wantCode(t, tc.s, tc.stmt, tc.code)
	}
	// The refused CREATE ROLEs left nothing behind.
	wantRows(t, admin, "SELECT count(*) FROM pg_roles WHERE rolname IN ('x', 'y')", "0")
	wantRows(t, admin, "SELECT count(*) FROM pg_auth_members WHERE admin_option", "1")
	if gs, err := f.Grants(context.Background()); err != nil || len(gs) != 5 {
		// cluster:default for PUBLIC, and c<-a, c<-b, g<-c, g<-a.
		t.Fatalf("grants = %+v, %v", gs, err)
	}
}

// TestSetRoleToDroppedRole: a session acting as a role dropped since its
// SET ROLE is refused everything (it would otherwise count as a role the
// front door trusts: a superuser) until RESET ROLE; one whose login role
// is dropped is refused for good.
func TestSetRoleToDroppedRole(t *testing.T) {
	f := sqltest.New()
	e := sql.NewEngine(f)
	admin := e.NewSession("admin")
	run(t, admin, "CREATE ROLE app LOGIN; CREATE ROLE helper; GRANT helper TO app; CREATE TABLE secret (a int)")
	app := e.NewSession("app")
	run(t, app, "SET ROLE helper")
	wantCode(t, app, "SELECT * FROM secret", sqlerr.InsufficientPrivilege)
	run(t, admin, "DROP ROLE helper")
	for _, stmt := range []string{"SELECT * FROM secret", "CREATE ROLE x", "DROP TABLE secret", "SET ROLE app"} {
		wantCode(t, app, stmt, sqlerr.InsufficientPrivilege)
	}
	run(t, app, "RESET ROLE")
	wantCode(t, app, "SELECT * FROM secret", sqlerr.InsufficientPrivilege)
	wantRows(t, app, "SELECT current_user", "app")
	// The role the session logged in as is dropped: refused too.
	run(t, admin, "DROP ROLE app")
	wantCode(t, app, "SELECT * FROM secret", sqlerr.InsufficientPrivilege)
	wantCode(t, app, "RESET ROLE; SELECT * FROM secret", sqlerr.InsufficientPrivilege)
}
