package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

func rangeVarName(rv *pg.RangeVar) parse.ObjectName {
	return parse.ObjectName{Schema: rv.Schemaname, Name: rv.Relname}
}

// lockForCreate begins a CREATE of name: it takes the write lock and the
// catalog under it (the caller defers unlock). exists reports that the name
// is taken and ifNotExists was given: the statement then succeeds doing
// nothing, and the lock is already released.
func (s *Session) lockForCreate(ctx context.Context, name parse.ObjectName, ifNotExists bool) (sn *snapshot, unlock func(), exists bool, err error) {
	if err := publicName(name); err != nil {
		return nil, nil, false, err
	}
	if sn, unlock, err = s.lockedSnapshot(ctx); err != nil {
		return nil, nil, false, err
	}
	if err := sn.freeName(name); err != nil {
		unlock()
		if ifNotExists {
			return nil, nil, true, nil
		}
		return nil, nil, false, err
	}
	return sn, unlock, false, nil
}

// clusterOrDefault is the cluster a statement names, or the session's.
func (s *Session) clusterOrDefault(name string) string {
	if name == "" {
		name, _ = s.vars.Get(VarCluster)
	}
	return name
}

func (s *Session) createSource(ctx context.Context, st *parse.CreateSource) (*Result, error) {
	sn, unlock, exists, err := s.lockForCreate(ctx, st.Name, st.IfNotExists)
	if err != nil {
		return nil, err
	}
	if exists {
		return tagf("CREATE SOURCE"), nil
	}
	defer unlock()
	cluster := s.clusterOrDefault(st.Cluster)
	if err := sn.checkCreateOn(s.user, cluster); err != nil {
		return nil, err
	}
	opts := map[string]string{}
	for _, o := range st.Options {
		opts[o.Name] = o.Value
	}
	if _, err := s.engine.backend.CreateSource(ctx, SourceSpec{
		Name: st.Name.Name, Cluster: cluster, Generator: st.Generator, Options: opts, SQL: st.SQL, Owner: s.user,
	}); err != nil {
		return nil, err
	}
	return tagf("CREATE SOURCE"), nil
}

func (s *Session) createTable(ctx context.Context, c *pg.CreateStmt, text string) (*Result, error) {
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	name := rangeVarName(c.Relation)
	if err := publicName(name); err != nil {
		return nil, err
	}
	if c.Relation.Relpersistence == "t" {
		return nil, sqlerr.Unsupported("temporary tables")
	}
	if len(c.InhRelations) > 0 || c.Partspec != nil || c.OfTypename != nil {
		return nil, sqlerr.Unsupported("table inheritance, partitioning and typed tables")
	}
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if err := sn.freeName(name); err != nil {
		if c.IfNotExists {
			return tagf("CREATE TABLE"), nil
		}
		return nil, err
	}
	if err := checkTableOptions(c.Options); err != nil {
		return nil, err
	}
	if err := sn.checkCreate(s.user); err != nil {
		return nil, err
	}
	_, desc, err := declaredConstraints(name.Name, c)
	if err != nil {
		return nil, err
	}
	// Compile the defaults and checks now, so that a bad one is refused
	// by CREATE TABLE rather than by every later write.
	if _, err := rulesFor(s.planner(sn, nil, nil), sn, &Item{Name: name.Name, Desc: desc, SQL: text}); err != nil {
		return nil, err
	}
	it, err := s.engine.backend.CreateItem(ctx, Item{Schema: SchemaPublic, Name: name.Name, Kind: KindTable, Desc: desc, SQL: text, Owner: s.user})
	if err != nil {
		return nil, err
	}
	if err := s.createKeyIndex(ctx, sn, &it); err != nil {
		return nil, err
	}
	return tagf("CREATE TABLE"), nil
}

