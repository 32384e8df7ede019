package catalog

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ErrNotFound is returned when a named object does not exist.
var ErrNotFound = errors.New("catalog: not found")

// ErrExists is returned when creating an object whose name is taken.
var ErrExists = errors.New("catalog: already exists")

// FileName is the catalog's file inside the data directory.
const FileName = "catalog.db"

var (
	bucketMeta     = []byte("meta")
	bucketClusters = []byte("clusters")
	bucketReplicas = []byte("replicas")
	bucketItems    = []byte("items")
	bucketNames    = []byte("item_names")
	bucketParams   = []byte("params")
	bucketRoles    = []byte("roles")
	bucketGrants   = []byte("grants")

	keyNextUserID = []byte("next_user_id")
	keyVersion    = []byte("version")
)

// schemaVersion is bumped when the stored layout changes incompatibly;
// Open upgrades an older catalog in place (version 1 to 2: grants keyed
// by grantor, grantkeys.go), and a binary refuses a newer one.
const schemaVersion = 2

// Kind is the kind of a catalog item.
type Kind string

// Item kinds.
const (
	KindSource           Kind = "source"
	KindTable            Kind = "table"
	KindView             Kind = "view"
	KindMaterializedView Kind = "materialized-view"
	KindIndex            Kind = "index"
)

// Cluster is a named set of replicas that all maintain the same dataflows.
type Cluster struct {
	Name string `json:"name"`
}

// Replica is one replica of a cluster.
type Replica struct {
	Cluster     string `json:"cluster"`
	Name        string `json:"name"`
	Processes   int    `json:"processes"`
	Workers     int    `json:"workers"`
	Interactive bool   `json:"interactive,omitempty"`
}

// Item is a source, table, view, materialized view or index.
type Item struct {
	// ID is the user GlobalId number: the item is u<ID>.
	ID   uint64 `json:"id"`
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Cluster is where an index or materialized view is maintained.
	Cluster string `json:"cluster,omitempty"`
	// SQL is the statement that created the item.
	SQL string `json:"sql,omitempty"`
	// Desc is the item's relation description (JSON owned by pkg/compute/row).
	Desc json.RawMessage `json:"desc,omitempty"`
	// Plan is the item's plan or dataflow description (JSON owned by
	// pkg/compute/plan).
	Plan json.RawMessage `json:"plan,omitempty"`
	// On is the indexed relation's id, for indexes.
	On uint64 `json:"on,omitempty"`
	// DependsOn lists the ids this item reads.
	DependsOn []uint64 `json:"depends_on,omitempty"`
	// Options holds kind-specific settings (e.g. a load generator's name).
	Options map[string]string `json:"options,omitempty"`
	// Owner is the role that owns the item (empty for items created before
	// roles existed, which only superusers own).
	Owner string `json:"owner,omitempty"`
	// Created is when the item was created (wall clock, informational).
	Created time.Time `json:"created"`
}

// Catalog is a durable catalog. It is safe for concurrent use.
type Catalog struct {
	db *bolt.DB
}

// Open opens (creating if needed) the catalog in dataDir.
func Open(dataDir string) (*Catalog, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	path := filepath.Join(dataDir, FileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open catalog %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketClusters, bucketReplicas, bucketItems, bucketNames, bucketParams, bucketRoles, bucketGrants} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keyVersion); v != nil {
			got := binary.BigEndian.Uint64(v)
			if got == 1 {
				if err := migrateGrantKeys(tx); err != nil {
					return fmt.Errorf("upgrade catalog from version 1: %w", err)
				}
				return meta.Put(keyVersion, u64(schemaVersion))
			}
			if got != schemaVersion {
				return fmt.Errorf("catalog schema version %d, this binary understands %d", got, schemaVersion)
			}
			return nil
		}
		if err := meta.Put(keyVersion, u64(schemaVersion)); err != nil {
			return err
		}
		return meta.Put(keyNextUserID, u64(1))
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open catalog %s: %w", path, err)
	}
	return &Catalog{db: db}, nil
}

// Close closes the catalog file.
func (c *Catalog) Close() error { return c.db.Close() }

// Update runs f in one durable read-write transaction: all of its changes
// land together or none do.
func (c *Catalog) Update(f func(*Tx) error) error {
	return c.db.Update(func(tx *bolt.Tx) error { return f(&Tx{tx: tx}) })
}

// View runs f in a read-only transaction over a consistent snapshot.
func (c *Catalog) View(f func(*Tx) error) error {
	return c.db.View(func(tx *bolt.Tx) error { return f(&Tx{tx: tx}) })
}

// Tx is a catalog transaction.
type Tx struct {
	tx *bolt.Tx
}

