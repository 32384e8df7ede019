package environment

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// ensureSuperuser makes the configured bootstrap superuser a catalog role
// with SUPERUSER and LOGIN, restoring those attributes if they were taken
// away, so that the environment always has a way in.
func (e *Environment) ensureSuperuser() error {
	name := e.cfg.Superuser
	if name == "" {
		return nil
	}
	return e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		r, err := tx.Role(name)
		switch {
		case errors.Is(err, catalog.ErrNotFound):
			return tx.CreateRole(catalog.Role{Name: name, Superuser: true, Login: true})
		case err != nil:
			return err
		case r.Superuser && r.Login:
			return nil
		}
		r.Superuser, r.Login = true, true
		return tx.UpdateRole(r)
	})
}

// Roles implements sql.Roles.
func (e *Environment) Roles(context.Context) ([]sql.Role, error) {
	gen, err := e.cfg.Catalog.Generation()
	if err != nil {
		return nil, fmt.Errorf("read roles: %w", err)
	}
	return get(&e.decoded.mu, &e.decoded.roles, gen, e.decodeRoles)
}

func (e *Environment) decodeRoles() ([]sql.Role, error) {
	rs, err := e.cfg.Catalog.Roles()
	if err != nil {
		return nil, fmt.Errorf("read roles: %w", err)
	}
	out := make([]sql.Role, len(rs))
	for i, r := range rs {
		out[i] = sql.Role{Name: r.Name, Superuser: r.Superuser, Login: r.Login, NoInherit: r.NoInherit, Password: r.Password}
	}
	return out, nil
}

// CreateRole implements sql.Roles.
func (e *Environment) CreateRole(_ context.Context, r sql.Role, gs []sql.Grant) error {
	err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		cgs, err := catalogGrants(gs)
		if err != nil {
			return err
		}
		return tx.CreateRoleWithGrants(catalog.Role{Name: r.Name, Superuser: r.Superuser, Login: r.Login, NoInherit: r.NoInherit, Password: r.Password}, cgs)
	})
	if errors.Is(err, catalog.ErrExists) {
		return sqlerr.Errorf(sqlerr.DuplicateObject, "role %q already exists", r.Name)
	}
	return err
}

// AlterRole implements sql.Roles.
func (e *Environment) AlterRole(_ context.Context, r sql.Role) error {
	err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		return tx.UpdateRole(catalog.Role{Name: r.Name, Superuser: r.Superuser, Login: r.Login, NoInherit: r.NoInherit, Password: r.Password})
	})
	if errors.Is(err, catalog.ErrNotFound) {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", r.Name)
	}
	return err
}

// DropRole implements sql.Roles.
func (e *Environment) DropRole(_ context.Context, name string) error {
	err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error { return tx.DropRole(name) })
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		return sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", name)
	case errors.Is(err, catalog.ErrInUse):
		return sqlerr.Errorf(sqlerr.DependentObjectsStillExist, "role %q cannot be dropped because some objects depend on it", name)
	}
	return err
}

// Grants implements sql.Roles.
func (e *Environment) Grants(context.Context) ([]sql.Grant, error) {
	gen, err := e.cfg.Catalog.Generation()
	if err != nil {
		return nil, fmt.Errorf("read grants: %w", err)
	}
	return get(&e.decoded.mu, &e.decoded.grants, gen, e.decodeGrants)
}

func (e *Environment) decodeGrants() ([]sql.Grant, error) {
	gs, err := e.cfg.Catalog.Grants()
	if err != nil {
		return nil, fmt.Errorf("read grants: %w", err)
	}
	out := make([]sql.Grant, 0, len(gs))
	for _, g := range gs {
		obj, err := sqlObject(g.Object)
		if err != nil {
			return nil, err
		}
		out = append(out, sql.Grant{Object: obj, Grantee: g.Grantee, Privileges: g.Privileges, Options: g.Options, Grantor: g.Grantor, Keep: g.Keep, Seq: g.Seq})
	}
	return out, nil
}

