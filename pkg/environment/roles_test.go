package environment

import (
	"context"
	"testing"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// rolesOnly is an environment over a catalog alone: roles and grants need
// nothing else.
func rolesOnly(t *testing.T, dir, superuser string) (*Environment, func()) {
	t.Helper()
	cat, err := catalog.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := &Environment{cfg: Config{Catalog: cat, Superuser: superuser}}
	if err := e.ensureSuperuser(); err != nil {
		t.Fatal(err)
	}
	return e, func() { cat.Close() }
}

// TestRolesSurviveRestart: roles and grants are in the catalog across a
// restart; the bootstrap superuser is (re)made SUPERUSER LOGIN at every
// start; relation grants travel as the SQL layer names them.
func TestRolesSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, closeCat := rolesOnly(t, dir, "tandem")
	if err := e.CreateRole(ctx, sql.Role{Name: "bob", Login: true, Password: "SCRAM-SHA-256$4096:c2FsdA==$k:k"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateRole(ctx, sql.Role{Name: "bob"}, nil); sqlerr.Code(err) != sqlerr.DuplicateObject {
		t.Fatalf("duplicate: %v", err)
	}
	if err := e.AlterRole(ctx, sql.Role{Name: "tandem"}); err != nil { // demoted
		t.Fatal(err)
	}
	rel := "relation:" + plan.User(7).String()
	if err := e.SetGrants(ctx, []sql.Grant{{Object: rel, Grantee: "bob", Privileges: "ra"}}); err != nil {
		t.Fatal(err)
	}
	closeCat()

	e, closeCat = rolesOnly(t, dir, "tandem")
	defer closeCat()
	roles, err := e.Roles(ctx)
	if err != nil || len(roles) != 2 {
		t.Fatalf("roles: %+v, %v", roles, err)
	}
	if r := roles[0]; r.Name != "bob" || !r.Login || r.Password == "" {
		t.Fatalf("bob after restart: %+v", r)
	}
	if r := roles[1]; r.Name != "tandem" || !r.Superuser || !r.Login {
		t.Fatalf("bootstrap superuser after restart: %+v", r)
	}
	gs, err := e.Grants(ctx)
	if err != nil || len(gs) != 1 || gs[0].Object != rel || gs[0].Privileges != "ra" {
		t.Fatalf("grants: %+v, %v", gs, err)
	}
	if err := e.DropRole(ctx, "bob"); sqlerr.Code(err) != sqlerr.DependentObjectsStillExist {
		t.Fatalf("drop a role holding grants: %v", err)
	}
	if err := e.DropRole(ctx, "nobody"); sqlerr.Code(err) != sqlerr.UndefinedObject {
		t.Fatalf("drop a missing role: %v", err)
	}
	if err := e.AlterRole(ctx, sql.Role{Name: "nobody"}); sqlerr.Code(err) != sqlerr.UndefinedObject {
		t.Fatalf("alter a missing role: %v", err)
	}
}