// AllocateID returns a fresh user id; it is never handed out again.
func (t *Tx) AllocateID() (uint64, error) {
	meta := t.tx.Bucket(bucketMeta)
	next := binary.BigEndian.Uint64(meta.Get(keyNextUserID))
	if err := meta.Put(keyNextUserID, u64(next+1)); err != nil {
		return 0, fmt.Errorf("allocate id: %w", err)
	}
	return next, nil
}

// PutCluster creates or replaces a cluster.
func (t *Tx) PutCluster(cl Cluster) error {
	if cl.Name == "" {
		return errors.New("put cluster: empty name")
	}
	return putJSON(t.tx.Bucket(bucketClusters), []byte(cl.Name), cl)
}

// DropCluster removes a cluster and its replicas.
func (t *Tx) DropCluster(name string) error {
	b := t.tx.Bucket(bucketClusters)
	if b.Get([]byte(name)) == nil {
		return fmt.Errorf("drop cluster %q: %w", name, ErrNotFound)
	}
	rs, err := t.Replicas(name)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if err := t.DropReplica(r.Cluster, r.Name); err != nil {
			return err
		}
	}
	if err := t.dropGrantsOn(ClusterObject(name)); err != nil {
		return err
	}
	return b.Delete([]byte(name))
}

// Clusters lists clusters sorted by name.
func (t *Tx) Clusters() ([]Cluster, error) {
	return listJSON[Cluster](t.tx.Bucket(bucketClusters), nil)
}

// PutReplica creates or replaces a replica of an existing cluster.
func (t *Tx) PutReplica(r Replica) error {
	if t.tx.Bucket(bucketClusters).Get([]byte(r.Cluster)) == nil {
		return fmt.Errorf("put replica %s.%s: cluster: %w", r.Cluster, r.Name, ErrNotFound)
	}
	if r.Name == "" || r.Processes < 1 || r.Workers < 1 {
		return fmt.Errorf("put replica %s.%s: need a name, processes >= 1, workers >= 1", r.Cluster, r.Name)
	}
	return putJSON(t.tx.Bucket(bucketReplicas), replicaKey(r.Cluster, r.Name), r)
}

// DropReplica removes a replica.
func (t *Tx) DropReplica(cluster, name string) error {
	b := t.tx.Bucket(bucketReplicas)
	k := replicaKey(cluster, name)
	if b.Get(k) == nil {
		return fmt.Errorf("drop replica %s.%s: %w", cluster, name, ErrNotFound)
	}
	return b.Delete(k)
}

// Replicas lists a cluster's replicas (all replicas when cluster is empty).
func (t *Tx) Replicas(cluster string) ([]Replica, error) {
	var prefix []byte
	if cluster != "" {
		prefix = replicaKey(cluster, "")
	}
	return listJSON[Replica](t.tx.Bucket(bucketReplicas), prefix)
}

// CreateItem stores a new item. Its id must have been allocated and its
// name must be free.
func (t *Tx) CreateItem(it Item) error {
	if it.ID == 0 || it.Name == "" || it.Kind == "" {
		return fmt.Errorf("create item %q: id, name and kind are required", it.Name)
	}
	names := t.tx.Bucket(bucketNames)
	if names.Get([]byte(it.Name)) != nil {
		return fmt.Errorf("create item %q: %w", it.Name, ErrExists)
	}
	items := t.tx.Bucket(bucketItems)
	if items.Get(u64(it.ID)) != nil {
		return fmt.Errorf("create item %q: id u%d: %w", it.Name, it.ID, ErrExists)
	}
	if it.Created.IsZero() {
		it.Created = time.Now().UTC()
	}
	if err := names.Put([]byte(it.Name), u64(it.ID)); err != nil {
		return err
	}
	return putJSON(items, u64(it.ID), it)
}

// UpdateItem replaces an existing item with the same id and name (for
// example to store a re-based plan).
func (t *Tx) UpdateItem(it Item) error {
	old, err := t.Item(it.ID)
	if err != nil {
		return fmt.Errorf("update item u%d: %w", it.ID, err)
	}
	if old.Name != it.Name {
		return fmt.Errorf("update item u%d: renaming %q to %q is not supported", it.ID, old.Name, it.Name)
	}
	return putJSON(t.tx.Bucket(bucketItems), u64(it.ID), it)
}

// RenameItem changes an item's name (ALTER TABLE ... RENAME TO); the new
// name must be free.
func (t *Tx) RenameItem(id uint64, name string) error {
	it, err := t.Item(id)
	if err != nil {
		return fmt.Errorf("rename item u%d: %w", id, err)
	}
	names := t.tx.Bucket(bucketNames)
	if names.Get([]byte(name)) != nil {
		return fmt.Errorf("rename item %q to %q: %w", it.Name, name, ErrExists)
	}
	if err := names.Delete([]byte(it.Name)); err != nil {
		return err
	}
	if err := names.Put([]byte(name), u64(id)); err != nil {
		return err
	}
	it.Name = name
	return putJSON(t.tx.Bucket(bucketItems), u64(id), it)
}

