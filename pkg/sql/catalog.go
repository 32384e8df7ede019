package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// snapshot is the catalog as one statement sees it. It implements
// planner.Catalog.
type snapshot struct {
	items  []Item
	byID   map[plan.GlobalID]*Item
	byName map[string]*Item // "schema.name"
	// user is the session's user; roles by name and grants by object
	// (privileges.go).
	user  string
	roles map[string]Role
	// skipChecks: the statement defines rather than reads (CREATE VIEW),
	// so its relations need no SELECT now; the view's readers are checked.
	skipChecks bool
	grants     map[string][]Grant
	// memberOf lists each role's direct memberships (membership.go).
	memberOf map[string][]membership
	// defs caches what items' definitions parse to (definitions.go).
	defs *definitions
	// onViewPlan is the engine's test hook (Engine.onViewPlan).
	onViewPlan func(view string)
}

func (s *Session) snapshot(ctx context.Context) (*snapshot, error) {
	base, err := s.engine.snaps.get(ctx, s.engine.backend)
	if err != nil {
		return nil, err
	}
	sn := *base
	sn.user, sn.defs, sn.onViewPlan = s.user, &s.engine.defs, s.engine.onViewPlan
	if _, ok := sn.roles[s.sessionUser]; ok {
		s.sessionRole = true
	}
	if err := sn.checkSetRole(s.user, s.sessionUser, s.sessionRole); err != nil {
		return nil, err
	}
	return &sn, nil
}

// buildSnapshot reads the catalog's items, roles and grants and indexes
// them: the part of a snapshot that is the same for every session.
func buildSnapshot(ctx context.Context, b Backend) (*snapshot, error) {
	items, err := b.Items(ctx)
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	sn := &snapshot{items: items, byID: make(map[plan.GlobalID]*Item, len(items)), byName: make(map[string]*Item, len(items))}
	for i := range items {
		it := &items[i]
		schema := it.Schema
		if schema == "" {
			schema = SchemaPublic
		}
		sn.byID[it.ID] = it
		sn.byName[schema+"."+it.Name] = it
	}
	if err := sn.loadAuthz(ctx, b); err != nil {
		return nil, err
	}
	return sn, nil
}

// lookup finds an item by name; schema "" means public.
func (sn *snapshot) lookup(name parse.ObjectName) (*Item, bool) {
	schema := name.Schema
	if schema == "" {
		schema = SchemaPublic
	}
	it, ok := sn.byName[schema+"."+name.Name]
	return it, ok
}

func undefinedRelation(name parse.ObjectName) error {
	return sqlerr.Errorf(sqlerr.UndefinedTable, "relation %q does not exist", name.String())
}

// Resolve implements planner.Catalog: a relation read by the statement
// needs SELECT for the session's user (unless the statement does not read,
// skipChecks).
func (sn *snapshot) Resolve(schema, name string) (planner.Relation, error) {
	return sn.resolveAs(schema, name, sn.user, !sn.skipChecks)
}

// viewCatalog resolves a view's names while the planner inlines it: its
// reads are checked against the view owner's privileges, as PostgreSQL
// does.
type viewCatalog struct {
	sn    *snapshot
	owner string
	check bool
}

func (c viewCatalog) Resolve(schema, name string) (planner.Relation, error) {
	return c.sn.resolveAs(schema, name, c.owner, c.check)
}

