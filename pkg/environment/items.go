package environment

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/loadgen"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Items implements sql.Catalog.
func (e *Environment) Items(ctx context.Context) ([]sql.Item, error) {
	gen, err := e.cfg.Catalog.Generation()
	if err != nil {
		return nil, sqlerr.Convert(fmt.Errorf("read catalog: %w", err))
	}
	return get(&e.decoded.mu, &e.decoded.items, gen, e.decodeItems)
}

// Generation implements sql.Catalog: the catalog's generation, which
// every committed change to items, roles or grants advances.
func (e *Environment) Generation(context.Context) (uint64, error) {
	gen, err := e.cfg.Catalog.Generation()
	if err != nil {
		return 0, sqlerr.Convert(fmt.Errorf("read catalog generation: %w", err))
	}
	return gen, nil
}

// decodeItems reads and decodes every visible item.
func (e *Environment) decodeItems() ([]sql.Item, error) {
	cis, err := e.cfg.Catalog.Items()
	if err != nil {
		return nil, sqlerr.Convert(fmt.Errorf("read catalog: %w", err))
	}
	out := make([]sql.Item, 0, len(cis))
	for _, ci := range cis {
		it, err := fromCatalog(ci)
		if err != nil {
			return nil, err
		}
		if it.Kind == "" {
			continue // hidden
		}
		out = append(out, it)
	}
	return out, nil
}

func fromCatalog(ci catalog.Item) (sql.Item, error) {
	it := sql.Item{ID: plan.User(ci.ID), Name: ci.Name, Kind: sql.ItemKind(ci.Kind), SQL: ci.SQL, Cluster: ci.Cluster, Schema: sql.SchemaPublic, Owner: ci.Owner}
	if len(ci.Desc) > 0 {
		if err := json.Unmarshal(ci.Desc, &it.Desc); err != nil {
			return sql.Item{}, fmt.Errorf("decode item %s desc: %w", ci.Name, err)
		}
	}
	if ci.On != 0 {
		it.On = plan.User(ci.On)
	}
	if len(ci.Plan) > 0 {
		var x itemExtra
		if err := json.Unmarshal(ci.Plan, &x); err != nil {
			return sql.Item{}, fmt.Errorf("decode item %s plan: %w", ci.Name, err)
		}
		if x.Schema != "" {
			it.Schema = x.Schema
		}
		if x.Hidden {
			return sql.Item{}, nil
		}
		if x.System {
			it.ID, it.Name = plan.System(ci.ID), systemName(ci.Name)
		}
		it.Plan, it.Keys = x.Plan, x.Keys
		for _, d := range x.Deps {
			id, err := plan.ParseGlobalID(d)
			if err != nil {
				return sql.Item{}, fmt.Errorf("decode item %s: %w", ci.Name, err)
			}
			it.DependsOn = append(it.DependsOn, id)
		}
	}
	return it, nil
}

func arrangementOf(ci catalog.Item) plan.GlobalID {
	var x itemExtra
	if json.Unmarshal(ci.Plan, &x) == nil {
		return x.Arrangement
	}
	return plan.GlobalID{}
}

