package catalog

import (
	"strconv"
	"strings"
)

// Column privileges are grants like any other, on an object naming one
// column of an item: "item:<id>#<attnum>" (attnum from 1, PostgreSQL's,
// which RENAME COLUMN keeps and ADD COLUMN extends). They live in the
// grants bucket beside the item's own grants, so a data directory written
// before column privileges existed opens unchanged.

// ColumnObject names column attnum of item id as the object of a grant.
func ColumnObject(id uint64, attnum int) string {
	return ItemObject(id) + "#" + strconv.Itoa(attnum)
}

// dropColumnGrantsOf removes the grants on every column of item id.
func (t *Tx) dropColumnGrantsOf(id uint64) error {
	b := t.tx.Bucket(bucketGrants)
	prefix := ItemObject(id) + "#"
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek([]byte(prefix)); k != nil && strings.HasPrefix(string(k), prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
