package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrInUse is returned when dropping a role that owns items or holds
// grants.
var ErrInUse = errors.New("catalog: in use")

// Role is a database role. Password is its SCRAM-SHA-256 verifier in
// PostgreSQL's text form (empty: no password); the catalog never sees a
// password.
type Role struct {
	Name      string `json:"name"`
	Superuser bool   `json:"superuser,omitempty"`
	Login     bool   `json:"login,omitempty"`
	// NoInherit is PostgreSQL's NOINHERIT: the role does not use the
	// privileges of the roles it is a member of without SET ROLE.
	NoInherit bool      `json:"noinherit,omitempty"`
	Password  string    `json:"password,omitempty"`
	Created   time.Time `json:"created"`
}

// Grant is the privileges one grantee holds on one object. Privileges are
// PostgreSQL's ACL letters (r SELECT, a INSERT, w UPDATE, d DELETE,
// C CREATE, U USAGE); Grantee "" is PUBLIC. A role membership is a grant
// on the object RoleObject(group) to the member (its letters are the SQL
// layer's): memberships go with either role when it is dropped.
type Grant struct {
	Object     string `json:"object"`
	Grantee    string `json:"grantee"`
	Privileges string `json:"privileges"`
	// Options are the letters of Privileges held with the grant option;
	// a grant stored before there were grant options has none.
	Options string `json:"options,omitempty"`
	// Grantor is the role that granted them: an object's grants are keyed
	// by object, grantee and grantor, as PostgreSQL's ACL entries (a
	// membership, a grant on a role, by object and grantee only). A grant
	// stored before grantors were keys reads back as its object's owner's
	// (migrateGrantKeys).
	Grantor string `json:"grantor,omitempty"`
	// Keep stores the grant even without privileges: the SQL layer's mark
	// that an owner's own entry was revoked (its object's ACL is written
	// and holds nothing for the owner). Without it, no privileges removes
	// the grant.
	Keep bool `json:"keep,omitempty"`
	// Seq orders the grants on one object as the SQL layer wants them
	// listed (PostgreSQL's ACL entry order); the catalog only keeps it.
	Seq uint64 `json:"seq,omitempty"`
}

// ItemObject names an item as the object of a grant.
func ItemObject(id uint64) string { return "item:" + strconv.FormatUint(id, 10) }

// RoleObject names a role as the object of a grant: its memberships.
func RoleObject(name string) string { return "role:" + name }

// ClusterObject names a cluster as the object of a grant.
func ClusterObject(name string) string { return "cluster:" + name }

// CreateRole stores a new role; its name must be free.
func (t *Tx) CreateRole(r Role) error {
	if r.Name == "" {
		return errors.New("create role: empty name")
	}
	b := t.tx.Bucket(bucketRoles)
	if b.Get([]byte(r.Name)) != nil {
		return fmt.Errorf("create role %q: %w", r.Name, ErrExists)
	}
	if r.Created.IsZero() {
		r.Created = time.Now().UTC()
	}
	return putJSON(b, []byte(r.Name), r)
}

// UpdateRole replaces an existing role's attributes and password.
func (t *Tx) UpdateRole(r Role) error {
	old, err := t.Role(r.Name)
	if err != nil {
		return fmt.Errorf("update role: %w", err)
	}
	r.Created = old.Created
	return putJSON(t.tx.Bucket(bucketRoles), []byte(r.Name), r)
}

// Role returns the named role.
func (t *Tx) Role(name string) (Role, error) {
	v := t.tx.Bucket(bucketRoles).Get([]byte(name))
	if v == nil {
		return Role{}, fmt.Errorf("role %q: %w", name, ErrNotFound)
	}
	var r Role
	if err := json.Unmarshal(v, &r); err != nil {
		return Role{}, fmt.Errorf("decode role %q: %w", name, err)
	}
	return r, nil
}