// CreateItem implements sql.Catalog.
func (e *Environment) CreateItem(ctx context.Context, item sql.Item) (sql.Item, error) {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	switch item.Kind {
	case sql.KindTable, sql.KindView, sql.KindIndex, sql.KindMaterializedView:
	case sql.KindSource:
		return sql.Item{}, sqlerr.Errorf(sqlerr.InternalError, "sources are created with CreateSource")
	default:
		return sql.Item{}, sqlerr.Unsupported("creating items of kind " + string(item.Kind))
	}
	if (item.Kind == sql.KindIndex || item.Kind == sql.KindMaterializedView) && item.Plan == nil {
		return sql.Item{}, sqlerr.Errorf(sqlerr.InternalError, "%s %s without a plan", item.Kind, item.Name)
	}
	desc, err := json.Marshal(item.Desc)
	if err != nil {
		return sql.Item{}, fmt.Errorf("encode desc: %w", err)
	}
	x := itemExtra{Schema: item.Schema, Plan: item.Plan, Keys: item.Keys}
	for _, d := range item.DependsOn {
		x.Deps = append(x.Deps, d.String())
	}
	// A table's shard exists before the catalog names it: a crash between
	// the two leaves an orphan shard, which recovery drops, never a
	// catalogued table without its data (which recovery refuses).
	var tableID uint64
	if item.Kind == sql.KindTable {
		if tableID, err = e.cfg.Catalog.AllocateID(); err != nil {
			return sql.Item{}, err
		}
		if err := e.cfg.Storage.CreateShard(plan.User(tableID).String()); err != nil {
			return sql.Item{}, fmt.Errorf("create table %s: %w", item.Name, err)
		}
	}
	var stored catalog.Item
	err = e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		if _, err := tx.ItemByName(item.Name); err == nil {
			return sqlerr.Errorf(sqlerr.DuplicateObject, "catalog item %q already exists", item.Name)
		}
		id := tableID
		if id == 0 {
			var err error
			if id, err = tx.AllocateID(); err != nil {
				return err
			}
		}
		if item.Kind == sql.KindMaterializedView {
			arr, err := tx.AllocateID()
			if err != nil {
				return err
			}
			x.Arrangement = plan.User(arr)
		}
		planJSON, err := json.Marshal(x)
		if err != nil {
			return err
		}
		stored = catalog.Item{ID: id, Name: item.Name, Kind: catalog.Kind(item.Kind), Cluster: item.Cluster, SQL: item.SQL, Desc: desc, Plan: planJSON, Owner: item.Owner}
		if item.On.Valid() {
			stored.On = item.On.N
		}
		for _, d := range item.DependsOn {
			if d.Kind == plan.KindUser {
				stored.DependsOn = append(stored.DependsOn, d.N)
			}
		}
		return tx.CreateItem(stored)
	})
	if err != nil {
		if tableID != 0 {
			_ = e.cfg.Storage.DropShard(plan.User(tableID).String())
		}
		return sql.Item{}, err
	}
	it, err := fromCatalog(stored)
	if err != nil {
		return sql.Item{}, err
	}
	// The catalog is durable first; now make it so. On failure the item is
	// removed again so that catalog and controller agree.
	undo := func(cause error) (sql.Item, error) {
		if derr := e.cfg.Catalog.Update(func(tx *catalog.Tx) error { return tx.DropItem(stored.ID) }); derr != nil {
			e.log.Error(derr, "Failed to roll back a catalog item", "item", it.Name)
		}
		return sql.Item{}, cause
	}
	switch it.Kind {
	case sql.KindTable:
		if err := e.cfg.Compute.CreateStorageCollection(it.ID); err != nil {
			_ = e.cfg.Storage.DropShard(it.ID.String())
			return undo(fmt.Errorf("create table %s: %w", it.Name, err))
		}
	case sql.KindIndex, sql.KindMaterializedView:
		items, err := e.Items(ctx)
		if err != nil {
			return undo(err)
		}
		if err := e.installDataflow(it, indexItems(items)); err != nil {
			return undo(sqlerr.Convert(err))
		}
	}
	return it, nil
}

// installDataflow creates the maintained dataflow of an index or
// materialized view (see installMaterializedView).
func (e *Environment) installDataflow(it sql.Item, items map[plan.GlobalID]sql.Item) error {
	d, err := e.dataflowFor(it, items)
	if err != nil {
		return err
	}
	df, err := controller.FromPlan(d)
	if err != nil {
		return err
	}
	if it.Kind == sql.KindMaterializedView {
		return e.installMaterializedView(it, df)
	}
	_, err = e.cfg.Compute.CreateDataflow(it.Cluster, df)
	return err
}

// dataflowFor renders the maintained dataflow of an index or materialized
// view: imports for its plan's Gets, a build unless the plan is a Get of
// an import, and one index export.
func (e *Environment) dataflowFor(it sql.Item, items map[plan.GlobalID]sql.Item) (*plan.DataflowDescription, error) {
	d := &plan.DataflowDescription{ID: it.ID, DebugName: it.Name, Class: plan.ClassMaintained, Until: frontier.Closed()}
	// Only items created before this one may be imported: the dataflow
	// then renders the same after a restart, when items are re-created in
	// id order, and replicas can reuse it.
	earlier := make(map[plan.GlobalID]sql.Item, len(items))
	for id, x := range items {
		if id.Compare(it.ID) < 0 {
			earlier[id] = x
		}
	}
	if readsIntrospection(*it.Plan, items) {
		// Each replica's introspection data describes that replica: a
		// maintained result over it would differ between replicas.
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "%s %s cannot be maintained over introspection relations", it.Kind, it.Name)
	}
	if err := e.addImports(d, *it.Plan, it.Cluster, earlier); err != nil {
		return nil, err
	}
	switch it.Kind {
	case sql.KindIndex:
		on := it.On
		if g := it.Plan.Get; g == nil || g.ID != on || !imported(d, on) {
			d.ObjectsToBuild = append(d.ObjectsToBuild, plan.Build{ID: on, Plan: *it.Plan})
		}
		d.IndexExports = []plan.IndexExport{{ID: it.ID, On: on, Key: it.Keys}}
	case sql.KindMaterializedView:
		sinkID, err := e.arrangement(it.ID)
		if err != nil {
			return nil, err
		}
		d.ID = sinkID
		d.ObjectsToBuild = append(d.ObjectsToBuild, plan.Build{ID: it.ID, Plan: *it.Plan})
		d.SubscribeSinks = []plan.SubscribeSink{{ID: sinkID, From: it.ID, Shard: it.ID.String(), UpTo: frontier.Closed()}}
	}
	return d, nil
}

