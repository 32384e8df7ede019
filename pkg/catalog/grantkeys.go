package catalog

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// The grants bucket's keys. NUL cannot appear in an identifier, so it
// separates unambiguously:
//
//   - version 2: object NUL grantee NUL grantor, one grant per grantor
//     as PostgreSQL keeps its ACL entries; a membership (a grant on a
//     role) is object NUL grantee, one per member whoever granted it.
//   - version 1 had object NUL grantee for every grant: migrateGrantKeys
//     rewrites such keys when the catalog is opened, a grant without a
//     grantor becoming its item's owner's, and the owner's own entry
//     holding every privilege (as the owner did in version 1).

// ownerLetters are every privilege of a relation (PostgreSQL's ACL
// letters): what an item's owner held in version 1.
const ownerLetters = "arwdDxt"

// grantKey is g's key in the grants bucket.
func grantKey(g Grant) []byte {
	if strings.HasPrefix(g.Object, "role:") {
		return []byte(g.Object + "\x00" + g.Grantee)
	}
	return []byte(g.Object + "\x00" + g.Grantee + "\x00" + g.Grantor)
}

// migrateGrantKeys rewrites the grants of a version 1 catalog under
// version 2 keys, in the caller's transaction. A grant on an item (or one
// of its columns) without a grantor gets the item's owner as grantor.
func migrateGrantKeys(tx *bolt.Tx) error {
	b := tx.Bucket(bucketGrants)
	var old []Grant
	var keys [][]byte
	err := b.ForEach(func(k, v []byte) error {
		var g Grant
		if err := json.Unmarshal(v, &g); err != nil {
			return fmt.Errorf("decode grant %q: %w", k, err)
		}
		old = append(old, g)
		keys = append(keys, append([]byte(nil), k...))
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	items := tx.Bucket(bucketItems)
	for _, g := range old {
		owner := itemOwner(items, g.Object)
		if g.Grantor == "" {
			g.Grantor = owner
		}
		if owner != "" && g.Grantee == owner && g.Grantor == owner && !strings.Contains(g.Object, "#") {
			// In version 1 an item's owner held every privilege whatever
			// its entry said; from version 2 on it holds what its entry
			// says.
			g.Privileges = ownerLetters
		}
		if err := putJSON(b, grantKey(g), g); err != nil {
			return fmt.Errorf("migrate grant on %s: %w", g.Object, err)
		}
	}
	return nil
}

// itemOwner returns the owner of the item a grant's object names ("item:<id>"
// or a column "item:<id>#<attnum>"), "" for other objects and missing items.
func itemOwner(items *bolt.Bucket, object string) string {
	rest, ok := strings.CutPrefix(object, "item:")
	if !ok {
		return ""
	}
	rest, _, _ = strings.Cut(rest, "#")
	id, err := strconv.ParseUint(rest, 10, 64)
	if err != nil {
		return ""
	}
	v := items.Get(u64(id))
	if v == nil {
		return ""
	}
	var it Item
	if json.Unmarshal(v, &it) != nil {
		return ""
	}
	return it.Owner
}
