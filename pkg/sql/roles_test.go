package sql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/scram"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestRoleStatements: CREATE ROLE / USER, ALTER ROLE and DROP ROLE with
// PostgreSQL's SQLSTATEs (checked against PostgreSQL 15), the password
// stored as a SCRAM verifier and never as itself.
func TestRoleStatements(t *testing.T) {
	f := sqltest.New()
	e := sql.NewEngine(f)
	admin := e.NewSession("admin") // no catalog role: trusted as a superuser
	run(t, admin, `CREATE ROLE r1 WITH LOGIN PASSWORD 'secret';
		CREATE USER u1 PASSWORD 'pw';
		CREATE ROLE nologin;
		CREATE ROLE boss SUPERUSER`)
	for _, tc := range []struct{ stmt, code string }{
		{"CREATE ROLE r1", sqlerr.DuplicateObject},
		{"CREATE ROLE pg_x", sqlerr.ReservedName},
		{"CREATE ROLE r5 LOGIN LOGIN", sqlerr.SyntaxError},
		{"CREATE ROLE r6 CREATEDB", sqlerr.FeatureNotSupported},
		{"DROP ROLE nosuch", sqlerr.UndefinedObject},
		{"ALTER ROLE nosuch LOGIN", sqlerr.UndefinedObject},
		{"ALTER ROLE r1 PASSWORD 'SCRAM-SHA-256$bad'", sqlerr.InvalidParameterValue},
	} {
		wantCode(t, admin, tc.stmt, tc.code)
	}
	roles, err := f.Roles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]sql.Role{}
	for _, r := range roles {
		got[r.Name] = r
		if strings.Contains(r.Password, "secret") || strings.Contains(r.Password, "pw") && !scram.IsVerifier(r.Password) {
			t.Fatalf("role %s stores %q", r.Name, r.Password)
		}
	}
	if r := got["r1"]; !r.Login || r.Superuser || !scram.IsVerifier(r.Password) {
		t.Fatalf("r1 = %+v", r)
	}
	if r := got["u1"]; !r.Login || !scram.IsVerifier(r.Password) {
		t.Fatalf("CREATE USER makes a LOGIN role: %+v", r)
	}
	if r := got["nologin"]; r.Login || r.Password != "" {
		t.Fatalf("nologin = %+v", r)
	}
	wantRows(t, admin, "SELECT rolname, rolsuper, rolcanlogin, rolpassword FROM pg_roles ORDER BY 1",
		"boss,t,f,NULL", "nologin,f,f,NULL", "r1,f,t,********", "u1,f,t,********")
	wantRows(t, admin, "SELECT usename FROM pg_user ORDER BY 1", "r1", "u1")

	// A role that is not a superuser: no CREATE/DROP ROLE, no attribute
	// changes, no pg_authid; its own password it may change.
	r1 := e.NewSession("r1")
	for _, stmt := range []string{"CREATE ROLE r7", "DROP ROLE u1", "ALTER ROLE u1 PASSWORD 'x'", "ALTER ROLE r1 LOGIN",
		"ALTER ROLE r1 SUPERUSER", "ALTER ROLE boss PASSWORD 'x'", "SELECT * FROM pg_authid"} {
		wantCode(t, r1, stmt, sqlerr.InsufficientPrivilege)
	}
	before := got["r1"].Password
	run(t, r1, "ALTER ROLE r1 PASSWORD 'new'")
	run(t, admin, "ALTER ROLE r1 NOLOGIN")
	roles, _ = f.Roles(context.Background())
	for _, r := range roles {
		if r.Name == "r1" && (r.Password == before || r.Login) {
			t.Fatalf("r1 after ALTER ROLE: %+v", r)
		}
	}
	// A verifier given as the password is stored as it is, as PostgreSQL
	// does; NULL and '' clear the password.
	v, _ := scram.NewVerifier("z")
	run(t, admin, "ALTER ROLE u1 PASSWORD '"+v.String()+"'")
	wantRows(t, admin, "SELECT rolpassword = '"+v.String()+"' FROM pg_authid WHERE rolname = 'u1'", "t")
	run(t, admin, "ALTER ROLE u1 PASSWORD NULL; CREATE ROLE r8 PASSWORD ''")
	wantRows(t, admin, "SELECT rolname FROM pg_authid WHERE rolpassword IS NULL ORDER BY 1", "boss", "nologin", "r8", "u1")

	// DROP ROLE: a role owning an object is kept (2BP01), IF EXISTS skips
	// the missing, the current user cannot drop itself.
	boss := e.NewSession("boss")
	run(t, admin, "CREATE ROLE owner1; CREATE TABLE t (a int)")
	wantCode(t, boss, "DROP ROLE boss", sqlerr.ObjectInUse)
	run(t, boss, "DROP ROLE IF EXISTS nosuch, r8")
	wantRows(t, admin, "SELECT count(*) FROM pg_roles WHERE rolname = 'r8'", "0")
}

// TestRoleOwnerShown: \dt's owner column names the creating role.
func TestRoleOwnerShown(t *testing.T) {
	f := sqltest.New()
	e := sql.NewEngine(f)
	run(t, e.NewSession("admin"), "CREATE ROLE maker SUPERUSER")
	s := e.NewSession("maker")
	run(t, s, "CREATE TABLE t (a int)")
	wantRows(t, e.NewSession("someone"), "SELECT pg_catalog.pg_get_userbyid(relowner) FROM pg_class WHERE relname = 't'", "maker")
	wantCode(t, e.NewSession("admin"), "DROP ROLE maker", sqlerr.DependentObjectsStillExist)
}