func imported(d *plan.DataflowDescription, id plan.GlobalID) bool {
	for _, s := range d.SourceImports {
		if s.ID == id {
			return true
		}
	}
	for _, ix := range d.IndexImports {
		if ix.On == id {
			return true
		}
	}
	return false
}

func allColumnsN(n int) []expr.Expr {
	keys := make([]expr.Expr, n)
	for i := range keys {
		keys[i] = expr.Column(i)
	}
	return keys
}

// arrangement returns a materialized view's arrangement id.
func (e *Environment) arrangement(mv plan.GlobalID) (plan.GlobalID, error) {
	var ci catalog.Item
	err := e.cfg.Catalog.View(func(tx *catalog.Tx) error {
		var err error
		ci, err = tx.Item(mv.N)
		return err
	})
	if err != nil {
		return plan.GlobalID{}, err
	}
	arr := arrangementOf(ci)
	if arr.IsZero() {
		return plan.GlobalID{}, fmt.Errorf("materialized view %s has no arrangement id in the catalog", mv)
	}
	return arr, nil
}

// addImports adds an import for every collection p reads: an index of it
// on the cluster when there is one (preferring indexes, which are already
// arranged), its arrangement for a materialized view, the table's shard
// otherwise.
func (e *Environment) addImports(d *plan.DataflowDescription, p plan.Plan, cluster string, items map[plan.GlobalID]sql.Item) error {
	for _, id := range p.DependsOn() {
		if imported(d, id) {
			continue
		}
		it, ok := items[id]
		if !ok {
			return sqlerr.Errorf(sqlerr.UndefinedTable, "unknown relation %s", id)
		}
		if isIntrospection(it) {
			imp, err := e.introspectionImport(it, cluster)
			if err != nil {
				return err
			}
			d.IndexImports = append(d.IndexImports, imp)
			continue
		}
		if ix, ok := indexOn(items, id, cluster); ok {
			d.IndexImports = append(d.IndexImports, plan.IndexImport{ID: ix.ID, On: id, Key: ix.Keys, Desc: it.Desc})
			continue
		}
		switch it.Kind {
		case sql.KindTable:
			d.SourceImports = append(d.SourceImports, plan.SourceImport{ID: id, Desc: it.Desc, Connection: plan.SourceConnection{Kind: plan.SourceTable}})
		case sql.KindSource:
			opts, err := e.sourceOptions(id)
			if err != nil {
				return err
			}
			if it.Desc.Arity() == 0 {
				return sqlerr.Errorf(sqlerr.FeatureNotSupported, "source %s has no columns; read its subsources", it.Name)
			}
			d.SourceImports = append(d.SourceImports, plan.SourceImport{ID: id, Desc: it.Desc, Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: opts}})
		case sql.KindMaterializedView:
			// Stored like a table: any cluster reads its shard.
			d.SourceImports = append(d.SourceImports, plan.SourceImport{ID: id, Desc: it.Desc, Connection: plan.SourceConnection{Kind: plan.SourceTable}})
		default:
			return sqlerr.Errorf(sqlerr.FeatureNotSupported, "reading %s %s in a dataflow", it.Kind, it.Name)
		}
	}
	return nil
}

// indexOn finds an index of id maintained on cluster (the lowest id).
func indexOn(items map[plan.GlobalID]sql.Item, id plan.GlobalID, cluster string) (sql.Item, bool) {
	var best sql.Item
	found := false
	for _, it := range items {
		if it.Kind == sql.KindIndex && it.On == id && it.Cluster == cluster {
			if !found || it.ID.Compare(best.ID) < 0 {
				best, found = it, true
			}
		}
	}
	return best, found
}

