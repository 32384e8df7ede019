package catalog

import (
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// writeV1 writes a version 1 catalog by hand: an item owned by o, its
// grants under object NUL grantee keys (one without a grantor, as stored
// before grantors were kept), a cluster grant and a membership.
func writeV1(t *testing.T, dir string) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketClusters, bucketReplicas, bucketItems, bucketNames, bucketParams, bucketRoles, bucketGrants} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(keyVersion, u64(1)); err != nil {
			return err
		}
		if err := meta.Put(keyNextUserID, u64(8)); err != nil {
			return err
		}
		if err := putJSON(tx.Bucket(bucketItems), u64(7), Item{ID: 7, Name: "t", Kind: KindTable, Owner: "o"}); err != nil {
			return err
		}
		for _, r := range []string{"o", "a", "g"} {
			if err := putJSON(tx.Bucket(bucketRoles), []byte(r), Role{Name: r}); err != nil {
				return err
			}
		}
		for _, g := range []Grant{
			{Object: ItemObject(7), Grantee: "a", Privileges: "r"},
			{Object: ItemObject(7), Grantee: "o", Privileges: "r", Grantor: "o", Seq: 0},
			{Object: ColumnObject(7, 1), Grantee: "a", Privileges: "w"},
			{Object: ClusterObject("default"), Privileges: "U"},
			{Object: RoleObject("g"), Grantee: "a", Privileges: "m", Grantor: "o"},
		} {
			v, err := json.Marshal(g)
			if err != nil {
				return err
			}
			if err := tx.Bucket(bucketGrants).Put([]byte(g.Object+"\x00"+g.Grantee), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpenMigratesGrantKeys: a version 1 data directory opens with its
// grants keyed by grantor, a grant without a grantor read back as its
// item's owner's, the owner's own entry holding every privilege (as the
// owner did in version 1); the owner's later change of the same grant replaces it
// (no second entry), another grantor's is a second entry, and the catalog
// is version 2 across a reopen.
func TestOpenMigratesGrantKeys(t *testing.T) {
	dir := t.TempDir()
	writeV1(t, dir)
	c := mustOpen(t, dir)
	want := []string{
		"cluster:default  U /",
		"item:7 a r /o",
		"item:7 o arwdDxt /o",
		"item:7#1 a w /o",
		"role:g a m /o",
	}
	if got := grantLines(t, c); !slices.Equal(got, want) {
		t.Fatalf("grants after upgrade:\n%q\nwant\n%q", got, want)
	}
	err := c.Update(func(tx *Tx) error {
		if err := tx.SetGrant(Grant{Object: ItemObject(7), Grantee: "a", Privileges: "ar", Grantor: "o"}); err != nil {
			return err
		}
		if err := tx.SetGrant(Grant{Object: ItemObject(7), Grantee: "a", Privileges: "r", Grantor: "g"}); err != nil {
			return err
		}
		// The owner's own entry kept without privileges.
		return tx.SetGrant(Grant{Object: ItemObject(7), Grantee: "o", Grantor: "o", Keep: true})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir)
	defer c.Close()
	want = []string{
		"cluster:default  U /",
		"item:7 a ar /o",
		"item:7 a r /g",
		"item:7 o  /o",
		"item:7#1 a w /o",
		"role:g a m /o",
	}
	if got := grantLines(t, c); !slices.Equal(got, want) {
		t.Fatalf("grants after changes and a reopen:\n%q\nwant\n%q", got, want)
	}
	var version uint64
	if err := c.db.View(func(tx *bolt.Tx) error {
		version = binary.BigEndian.Uint64(tx.Bucket(bucketMeta).Get(keyVersion))
		return nil
	}); err != nil || version != schemaVersion {
		t.Fatalf("version %d (%v), want %d", version, err, schemaVersion)
	}
	// A grantor holds on to its role: g granted on t.
	if err := c.Update(func(tx *Tx) error { return tx.DropRole("g") }); err == nil {
		t.Fatal("dropped a role that granted privileges")
	}
}

func grantLines(t *testing.T, c *Catalog) []string {
	t.Helper()
	gs, err := c.Grants()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range gs {
		out = append(out, g.Object+" "+g.Grantee+" "+g.Privileges+" /"+g.Grantor)
	}
	slices.Sort(out)
	return out
}
