package catalog

import (
	"slices"
	"testing"
)

// TestDropItemDropsColumnGrants: dropping an item removes the grants on
// its columns, and only its: another item's (whose id shares the prefix)
// stay.
func TestDropItemDropsColumnGrants(t *testing.T) {
	c := mustOpen(t, t.TempDir())
	defer c.Close()
	err := c.Update(func(tx *Tx) error {
		if err := tx.CreateRole(Role{Name: "r"}); err != nil {
			return err
		}
		for _, it := range []Item{{ID: 1, Name: "t1", Kind: KindTable}, {ID: 10, Name: "t10", Kind: KindTable}} {
			if err := tx.CreateItem(it); err != nil {
				return err
			}
		}
		for _, g := range []Grant{
			{Object: ItemObject(1), Grantee: "r", Privileges: "r"},
			{Object: ColumnObject(1, 1), Grantee: "r", Privileges: "a"},
			{Object: ColumnObject(1, 2), Grantee: "", Privileges: "r"},
			{Object: ColumnObject(10, 1), Grantee: "r", Privileges: "w"},
		} {
			if err := tx.SetGrant(g); err != nil {
				return err
			}
		}
		return tx.DropItem(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := c.Grants()
	if err != nil {
		t.Fatal(err)
	}
	var objects []string
	for _, g := range gs {
		objects = append(objects, g.Object)
	}
	if want := []string{"item:10#1"}; !slices.Equal(objects, want) {
		t.Fatalf("grants after drop: %q, want %q", objects, want)
	}
}