// SetGrants implements sql.Roles.
func (e *Environment) SetGrants(_ context.Context, gs []sql.Grant) error {
	return e.cfg.Catalog.Update(func(tx *catalog.Tx) error { return setGrants(tx, gs) })
}

func setGrants(tx *catalog.Tx, gs []sql.Grant) error {
	cgs, err := catalogGrants(gs)
	if err != nil {
		return err
	}
	for _, g := range cgs {
		if err := tx.SetGrant(g); err != nil {
			return err
		}
	}
	return nil
}

// catalogGrants converts the SQL layer's grants to the catalog's.
func catalogGrants(gs []sql.Grant) ([]catalog.Grant, error) {
	out := make([]catalog.Grant, 0, len(gs))
	for _, g := range gs {
		obj, err := catalogObject(g.Object)
		if err != nil {
			return nil, err
		}
		out = append(out, catalog.Grant{Object: obj, Grantee: g.Grantee, Privileges: g.Privileges, Options: g.Options, Grantor: g.Grantor, Keep: g.Keep, Seq: g.Seq})
	}
	return out, nil
}

// SetOwner implements sql.Roles.
func (e *Environment) SetOwner(_ context.Context, ids []plan.GlobalID, owner string, gs []sql.Grant) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	ns := make([]uint64, len(ids))
	for i, id := range ids {
		if id.Kind != plan.KindUser {
			return fmt.Errorf("set owner of %s: only user items have owners", id)
		}
		ns[i] = id.N
	}
	err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		if err := tx.SetOwner(ns, owner); err != nil {
			return err
		}
		return setGrants(tx, gs)
	})
	if errors.Is(err, catalog.ErrNotFound) {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "%v", err)
	}
	return err
}

// DropOwned implements sql.Roles: the items and the revoked grants leave
// the catalog in one transaction, then the items' collections and shards
// are released.
func (e *Environment) DropOwned(_ context.Context, ids []plan.GlobalID, revokes []sql.Grant) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	dropped := make([]catalog.Item, len(ids))
	err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		for i, id := range ids {
			if id.Kind != plan.KindUser {
				return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "cannot drop system item %s", id)
			}
			ci, err := tx.Item(id.N)
			if err != nil {
				return err
			}
			if err := tx.DropItem(id.N); err != nil {
				return err
			}
			dropped[i] = ci
		}
		return setGrants(tx, revokes)
	})
	if err != nil {
		return sqlerr.Convert(fmt.Errorf("drop owned: %w", err))
	}
	for i, id := range ids {
		if err := e.releaseDropped(id, dropped[i]); err != nil {
			return err
		}
	}
	return nil
}

// catalogObject names the SQL layer's grant object as the catalog does:
// relations by their catalog id ("item:N", so that the grants on an item
// go with it), everything else as it is.
func catalogObject(obj string) (string, error) {
	id, ok := strings.CutPrefix(obj, "relation:")
	if !ok {
		return obj, nil
	}
	id, col, isCol := strings.Cut(id, "#")
	gid, err := plan.ParseGlobalID(id)
	if err != nil || gid.Kind != plan.KindUser {
		return "", fmt.Errorf("grant on %q: only user relations take grants", obj)
	}
	if isCol {
		// A column's grants (sql's columnObject, catalog.ColumnObject).
		return catalog.ItemObject(gid.N) + "#" + col, nil
	}
	return catalog.ItemObject(gid.N), nil
}

func sqlObject(obj string) (string, error) {
	n, ok := strings.CutPrefix(obj, "item:")
	if !ok {
		return obj, nil
	}
	n, col, isCol := strings.Cut(n, "#")
	var id uint64
	if _, err := fmt.Sscan(n, &id); err != nil {
		return "", fmt.Errorf("decode grant object %q: %w", obj, err)
	}
	if isCol {
		return "relation:" + plan.User(id).String() + "#" + col, nil
	}
	return "relation:" + plan.User(id).String(), nil
}