// CreateSource implements sql.Catalog: a load-generator source. The
// generator's start time is fixed now and stored, so that every replica,
// and every replica after a restart, generates the same data. A generator
// with several outputs (AUCTION) gets one item per output (its
// subsources) beside the source item itself, which has no columns.
func (e *Environment) CreateSource(ctx context.Context, spec sql.SourceSpec) ([]sql.Item, error) {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	opts := map[string]string{}
	for k, v := range spec.Options {
		opts[k] = v
	}
	parsed, err := loadgen.ParseOptions(spec.Generator, opts)
	if err != nil {
		return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "%v", err)
	}
	// Tick 1, the snapshot, happens now: the source is readable with its
	// snapshot from the moment CREATE SOURCE returns (reads and dataflows
	// never pick an earlier time: controller.Dataflow.Generators).
	now := frontier.Time(time.Now().UnixMilli())
	start := now - min(now, frontier.Time(parsed.TickMS))
	opts["start"] = strconv.FormatUint(uint64(start), 10)
	parsed.Start = start
	gen, err := loadgen.New(parsed)
	if err != nil {
		return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "%v", err)
	}
	opts["generator"] = string(parsed.Kind)
	outputs := gen.Outputs()
	type made struct {
		name string
		desc row.RelationDesc
		opts map[string]string
	}
	var todo []made
	if len(outputs) == 1 {
		todo = append(todo, made{spec.Name, outputs[0].Desc, opts})
	} else {
		todo = append(todo, made{spec.Name, row.RelationDesc{}, opts})
		for _, o := range outputs {
			sub := maps.Clone(opts)
			sub["output"] = o.Name
			todo = append(todo, made{o.Name, o.Desc, sub})
		}
	}
	var stored []catalog.Item
	err = e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		for _, m := range todo {
			if _, err := tx.ItemByName(m.name); err == nil {
				return sqlerr.Errorf(sqlerr.DuplicateObject, "catalog item %q already exists", m.name)
			}
			id, err := tx.AllocateID()
			if err != nil {
				return err
			}
			desc, err := json.Marshal(m.desc)
			if err != nil {
				return err
			}
			ci := catalog.Item{ID: id, Name: m.name, Kind: catalog.KindSource, Cluster: spec.Cluster, SQL: spec.SQL, Desc: desc, Options: m.opts, Owner: spec.Owner}
			if err := tx.CreateItem(ci); err != nil {
				return err
			}
			stored = append(stored, ci)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []sql.Item
	for _, ci := range stored {
		it, err := fromCatalog(ci)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

// sourceOptions returns a source's connection options.
func (e *Environment) sourceOptions(id plan.GlobalID) (map[string]string, error) {
	var ci catalog.Item
	err := e.cfg.Catalog.View(func(tx *catalog.Tx) error {
		var err error
		ci, err = tx.Item(id.N)
		return err
	})
	return ci.Options, err
}

// DropItems implements sql.Catalog.
func (e *Environment) DropItems(ctx context.Context, ids []plan.GlobalID) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	for _, id := range ids {
		if id.Kind != plan.KindUser {
			return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "cannot drop system item %s", id)
		}
		var ci catalog.Item
		err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
			var err error
			if ci, err = tx.Item(id.N); err != nil {
				return err
			}
			return tx.DropItem(id.N)
		})
		if err != nil {
			return sqlerr.Convert(fmt.Errorf("drop %s: %w", id, err))
		}
		if err := e.releaseDropped(id, ci); err != nil {
			return err
		}
	}
	return nil
}

// releaseDropped releases what a dropped item held besides its catalog
// entry: its compute collection, its shard. A crash before this leaves
// shards no item owns, which recovery drops.
func (e *Environment) releaseDropped(id plan.GlobalID, ci catalog.Item) error {
	switch sql.ItemKind(ci.Kind) {
	case sql.KindTable:
		if err := e.cfg.Compute.DropCollection(id); err != nil {
			e.log.Error(err, "Failed to drop a table collection", "id", id.String())
		}
		if err := e.cfg.Storage.DropShard(id.String()); err != nil {
			return fmt.Errorf("drop table %s: %w", ci.Name, err)
		}
	case sql.KindIndex:
		if err := e.cfg.Compute.DropCollection(id); err != nil {
			e.log.Error(err, "Failed to drop an index", "id", id.String())
		}
	case sql.KindMaterializedView:
		if err := e.dropMaterializedView(id, arrangementOf(ci)); err != nil {
			return fmt.Errorf("drop materialized view %s: %w", ci.Name, err)
		}
	}
	return nil
}