// DropItem removes an item. Its id stays allocated.
func (t *Tx) DropItem(id uint64) error {
	it, err := t.Item(id)
	if err != nil {
		return fmt.Errorf("drop item u%d: %w", id, err)
	}
	if err := t.tx.Bucket(bucketNames).Delete([]byte(it.Name)); err != nil {
		return err
	}
	if err := t.dropGrantsOn(ItemObject(id)); err != nil {
		return err
	}
	if err := t.dropColumnGrantsOf(id); err != nil {
		return err
	}
	return t.tx.Bucket(bucketItems).Delete(u64(id))
}

// Item returns the item with the given id.
func (t *Tx) Item(id uint64) (Item, error) {
	v := t.tx.Bucket(bucketItems).Get(u64(id))
	if v == nil {
		return Item{}, fmt.Errorf("item u%d: %w", id, ErrNotFound)
	}
	var it Item
	if err := json.Unmarshal(v, &it); err != nil {
		return Item{}, fmt.Errorf("decode item u%d: %w", id, err)
	}
	return it, nil
}

// ItemByName returns the item with the given name.
func (t *Tx) ItemByName(name string) (Item, error) {
	v := t.tx.Bucket(bucketNames).Get([]byte(name))
	if v == nil {
		return Item{}, fmt.Errorf("item %q: %w", name, ErrNotFound)
	}
	return t.Item(binary.BigEndian.Uint64(v))
}

// Items lists every item in id order, which is creation order: an item's
// dependencies always come before it.
func (t *Tx) Items() ([]Item, error) {
	return listJSON[Item](t.tx.Bucket(bucketItems), nil)
}

// SetParam sets a system parameter.
func (t *Tx) SetParam(name, value string) error {
	if name == "" {
		return errors.New("set parameter: empty name")
	}
	return t.tx.Bucket(bucketParams).Put([]byte(name), []byte(value))
}

// ResetParam removes a system parameter (back to its default).
func (t *Tx) ResetParam(name string) error {
	return t.tx.Bucket(bucketParams).Delete([]byte(name))
}

// Params returns every set system parameter.
func (t *Tx) Params() (map[string]string, error) {
	out := map[string]string{}
	err := t.tx.Bucket(bucketParams).ForEach(func(k, v []byte) error {
		out[string(k)] = string(v)
		return nil
	})
	return out, err
}

// Convenience wrappers, each one transaction.

// AllocateID allocates a fresh user id in its own transaction.
func (c *Catalog) AllocateID() (id uint64, err error) {
	err = c.Update(func(tx *Tx) error { id, err = tx.AllocateID(); return err })
	return id, err
}

// Items lists every item.
func (c *Catalog) Items() (items []Item, err error) {
	err = c.View(func(tx *Tx) error { items, err = tx.Items(); return err })
	return items, err
}

// Clusters lists every cluster.
func (c *Catalog) Clusters() (cls []Cluster, err error) {
	err = c.View(func(tx *Tx) error { cls, err = tx.Clusters(); return err })
	return cls, err
}

// Replicas lists a cluster's replicas, or all when cluster is empty.
func (c *Catalog) Replicas(cluster string) (rs []Replica, err error) {
	err = c.View(func(tx *Tx) error { rs, err = tx.Replicas(cluster); return err })
	return rs, err
}

// Params returns every set system parameter.
func (c *Catalog) Params() (ps map[string]string, err error) {
	err = c.View(func(tx *Tx) error { ps, err = tx.Params(); return err })
	return ps, err
}

func replicaKey(cluster, name string) []byte {
	// NUL cannot appear in a SQL identifier, so it separates unambiguously.
	return []byte(cluster + "\x00" + name)
}

func u64(v uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, v)
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	return b.Put(key, data)
}

func listJSON[T any](b *bolt.Bucket, prefix []byte) ([]T, error) {
	var out []T
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, v = c.Next() {
		var x T
		if err := json.Unmarshal(v, &x); err != nil {
			return nil, fmt.Errorf("decode %q: %w", k, err)
		}
		out = append(out, x)
	}
	return out, nil
}

func hasPrefix(k, prefix []byte) bool {
	return len(k) >= len(prefix) && slices.Equal(k[:len(prefix)], prefix)
}

// Generation identifies the catalog's committed state: it changes with
// every committed Update and never goes back, so a value decoded from the
// catalog at one generation may be reused while Generation returns it.
func (c *Catalog) Generation() (gen uint64, err error) {
	err = c.db.View(func(tx *bolt.Tx) error { gen = uint64(tx.ID()); return nil })
	return gen, err
}