func (s *Session) createView(ctx context.Context, v *pg.ViewStmt, text string) (*Result, error) {
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	name := rangeVarName(v.View)
	if err := publicName(name); err != nil {
		return nil, err
	}
	if v.Replace {
		return nil, sqlerr.Unsupported("CREATE OR REPLACE VIEW")
	}
	if v.View.Relpersistence == "t" {
		return nil, sqlerr.Unsupported("temporary views")
	}
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if err := sn.freeName(name); err != nil {
		return nil, err
	}
	sel := v.Query.GetSelectStmt()
	if sel == nil {
		return nil, sqlerr.Unsupported("views over non-SELECT statements")
	}
	if err := sn.checkCreate(s.user); err != nil {
		return nil, err
	}
	sn.skipChecks = true
	pl := s.planner(sn, nil, nil)
	pl.Maintained = true
	q, err := pl.PlanRelation(sel)
	if err != nil {
		return nil, err
	}
	desc, err := renameColumns(q.Desc, v.Aliases)
	if err != nil {
		return nil, err
	}
	if _, err := s.engine.backend.CreateItem(ctx, Item{
		Schema: SchemaPublic, Name: name.Name, Kind: KindView, Desc: desc, SQL: text, DependsOn: pl.Referenced(), Owner: s.user,
	}); err != nil {
		return nil, err
	}
	return tagf("CREATE VIEW"), nil
}

func renameColumns(d row.RelationDesc, aliases []*pg.Node) (row.RelationDesc, error) {
	if len(aliases) > d.Arity() {
		return row.RelationDesc{}, sqlerr.Errorf(sqlerr.SyntaxError, "CREATE VIEW specifies more column names than columns")
	}
	names := slices.Clone(d.Names)
	for i, a := range aliases {
		names[i] = a.GetString_().GetSval()
	}
	for i, n := range names {
		if slices.Index(names, n) != i {
			return row.RelationDesc{}, sqlerr.Errorf(sqlerr.DuplicateColumn, "column %q specified more than once", n)
		}
		// As in PostgreSQL, a view does not store anonymous records (a
		// SEARCH or CYCLE column): its query casts them to text or
		// reads them (ORDER BY, = ANY) without returning them.
		if t := d.Types[i].Type; t == row.TypeRecord || t == row.TypeRecordArray {
			return row.RelationDesc{}, sqlerr.Errorf(sqlerr.InvalidTableDefinition, "column %q has pseudo-type %s", n, t.PGName())
		}
	}
	return row.RelationDesc{Names: names, Types: d.Types}, nil
}

// renameList turns a plain string list into alias nodes.
func renameList(cols []string) []*pg.Node {
	out := make([]*pg.Node, len(cols))
	for i, c := range cols {
		out[i] = &pg.Node{Node: &pg.Node_String_{String_: &pg.String{Sval: c}}}
	}
	return out
}

// checkCluster reports a 42704 error when the cluster does not exist.
func (s *Session) checkCluster(ctx context.Context, name string) error {
	c, err := s.findCluster(ctx, name)
	if err != nil {
		return err
	}
	if c == nil {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster %q", name)
	}
	return nil
}

func (s *Session) createMaterializedView(ctx context.Context, st *parse.CreateMaterializedView) (*Result, error) {
	sn, unlock, exists, err := s.lockForCreate(ctx, st.Name, st.IfNotExists)
	if err != nil {
		return nil, err
	}
	if exists {
		return tagf("CREATE MATERIALIZED VIEW"), nil
	}
	defer unlock()
	cluster := s.clusterOrDefault(st.Cluster)
	if err := s.checkCluster(ctx, cluster); err != nil {
		return nil, err
	}
	if err := sn.checkCreateOn(s.user, cluster); err != nil {
		return nil, err
	}
	pl := s.planner(sn, nil, nil)
	pl.Maintained = true
	q, err := pl.PlanRelation(st.Query)
	if err != nil {
		return nil, err
	}
	desc, err := renameColumns(q.Desc, renameList(st.Columns))
	if err != nil {
		return nil, err
	}
	p := q.Plan
	if _, err := s.engine.backend.CreateItem(ctx, Item{
		Schema: SchemaPublic, Name: st.Name.Name, Kind: KindMaterializedView, Desc: desc, SQL: st.SQL,
		Cluster: cluster, Plan: &p, DependsOn: pl.Referenced(), Owner: s.user,
	}); err != nil {
		return nil, err
	}
	return tagf("CREATE MATERIALIZED VIEW"), nil
}

