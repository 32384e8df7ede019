package catalog

import (
	"errors"
	"testing"
)

// TestRolesAndGrantsSurviveReopen: roles (with their verifiers) and grants
// are durable; dropping an item drops the grants on it; a role that owns an
// item or holds a grant cannot be dropped.
func TestRolesAndGrantsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	c := mustOpen(t, dir)
	var id uint64
	err := c.Update(func(tx *Tx) error {
		for _, r := range []Role{{Name: "alice", Login: true, Password: "SCRAM-SHA-256$4096:c2FsdA==$x:y"}, {Name: "bob"}} {
			if err := tx.CreateRole(r); err != nil {
				return err
			}
		}
		var err error
		if id, err = tx.AllocateID(); err != nil {
			return err
		}
		if err := tx.CreateItem(Item{ID: id, Name: "t", Kind: KindTable, Owner: "alice"}); err != nil {
			return err
		}
		return tx.SetGrant(Grant{Object: ItemObject(id), Grantee: "bob", Privileges: "ar", Options: "r", Grantor: "alice"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Update(func(tx *Tx) error { return tx.CreateRole(Role{Name: "bob"}) }); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate role: %v", err)
	}
	c.Close()
	c = mustOpen(t, dir)
	defer c.Close()
	roles, err := c.Roles()
	if err != nil || len(roles) != 2 || roles[0].Name != "alice" || !roles[0].Login || roles[0].Password == "" || roles[1].Login {
		t.Fatalf("roles after reopen: %+v, %v", roles, err)
	}
	if gs, err := c.Grants(); err != nil || len(gs) != 1 || gs[0].Privileges != "ar" || gs[0].Options != "r" || gs[0].Grantor != "alice" {
		t.Fatalf("grant (with its grant option) after reopen: %+v, %v", gs, err)
	}
	for _, name := range []string{"alice", "bob"} {
		if err := c.Update(func(tx *Tx) error { return tx.DropRole(name) }); !errors.Is(err, ErrInUse) {
			t.Fatalf("drop %s, which owns or holds: %v", name, err)
		}
	}
	if err := c.Update(func(tx *Tx) error { return tx.DropItem(id) }); err != nil {
		t.Fatal(err)
	}
	if gs, err := c.Grants(); err != nil || len(gs) != 0 {
		t.Fatalf("grants after the item's drop: %+v, %v", gs, err)
	}
	for _, name := range []string{"alice", "bob"} {
		if err := c.Update(func(tx *Tx) error { return tx.DropRole(name) }); err != nil {
			t.Fatalf("drop %s: %v", name, err)
		}
	}
	if err := c.Update(func(tx *Tx) error { return tx.DropRole("alice") }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("drop a missing role: %v", err)
	}
}

// TestSetGrantEmptyRemoves: a grant set to no privileges is gone.
func TestSetGrantEmptyRemoves(t *testing.T) {
	c := mustOpen(t, t.TempDir())
	defer c.Close()
	err := c.Update(func(tx *Tx) error {
		if err := tx.SetGrant(Grant{Object: ClusterObject("default"), Grantee: "", Privileges: "U"}); err != nil {
			return err
		}
		return tx.SetGrant(Grant{Object: ClusterObject("default"), Grantee: "", Privileges: ""})
	})
	if gs, _ := c.Grants(); err != nil || len(gs) != 0 {
		t.Fatalf("grants: %+v, %v", gs, err)
	}
}

// TestDropRoleRemovesMemberships: memberships do not keep a role from
// being dropped (as in PostgreSQL); they go with it, whether it is the
// member or the group, and the other roles' memberships stay.
func TestDropRoleRemovesMemberships(t *testing.T) {
	c := mustOpen(t, t.TempDir())
	defer c.Close()
	err := c.Update(func(tx *Tx) error {
		for _, n := range []string{"admins", "alice", "bob"} {
			if err := tx.CreateRole(Role{Name: n, NoInherit: n == "bob"}); err != nil {
				return err
			}
		}
		for _, g := range []Grant{
			{Object: RoleObject("admins"), Grantee: "alice", Privileges: "m"},
			{Object: RoleObject("admins"), Grantee: "bob", Privileges: "m"},
			{Object: RoleObject("alice"), Grantee: "bob", Privileges: "m"},
		} {
			if err := tx.SetGrant(g); err != nil {
				return err
			}
		}
		return tx.DropRole("alice")
	})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := c.Grants()
	if err != nil || len(gs) != 1 || gs[0].Grantee != "bob" || gs[0].Object != RoleObject("admins") {
		t.Fatalf("grants after dropping alice: %+v, %v", gs, err)
	}
	if rs, err := c.Roles(); err != nil || len(rs) != 2 || !rs[1].NoInherit {
		t.Fatalf("roles: %+v, %v", rs, err)
	}
}

// TestSetOwner: SetOwner changes the owner of every item named, only to a
// role that exists, and all or nothing.
func TestSetOwner(t *testing.T) {
	c := mustOpen(t, t.TempDir())
	defer c.Close()
	var ids []uint64
	err := c.Update(func(tx *Tx) error {
		if err := tx.CreateRole(Role{Name: "bob"}); err != nil {
			return err
		}
		for _, n := range []string{"t", "t_i"} {
			id, err := tx.AllocateID()
			if err != nil {
				return err
			}
			ids = append(ids, id)
			if err := tx.CreateItem(Item{ID: id, Name: n, Kind: KindTable, Owner: "alice"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Update(func(tx *Tx) error { return tx.SetOwner(ids, "nobody") }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("set owner to a missing role: %v", err)
	}
	if err := c.Update(func(tx *Tx) error { return tx.SetOwner(append(ids[:1:1], 999), "bob") }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("set owner of a missing item: %v", err)
	}
	_ = c.View(func(tx *Tx) error {
		if it, err := tx.Item(ids[0]); err != nil || it.Owner != "alice" {
			t.Fatalf("a failed SetOwner changed %+v (%v)", it, err)
		}
		return nil
	})
	if err := c.Update(func(tx *Tx) error { return tx.SetOwner(ids, "bob") }); err != nil {
		t.Fatal(err)
	}
	err = c.View(func(tx *Tx) error {
		for _, id := range ids {
			if it, err := tx.Item(id); err != nil || it.Owner != "bob" {
				t.Fatalf("item %d: %+v, %v", id, it, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCreateRoleWithGrantsIsOneChange: CREATE ROLE ... IN ROLE/ROLE/ADMIN
// stores the role and its memberships in one transaction: a grant that
// cannot be stored leaves no role behind (also after a reopen), and the
// stored grants keep their order (Seq).
func TestCreateRoleWithGrantsIsOneChange(t *testing.T) {
	dir := t.TempDir()
	c := mustOpen(t, dir)
	if err := c.Update(func(tx *Tx) error { return tx.CreateRole(Role{Name: "staff"}) }); err != nil {
		t.Fatal(err)
	}
	bad := []Grant{{Object: RoleObject("staff"), Grantee: "bob", Privileges: "m"}, {Object: "", Grantee: "bob", Privileges: "m"}}
	if err := c.Update(func(tx *Tx) error { return tx.CreateRoleWithGrants(Role{Name: "bob"}, bad) }); err == nil {
		t.Fatal("a role with an unstorable membership was created")
	}
	c.Close()
	c = mustOpen(t, dir)
	defer c.Close()
	if rs, err := c.Roles(); err != nil || len(rs) != 1 {
		t.Fatalf("roles after a failed CREATE ROLE: %+v, %v", rs, err)
	}
	if gs, err := c.Grants(); err != nil || len(gs) != 0 {
		t.Fatalf("grants after a failed CREATE ROLE: %+v, %v", gs, err)
	}
	good := []Grant{{Object: RoleObject("staff"), Grantee: "bob", Privileges: "m", Grantor: "admin", Seq: 7}}
	if err := c.Update(func(tx *Tx) error { return tx.CreateRoleWithGrants(Role{Name: "bob"}, good) }); err != nil {
		t.Fatal(err)
	}
	if gs, err := c.Grants(); err != nil || len(gs) != 1 || gs[0] != good[0] {
		t.Fatalf("grants = %+v, %v; want %+v", gs, err, good)
	}
}

// TestGrantStoredBeforeGrantOptions: a grant written before grants had
// grant options (no "options" field) reads back with none and its grantor.
func TestGrantStoredBeforeGrantOptions(t *testing.T) {
	c := mustOpen(t, t.TempDir())
	defer c.Close()
	err := c.Update(func(tx *Tx) error {
		old := `{"object":"cluster:default","grantee":"bob","privileges":"UC","grantor":"alice","seq":2}`
		return tx.tx.Bucket(bucketGrants).Put(grantKey(Grant{Object: ClusterObject("default"), Grantee: "bob", Grantor: "alice"}), []byte(old))
	})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := c.Grants()
	want := Grant{Object: ClusterObject("default"), Grantee: "bob", Privileges: "UC", Grantor: "alice", Seq: 2}
	if err != nil || len(gs) != 1 || gs[0] != want {
		t.Fatalf("old grant: %+v, %v", gs, err)
	}
}