// Roles lists the roles sorted by name.
func (t *Tx) Roles() ([]Role, error) {
	return listJSON[Role](t.tx.Bucket(bucketRoles), nil)
}

// DropRole removes a role that owns no item and holds no grant but
// memberships, which it removes: its members' and its own.
func (t *Tx) DropRole(name string) error {
	b := t.tx.Bucket(bucketRoles)
	if b.Get([]byte(name)) == nil {
		return fmt.Errorf("drop role %q: %w", name, ErrNotFound)
	}
	items, err := t.Items()
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.Owner == name {
			return fmt.Errorf("drop role %q: owner of %s %q: %w", name, it.Kind, it.Name, ErrInUse)
		}
	}
	grants, err := t.Grants()
	if err != nil {
		return err
	}
	var memberships [][]byte
	for _, g := range grants {
		switch {
		case strings.HasPrefix(g.Object, "role:"):
			if g.Grantee == name {
				memberships = append(memberships, grantKey(g))
			}
		case g.Grantee == name || g.Grantor == name:
			return fmt.Errorf("drop role %q: privileges on %s: %w", name, g.Object, ErrInUse)
		}
	}
	gb := t.tx.Bucket(bucketGrants)
	for _, k := range memberships {
		if err := gb.Delete(k); err != nil {
			return fmt.Errorf("drop role %q: %w", name, err)
		}
	}
	if err := t.dropGrantsOn(RoleObject(name)); err != nil {
		return fmt.Errorf("drop role %q: %w", name, err)
	}
	return b.Delete([]byte(name))
}

// SetGrant stores what g.Grantee holds on g.Object from g.Grantor,
// replacing what it held from that grantor; empty Privileges removes the
// grant unless Keep.
func (t *Tx) SetGrant(g Grant) error {
	if g.Object == "" {
		return errors.New("set grant: empty object")
	}
	b := t.tx.Bucket(bucketGrants)
	k := grantKey(g)
	if g.Privileges == "" && !g.Keep {
		return b.Delete(k)
	}
	return putJSON(b, k, g)
}

// Grants lists every grant, by object, grantee then grantor.
func (t *Tx) Grants() ([]Grant, error) {
	return listJSON[Grant](t.tx.Bucket(bucketGrants), nil)
}

// dropGrantsOn removes every grant on object.
func (t *Tx) dropGrantsOn(object string) error {
	b := t.tx.Bucket(bucketGrants)
	prefix := []byte(object + "\x00")
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && strings.HasPrefix(string(k), string(prefix)); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// CreateRoleWithGrants stores a new role and grants (its memberships) in
// one transaction: all of them or, on any error, none.
func (t *Tx) CreateRoleWithGrants(r Role, gs []Grant) error {
	if err := t.CreateRole(r); err != nil {
		return err
	}
	for _, g := range gs {
		if err := t.SetGrant(g); err != nil {
			return fmt.Errorf("create role %q: %w", r.Name, err)
		}
	}
	return nil
}

// Roles lists every role.
func (c *Catalog) Roles() (rs []Role, err error) {
	err = c.View(func(tx *Tx) error { rs, err = tx.Roles(); return err })
	return rs, err
}

// Grants lists every grant.
func (c *Catalog) Grants() (gs []Grant, err error) {
	err = c.View(func(tx *Tx) error { gs, err = tx.Grants(); return err })
	return gs, err
}

// SetOwner makes owner the owner of the items ids (ALTER ... OWNER TO,
// REASSIGN OWNED); the role must exist.
func (t *Tx) SetOwner(ids []uint64, owner string) error {
	if _, err := t.Role(owner); err != nil {
		return fmt.Errorf("set owner: %w", err)
	}
	for _, id := range ids {
		it, err := t.Item(id)
		if err != nil {
			return fmt.Errorf("set owner: %w", err)
		}
		it.Owner = owner
		if err := t.UpdateItem(it); err != nil {
			return fmt.Errorf("set owner: %w", err)
		}
	}
	return nil
}