func (s *Session) createIndex(ctx context.Context, st *parse.CreateIndex) (*Result, error) {
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	on, ok := sn.lookup(st.On)
	if !ok {
		return nil, undefinedRelation(st.On)
	}
	if on.Kind == KindIndex {
		return nil, sqlerr.Errorf(sqlerr.WrongObjectType, "cannot create an index on index %q", on.Name)
	}
	if on.Schema == SchemaIntrospection {
		return nil, sqlerr.Errorf(sqlerr.InsufficientPrivilege, "cannot create an index on introspection relation %q", on.Name)
	}
	cluster := s.clusterOrDefault(st.Cluster)
	if err := s.checkCluster(ctx, cluster); err != nil {
		return nil, err
	}
	if err := sn.checkOwner(s.user, on); err != nil {
		return nil, err
	}
	if err := sn.checkUsage(s.user, cluster); err != nil {
		return nil, err
	}
	// Key expressions are planned as a SELECT list over the relation, so
	// they resolve and type-check exactly like query expressions.
	pl := s.planner(sn, nil, nil)
	pl.Maintained = true
	var keys []expr.Expr
	var nameParts []string
	if st.Default {
		for i := range on.Desc.Types {
			keys = append(keys, expr.Column(i))
		}
		nameParts = []string{"primary"}
	} else {
		keys, nameParts, err = pl.IndexKeys(on.Desc, st.Exprs)
		if err != nil {
			return nil, err
		}
	}
	name := st.Name
	if name == "" {
		name = on.Name + "_" + strings.Join(nameParts, "_") + "_idx"
		for i := 1; ; i++ {
			if _, taken := sn.lookup(parse.ObjectName{Name: name}); !taken {
				break
			}
			name = fmt.Sprintf("%s_%s_idx%d", on.Name, strings.Join(nameParts, "_"), i)
		}
	} else if err := sn.freeName(parse.ObjectName{Name: name}); err != nil {
		if st.IfNotExists {
			return tagf("CREATE INDEX"), nil
		}
		return nil, err
	}
	if st.Unique {
		if err := s.checkUniqueIndex(ctx, on, name, keys); err != nil {
			return nil, err
		}
	}
	// The index maintains its relation: a view's query is inlined, any
	// other relation is read with a Get.
	var p plan.Plan
	deps := []plan.GlobalID{on.ID}
	if on.Kind == KindView {
		vq, err := sn.defs.viewQuery(on)
		if err != nil {
			return nil, err
		}
		q, err := pl.PlanRelation(vq)
		if err != nil {
			return nil, err
		}
		p, deps = q.Plan, append(pl.Referenced(), on.ID)
	} else {
		p = plan.NewGet(on.ID)
	}
	if _, err := s.engine.backend.CreateItem(ctx, Item{
		Schema: SchemaPublic, Name: name, Kind: KindIndex, Desc: on.Desc, SQL: st.SQL, Cluster: cluster,
		On: on.ID, Keys: keys, Plan: &p, DependsOn: deps, Owner: on.Owner,
	}); err != nil {
		return nil, err
	}
	return tagf("CREATE INDEX"), nil
}

// drop handles DROP TABLE | VIEW | MATERIALIZED VIEW | INDEX.
func (s *Session) drop(ctx context.Context, d *pg.DropStmt) (*Result, error) {
	kinds := map[pg.ObjectType]ItemKind{
		pg.ObjectType_OBJECT_TABLE: KindTable, pg.ObjectType_OBJECT_VIEW: KindView,
		pg.ObjectType_OBJECT_MATVIEW: KindMaterializedView, pg.ObjectType_OBJECT_INDEX: KindIndex,
	}
	kind, ok := kinds[d.RemoveType]
	if !ok {
		return nil, sqlerr.Unsupported("DROP " + strings.TrimPrefix(d.RemoveType.String(), "OBJECT_"))
	}
	var names []parse.ObjectName
	for _, o := range d.Objects {
		var parts []string
		for _, p := range o.GetList().GetItems() {
			parts = append(parts, p.GetString_().GetSval())
		}
		switch len(parts) {
		case 1:
			names = append(names, parse.ObjectName{Name: parts[0]})
		case 2:
			names = append(names, parse.ObjectName{Schema: parts[0], Name: parts[1]})
		default:
			return nil, sqlerr.New(sqlerr.SyntaxError, "improper qualified name")
		}
	}
	tag := "DROP " + strings.ToUpper(kindName(kind))
	return s.dropNamed(ctx, kind, names, d.MissingOk, d.Behavior == pg.DropBehavior_DROP_CASCADE, tag)
}

