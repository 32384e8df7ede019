package environment

import (
	"context"
	"fmt"
	"slices"
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

// TestGrantorsSurviveRestart: grants on one relation to one grantee from
// two grantors are two grants, a revoke from one grantor leaves the
// other's, and the owner's emptied entry (Keep) stays, across a restart.
func TestGrantorsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, closeCat := rolesOnly(t, dir, "tandem")
	for _, r := range []string{"o", "a", "b"} {
		if err := e.CreateRole(ctx, sql.Role{Name: r}, nil); err != nil {
			t.Fatal(err)
		}
	}
	rel := "relation:" + plan.User(7).String()
	err := e.SetGrants(ctx, []sql.Grant{
		{Object: rel, Grantee: "o", Grantor: "o", Keep: true},
		{Object: rel, Grantee: "a", Grantor: "o", Privileges: "r", Options: "r", Seq: 1},
		{Object: rel, Grantee: "b", Grantor: "o", Privileges: "w", Seq: 2},
		{Object: rel, Grantee: "b", Grantor: "a", Privileges: "r", Seq: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	closeCat()
	e, closeCat = rolesOnly(t, dir, "tandem")
	if err := e.SetGrants(ctx, []sql.Grant{{Object: rel, Grantee: "b", Grantor: "o"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.DropRole(ctx, "a"); sqlerr.Code(err) != sqlerr.DependentObjectsStillExist {
		t.Fatalf("drop a role that granted privileges: %v", err)
	}
	closeCat()
	e, closeCat = rolesOnly(t, dir, "tandem")
	defer closeCat()
	gs, err := e.Grants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range gs {
		if g.Object == rel {
			got = append(got, fmt.Sprintf("%s=%s*%s/%s keep=%v seq=%d", g.Grantee, g.Privileges, g.Options, g.Grantor, g.Keep, g.Seq))
		}
	}
	want := []string{"a=r*r/o keep=false seq=1", "b=r*/a keep=false seq=3", "o=*/o keep=true seq=0"}
	if !slices.Equal(got, want) {
		t.Fatalf("grants after restarts:\n%q\nwant\n%q", got, want)
	}
}

// TestDropOwnedIsOneChange: DROP OWNED's drops and revokes are one catalog
// transaction: when a revoke cannot be stored the items stay, and a
// CREATE ROLE whose membership cannot be stored leaves no role; both
// succeed whole and survive a restart.
func TestDropOwnedIsOneChange(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, closeCat := rolesOnly(t, dir, "tandem")
	var v, u uint64
	err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		if err := tx.CreateRole(catalog.Role{Name: "bob"}); err != nil {
			return err
		}
		var err error
		if v, err = tx.AllocateID(); err != nil {
			return err
		}
		if u, err = tx.AllocateID(); err != nil {
			return err
		}
		if err := tx.CreateItem(catalog.Item{ID: v, Name: "v", Kind: catalog.Kind(sql.KindView), Owner: "bob"}); err != nil {
			return err
		}
		if err := tx.CreateItem(catalog.Item{ID: u, Name: "u", Kind: catalog.Kind(sql.KindView), Owner: "tandem"}); err != nil {
			return err
		}
		return tx.SetGrant(catalog.Grant{Object: catalog.ItemObject(u), Grantee: "bob", Privileges: "r", Grantor: "tandem"})
	})
	if err != nil {
		t.Fatal(err)
	}
	revoke := sql.Grant{Object: "relation:" + plan.User(u).String(), Grantee: "bob", Grantor: "tandem"}
	// A grant the catalog refuses inside the transaction (no object).
	unstorable := sql.Grant{Object: "", Grantee: "bob", Privileges: "r"}
	if err := e.DropOwned(ctx, []plan.GlobalID{plan.User(v)}, []sql.Grant{revoke, unstorable}); err == nil {
		t.Fatal("DROP OWNED with an unstorable revoke succeeded")
	}
	if err := e.CreateRole(ctx, sql.Role{Name: "carol"}, []sql.Grant{{Object: "role:bob", Grantee: "carol", Privileges: "m"}, unstorable}); err == nil {
		t.Fatal("CREATE ROLE with an unstorable membership succeeded")
	}
	closeCat()
	e, closeCat = rolesOnly(t, dir, "tandem")
	defer func() { closeCat() }()
	items, err := e.cfg.Catalog.Items()
	if err != nil || len(items) != 2 {
		t.Fatalf("items after a failed DROP OWNED: %+v, %v", items, err)
	}
	if gs, err := e.Grants(ctx); err != nil || len(gs) != 1 {
		t.Fatalf("grants after a failed DROP OWNED: %+v, %v", gs, err)
	}
	if rs, err := e.Roles(ctx); err != nil || len(rs) != 2 {
		t.Fatalf("roles after a failed CREATE ROLE: %+v, %v", rs, err)
	}
	if err := e.DropOwned(ctx, []plan.GlobalID{plan.User(v)}, []sql.Grant{revoke}); err != nil {
		t.Fatal(err)
	}
	closeCat()
	e, closeCat = rolesOnly(t, dir, "tandem")
	items, err = e.cfg.Catalog.Items()
	if err != nil || len(items) != 1 || items[0].ID != u {
		t.Fatalf("items after DROP OWNED: %+v, %v", items, err)
	}
	if gs, err := e.Grants(ctx); err != nil || len(gs) != 0 {
		t.Fatalf("grants after DROP OWNED: %+v, %v", gs, err)
	}
}
