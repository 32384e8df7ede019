package sqltest

import (
	"context"
	"slices"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Roles implements sql.Backend.
func (f *Fake) Roles(context.Context) ([]sql.Role, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]sql.Role, 0, len(f.roles))
	for _, r := range f.roles {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b sql.Role) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// CreateRole implements sql.Backend.
func (f *Fake) CreateRole(_ context.Context, r sql.Role, gs []sql.Grant) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++ // a catalog change
	if _, ok := f.roles[r.Name]; ok {
		return sqlerr.Errorf(sqlerr.DuplicateObject, "role %q already exists", r.Name)
	}
	if f.roles == nil {
		f.roles = map[string]sql.Role{}
	}
	f.roles[r.Name] = r
	f.setGrantsLocked(gs)
	return nil
}

// AlterRole implements sql.Backend.
func (f *Fake) AlterRole(_ context.Context, r sql.Role) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++ // a catalog change
	if _, ok := f.roles[r.Name]; !ok {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", r.Name)
	}
	f.roles[r.Name] = r
	return nil
}

// DropRole implements sql.Backend.
func (f *Fake) DropRole(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++ // a catalog change
	if _, ok := f.roles[name]; !ok {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", name)
	}
	delete(f.roles, name)
	for k := range f.grants {
		if k[0] == "role:"+name || strings.HasPrefix(k[0], "role:") && k[1] == name {
			delete(f.grants, k)
		}
	}
	return nil
}

// Grants implements sql.Backend.
func (f *Fake) Grants(context.Context) ([]sql.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]sql.Grant, 0, len(f.grants))
	for _, g := range f.grants {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b sql.Grant) int {
		return strings.Compare(a.Object+"\x00"+a.Grantee+"\x00"+a.Grantor, b.Object+"\x00"+b.Grantee+"\x00"+b.Grantor)
	})
	return out, nil
}

// SetGrants implements sql.Backend.
func (f *Fake) SetGrants(_ context.Context, gs []sql.Grant) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setGrantsLocked(gs)
	return nil
}

func (f *Fake) setGrantsLocked(gs []sql.Grant) {
	f.gen++ // a catalog change
	if f.grants == nil {
		f.grants = map[[3]string]sql.Grant{}
	}
	for _, g := range gs {
		k := grantKey(g)
		if g.Privileges == "" && !g.Keep {
			delete(f.grants, k)
			continue
		}
		f.grants[k] = g
	}
}

// grantKey keys a grant as the catalog does: by object, grantee and
// grantor, a membership (a grant on a role) by object and grantee.
func grantKey(g sql.Grant) [3]string {
	if strings.HasPrefix(g.Object, "role:") {
		return [3]string{g.Object, g.Grantee, ""}
	}
	return [3]string{g.Object, g.Grantee, g.Grantor}
}

// dropGrantsLocked removes the grants on object and, for a relation, on
// its columns (object#attnum).
func (f *Fake) dropGrantsLocked(object string) {
	f.gen++ // a catalog change
	for k := range f.grants {
		if k[0] == object || strings.HasPrefix(k[0], object+"#") {
			delete(f.grants, k)
		}
	}
}

// SetOwner implements sql.Backend.
func (f *Fake) SetOwner(_ context.Context, ids []plan.GlobalID, owner string, gs []sql.Grant) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++ // a catalog change
	if _, ok := f.roles[owner]; !ok {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "role %q does not exist", owner)
	}
	for _, id := range ids {
		i := slices.IndexFunc(f.items, func(it sql.Item) bool { return it.ID == id })
		if i < 0 {
			return sqlerr.Errorf(sqlerr.UndefinedTable, "relation %s does not exist", id)
		}
		f.items[i].Owner = owner
	}
	f.setGrantsLocked(gs)
	return nil
}

// DropOwned implements sql.Backend: nothing changes unless everything
// does.
func (f *Fake) DropOwned(_ context.Context, ids []plan.GlobalID, revokes []sql.Grant) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++ // a catalog change
	for _, id := range ids {
		if !slices.ContainsFunc(f.items, func(it sql.Item) bool { return it.ID == id }) {
			return sqlerr.Errorf(sqlerr.UndefinedTable, "relation %s does not exist", id)
		}
		for _, o := range f.items {
			if o.ID != id && (o.On == id || slices.Contains(o.DependsOn, id)) && !slices.Contains(ids, o.ID) {
				return sqlerr.Errorf(sqlerr.DependentObjectsStillExist, "drop %s: %s still depends on it", id, o.ID)
			}
		}
	}
	for _, id := range ids {
		f.items = slices.DeleteFunc(f.items, func(it sql.Item) bool { return it.ID == id })
		delete(f.updates, id)
		f.dropGrantsLocked("relation:" + id.String())
	}
	f.setGrantsLocked(revokes)
	return nil
}