func (s *Session) dropSources(ctx context.Context, st *parse.DropSource) (*Result, error) {
	return s.dropNamed(ctx, KindSource, st.Names, st.IfExists, st.Cascade, "DROP SOURCE")
}

// dropNamed drops items by name, refusing (2BP01) when something else
// depends on them unless cascade is set.
func (s *Session) dropNamed(ctx context.Context, kind ItemKind, names []parse.ObjectName, ifExists, cascade bool, tag string) (*Result, error) {
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var roots []*Item
	for _, n := range names {
		it, ok := sn.lookup(n)
		if !ok {
			if ifExists {
				continue
			}
			if kind == KindIndex || kind == KindSource {
				return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "%s %q does not exist", kindName(kind), n.String())
			}
			return nil, undefinedRelation(n)
		}
		if it.Kind != kind {
			return nil, sqlerr.Errorf(sqlerr.WrongObjectType, "%q is not a %s", n.String(), kindName(kind))
		}
		if it.Schema == SchemaIntrospection {
			return nil, sqlerr.Errorf(sqlerr.InsufficientPrivilege, "cannot drop introspection relation %q", n.String())
		}
		if err := sn.checkOwner(s.user, it); err != nil {
			return nil, err
		}
		roots = append(roots, it)
	}
	if len(roots) == 0 {
		return &Result{Tag: tag}, nil
	}
	if !cascade {
		ids := make([]plan.GlobalID, len(roots))
		for i, r := range roots {
			ids[i] = r.ID
		}
		for _, dep := range sn.dependents(ids...) {
			// A source's subsources go with it, and a table's or a
			// materialized view's indexes with it, as in PostgreSQL.
			if dep.Kind == KindSource && kind == KindSource || ownedIndex(dep, roots...) || indexOn(dep, kind, roots) {
				continue
			}
			return nil, sqlerr.Errorf(sqlerr.DependentObjectsStillExist,
				"cannot drop %s %q: %s %q depends on it (use CASCADE to drop it too)", kindName(kind), roots[0].Name, kindName(dep.Kind), dep.Name)
		}
	}
	if err := s.dropItems(ctx, sn, roots); err != nil {
		return nil, err
	}
	return &Result{Tag: tag}, nil
}

// indexOn reports whether dep is an index directly on one of roots, which
// are tables or materialized views (kind): PostgreSQL drops those with
// their relation, without CASCADE.
func indexOn(dep *Item, kind ItemKind, roots []*Item) bool {
	if dep.Kind != KindIndex || (kind != KindTable && kind != KindMaterializedView) {
		return false
	}
	return slices.ContainsFunc(roots, func(r *Item) bool { return dep.On == r.ID })
}

// dropItems drops roots and everything depending on them, dependents
// first.
func (s *Session) dropItems(ctx context.Context, sn *snapshot, roots []*Item) error {
	if err := s.engine.backend.DropItems(ctx, sn.dropOrder(roots)); err != nil {
		return fmt.Errorf("drop: %w", err)
	}
	return nil
}

// dropOrder lists roots and everything depending on them, dependents
// first.
func (sn *snapshot) dropOrder(roots []*Item) []plan.GlobalID {
	ids := make([]plan.GlobalID, 0, len(roots))
	for _, r := range roots {
		ids = append(ids, r.ID)
	}
	all := sn.dependents(ids...)
	for _, r := range roots {
		all = append(all, r)
	}
	slices.SortFunc(all, func(a, b *Item) int { return b.ID.Compare(a.ID) })
	all = slices.CompactFunc(all, func(a, b *Item) bool { return a.ID == b.ID })
	drop := make([]plan.GlobalID, len(all))
	for i, it := range all {
		drop[i] = it.ID
	}
	return drop
}