// resolveAs resolves a relation read by user as; check says whether the
// read needs SELECT.
func (sn *snapshot) resolveAs(schema, name, as string, check bool) (planner.Relation, error) {
	on := parse.ObjectName{Schema: schema, Name: name}
	it, ok := sn.lookup(on)
	if !ok {
		if schema == "pg_catalog" || schema == "" {
			if rel, ok := sn.pgCatalogRelation(name); ok {
				return rel, nil
			}
			if rel, ok, err := sn.roleRelation(name); ok {
				return rel, err
			}
		}
		if schema == "information_schema" {
			if rel, ok := sn.informationSchemaRelation(name); ok {
				return rel, nil
			}
		}
		if schema == "pg_catalog" || schema == "information_schema" || (schema == "" && strings.HasPrefix(name, "pg_")) {
			return planner.Relation{}, sqlerr.Errorf(sqlerr.FeatureNotSupported,
				"system catalog relation %s not supported: Tandem does not emulate pg_catalog; use SHOW TABLES, SHOW VIEWS, SHOW MATERIALIZED VIEWS, SHOW SOURCES, SHOW INDEXES or SHOW COLUMNS FROM <relation>",
				on.String())
		}
		return planner.Relation{}, undefinedRelation(on)
	}
	if it.Kind == KindIndex {
		return planner.Relation{}, sqlerr.Errorf(sqlerr.WrongObjectType, "%q is an index, not a relation", name)
	}
	var guard func(int) error
	if check {
		// SELECT on the relation, or on the columns the query references
		// (colpriv.go).
		var err error
		if guard, err = sn.columnGuard(as, it, privSelect); err != nil {
			return planner.Relation{}, err
		}
		if err := sn.checkViewReads(it, map[plan.GlobalID]bool{}); err != nil {
			return planner.Relation{}, err
		}
	}
	rel := planner.Relation{ID: it.ID, Name: it.Name, Desc: it.Desc, ColumnGuard: guard}
	if it.Kind == KindTable {
		rel.IntWidths, rel.TypeMods = sn.defs.tableTypes(it)
	}
	if it.Kind == KindView {
		q, err := sn.defs.viewQuery(it)
		if err != nil {
			return planner.Relation{}, err
		}
		rel.View = q
		rel.ViewCatalog = viewCatalog{sn: sn, owner: it.Owner, check: check}
	}
	for _, ix := range sn.items {
		if ix.Kind == KindIndex && ix.On == it.ID {
			rel.Indexes = append(rel.Indexes, planner.Index{ID: ix.ID, Cluster: ix.Cluster, Keys: ix.Keys})
		}
	}
	if it.Kind == KindView && len(rel.Indexes) > 0 {
		// A read of the index describes the columns by these, without
		// planning the view.
		rel.IntWidths, rel.TypeMods = sn.viewColumnTypes(it)
	}
	return rel, nil
}

// parseViewQuery parses a view's defining query from its CREATE VIEW text.
func parseViewQuery(it *Item) (*pg.SelectStmt, error) {
	st, err := parse.ParseOne(it.SQL)
	if err != nil {
		return nil, fmt.Errorf("view %s: reparse definition: %w", it.Name, err)
	}
	if p, ok := st.(*parse.Postgres); ok {
		if v := p.Node.GetViewStmt(); v != nil && v.Query.GetSelectStmt() != nil {
			return v.Query.GetSelectStmt(), nil
		}
	}
	return nil, sqlerr.Errorf(sqlerr.InternalError, "view %s: definition is not CREATE VIEW", it.Name)
}

// dependents returns the items that depend on id, directly or through
// other items, ordered so that an item comes before what it depends on
// (ids grow with creation, and an item is created after its
// dependencies, so descending id order works).
func (sn *snapshot) dependents(ids ...plan.GlobalID) []*Item {
	seen := map[plan.GlobalID]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	var out []*Item
	for changed := true; changed; {
		changed = false
		for i := range sn.items {
			it := &sn.items[i]
			if seen[it.ID] {
				continue
			}
			deps := it.DependsOn
			if it.Kind == KindIndex {
				deps = append(slices.Clone(deps), it.On)
			}
			for _, d := range deps {
				if seen[d] {
					seen[it.ID] = true
					out = append(out, it)
					changed = true
					break
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b *Item) int { return b.ID.Compare(a.ID) })
	return out
}

func kindName(k ItemKind) string {
	switch k {
	case KindMaterializedView:
		return "materialized view"
	default:
		return string(k)
	}
}

// freeName reports a 42710 error when name is taken.
func (sn *snapshot) freeName(name parse.ObjectName) error {
	if it, ok := sn.lookup(name); ok {
		return sqlerr.Errorf(sqlerr.DuplicateObject, "%s %q already exists", kindName(it.Kind), name.Name)
	}
	return nil
}

// publicName checks that a new object goes into the public schema.
func publicName(n parse.ObjectName) error {
	if n.Schema != "" && !strings.EqualFold(n.Schema, SchemaPublic) {
		return sqlerr.Errorf(sqlerr.InvalidParameterValue, "objects can only be created in schema public, not %q", n.Schema)
	}
	return nil
}
