package environment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/loadgen"
	"github.com/tandemdb/tandem/pkg/compute/offload"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/placement"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/storage"
)

// Defaults of a fresh environment.
const (
	DefaultCluster   = "default"
	DefaultReplica   = "r1"
	DefaultProcesses = 1
	DefaultWorkers   = 2
)

// Config configures an Environment.
type Config struct {
	Log     logr.Logger
	Catalog *catalog.Catalog
	Storage *storage.Store
	Compute *controller.Controller
	// ReplicaLogLevel is passed to replicas the environment creates.
	ReplicaLogLevel string
	// ParamDefaults overrides system parameter defaults on the first start
	// of a fresh data directory (e.g. running the whole test suite with
	// enable_compute_interactive_dataflows on).
	ParamDefaults map[string]string
	// SpillDir holds large peek answers on their way to the client (see
	// controller.PeekRequest.SpillDir); empty means a directory under the
	// system's temporary directory. Left-over files are removed at Open.
	SpillDir string
}

// Environment implements sql.Backend over the catalog, storage and the
// compute controller. It is safe for concurrent use; DDL is serialised.
type Environment struct {
	cfg Config
	log logr.Logger

	// ddl serialises catalog changes with their effects.
	ddl sync.Mutex
}

var _ sql.Backend = (*Environment)(nil)

// params are the system parameters the environment knows, with defaults.
// It is never written to.
var params = map[string]string{
	controller.ParamInteractiveDataflows: "off",
	// Where index peek walks run on a replica (inline, budgeted, offload)
	// and how many records a worker walks before offloading.
	"peek_walk_mode":   "budgeted",
	"peek_walk_budget": "10000",
	// Which runtime of a two-runtime replica serves fast-path peeks on
	// maintained indexes (docs/design/read-routing.md).
	"peek_routing": "sealed_hint",
}

// normalizeParam validates a system parameter value and returns its
// canonical form.
func normalizeParam(name, value string) (string, error) {
	switch name {
	case controller.ParamInteractiveDataflows:
		b, err := parseBool(value)
		if err != nil {
			return "", fmt.Errorf("parameter %q requires a Boolean value", name)
		}
		return map[bool]string{true: "on", false: "off"}[b], nil
	case "peek_walk_mode":
		m, err := offload.ParseMode(value)
		if err != nil {
			return "", err
		}
		return m.String(), nil
	case "peek_walk_budget":
		n, err := strconv.Atoi(value)
		if err != nil || n <= 0 {
			return "", fmt.Errorf("parameter %q requires a positive integer", name)
		}
		return strconv.Itoa(n), nil
	case "peek_routing":
		p, err := placement.ParsePolicy(value)
		if err != nil {
			return "", err
		}
		return p.String(), nil
	}
	return value, nil
}

// itemExtra is the part of a sql.Item the catalog stores as its plan JSON.
type itemExtra struct {
	Schema string      `json:"schema,omitempty"`
	Plan   *plan.Plan  `json:"plan,omitempty"`
	Keys   []expr.Expr `json:"keys,omitempty"`
	On     string      `json:"on,omitempty"`
	Deps   []string    `json:"deps,omitempty"`
	// Arrangement is a materialized view's sink id: the compute collection
	// of the storage sink that writes its shard (named "arrangement" since
	// views were first kept as arrangements; catalogs keep the name).
	Arrangement string `json:"arrangement,omitempty"`
	// System marks the environment's own items (introspection), whose ids
	// are system ids; Hidden ones are not SQL items at all.
	System bool `json:"system,omitempty"`
	Hidden bool `json:"hidden,omitempty"`
}

// Open recovers the environment from its catalog: it creates the default
// cluster and replica on first start, then re-creates clusters, replicas,
// table collections and dataflows.
func Open(ctx context.Context, cfg Config) (*Environment, error) {
	if cfg.SpillDir == "" {
		cfg.SpillDir = filepath.Join(os.TempDir(), "tandem-peek-spill")
	}
	// Spill files of peeks of a previous run are nobody's.
	if old, err := filepath.Glob(filepath.Join(cfg.SpillDir, "peek-*.spill")); err == nil {
		for _, f := range old {
			_ = os.Remove(f)
		}
	}
	e := &Environment{cfg: cfg, log: cfg.Log}
	if err := e.bootstrap(); err != nil {
		return nil, err
	}
	if err := e.recover(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Environment) bootstrap() error {
	return e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		cls, err := tx.Clusters()
		if err != nil || len(cls) > 0 {
			return err
		}
		if err := tx.PutCluster(catalog.Cluster{Name: DefaultCluster}); err != nil {
			return err
		}
		for name, value := range e.cfg.ParamDefaults {
			if _, ok := params[name]; !ok {
				return fmt.Errorf("system parameter default %q: unrecognized parameter", name)
			}
			v, err := normalizeParam(name, value)
			if err != nil {
				return fmt.Errorf("system parameter default: %w", err)
			}
			if err := tx.SetParam(name, v); err != nil {
				return err
			}
		}
		return tx.PutReplica(catalog.Replica{Cluster: DefaultCluster, Name: DefaultReplica, Processes: DefaultProcesses, Workers: DefaultWorkers})
	})
}

func (e *Environment) recover(ctx context.Context) error {
	// Sinces stay where storage has them until every dataflow is back, so
	// that a materialized view resumes at its shard's upper even when its
	// inputs' read policies would already have moved past it.
	e.cfg.Compute.PauseReadPolicies()
	defer e.cfg.Compute.ResumeReadPolicies()
	ps, err := e.cfg.Catalog.Params()
	if err != nil {
		return err
	}
	for k, v := range ps {
		e.cfg.Compute.SetParameter(k, v)
	}
	cls, err := e.cfg.Catalog.Clusters()
	if err != nil {
		return err
	}
	for _, cl := range cls {
		if err := e.cfg.Compute.CreateCluster(cl.Name); err != nil {
			return err
		}
		if err := e.enableIntrospection(cl.Name); err != nil {
			return err
		}
	}
	items, err := e.Items(ctx)
	if err != nil {
		return err
	}
	byID := indexItems(items)
	var reused int
	for _, it := range items {
		switch it.Kind {
		case sql.KindTable:
			if err := e.cfg.Storage.CreateShard(it.ID.String()); err != nil {
				return err
			}
			if err := e.cfg.Compute.CreateStorageCollection(it.ID.String()); err != nil {
				return fmt.Errorf("recover table %s: %w", it.Name, err)
			}
		case sql.KindIndex, sql.KindMaterializedView:
			if err := e.installDataflow(it, byID); err != nil {
				return fmt.Errorf("recover %s %s: %w", it.Kind, it.Name, err)
			}
			reused++
		}
	}
	rs, err := e.cfg.Catalog.Replicas("")
	if err != nil {
		return err
	}
	for _, r := range rs {
		if err := e.cfg.Compute.CreateReplica(ctx, e.replicaConfig(r)); err != nil {
			return fmt.Errorf("recover replica %s.%s: %w", r.Cluster, r.Name, err)
		}
	}
	e.log.Info("Recovered the catalog", "items", len(items), "dataflows", reused, "clusters", len(cls), "replicas", len(rs))
	return nil
}

func (e *Environment) replicaConfig(r catalog.Replica) orchestrator.ReplicaConfig {
	return orchestrator.ReplicaConfig{
		ID:        orchestrator.ReplicaID{Cluster: r.Cluster, Replica: r.Name},
		Processes: r.Processes, Workers: r.Workers,
		Interactive: e.cfg.Compute.Parameter(controller.ParamInteractiveDataflows) == "on",
		LogLevel:    e.cfg.ReplicaLogLevel,
	}
}

func indexItems(items []sql.Item) map[plan.GlobalID]sql.Item {
	m := make(map[plan.GlobalID]sql.Item, len(items))
	for _, it := range items {
		m[it.ID] = it
	}
	return m
}

// --- Catalog ---

// Items implements sql.Catalog.
func (e *Environment) Items(ctx context.Context) ([]sql.Item, error) {
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
	it := sql.Item{ID: plan.User(ci.ID), Name: ci.Name, Kind: sql.ItemKind(ci.Kind), SQL: ci.SQL, Cluster: ci.Cluster, Schema: sql.SchemaPublic}
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

func arrangementOf(ci catalog.Item) string {
	var x itemExtra
	if json.Unmarshal(ci.Plan, &x) == nil {
		return x.Arrangement
	}
	return ""
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
	var stored catalog.Item
	err = e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		if _, err := tx.ItemByName(item.Name); err == nil {
			return sqlerr.Errorf(sqlerr.DuplicateObject, "catalog item %q already exists", item.Name)
		}
		id, err := tx.AllocateID()
		if err != nil {
			return err
		}
		if item.Kind == sql.KindMaterializedView {
			arr, err := tx.AllocateID()
			if err != nil {
				return err
			}
			x.Arrangement = plan.User(arr).String()
		}
		planJSON, err := json.Marshal(x)
		if err != nil {
			return err
		}
		stored = catalog.Item{ID: id, Name: item.Name, Kind: catalog.Kind(item.Kind), Cluster: item.Cluster, SQL: item.SQL, Desc: desc, Plan: planJSON}
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
		if err := e.cfg.Storage.CreateShard(it.ID.String()); err != nil {
			return undo(fmt.Errorf("create table %s: %w", it.Name, err))
		}
		if err := e.cfg.Compute.CreateStorageCollection(it.ID.String()); err != nil {
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

func allColumns(desc row.RelationDesc) []expr.Expr { return allColumnsN(desc.Arity()) }

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
	return plan.ParseGlobalID(arrangementOf(ci))
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
	start := frontier.Time(time.Now().UnixMilli())
	opts["start"] = strconv.FormatUint(uint64(start), 10)
	parsed, err := loadgen.ParseOptions(spec.Generator, opts)
	if err != nil {
		return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "%v", err)
	}
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
			ci := catalog.Item{ID: id, Name: m.name, Kind: catalog.KindSource, Cluster: spec.Cluster, SQL: spec.SQL, Desc: desc, Options: m.opts}
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
		switch sql.ItemKind(ci.Kind) {
		case sql.KindTable:
			if err := e.cfg.Compute.DropCollection(id.String()); err != nil {
				e.log.Error(err, "Failed to drop a table collection", "id", id.String())
			}
			if err := e.cfg.Storage.DropShard(id.String()); err != nil {
				return fmt.Errorf("drop table %s: %w", ci.Name, err)
			}
		case sql.KindIndex:
			if err := e.cfg.Compute.DropCollection(id.String()); err != nil {
				e.log.Error(err, "Failed to drop an index", "id", id.String())
			}
		case sql.KindMaterializedView:
			if err := e.dropMaterializedView(id, arrangementOf(ci)); err != nil {
				return fmt.Errorf("drop materialized view %s: %w", ci.Name, err)
			}
		}
	}
	return nil
}

// --- Tables ---

// WriteTable implements sql.Tables. The write is durable and visible to
// strict serializable reads when it returns.
func (e *Environment) WriteTable(ctx context.Context, id plan.GlobalID, updates []sql.RowDiff) error {
	rows := make([]storage.RowDiff, len(updates))
	for i, u := range updates {
		rows[i] = storage.RowDiff{Row: u.Row, Diff: u.Diff}
	}
	if _, err := e.cfg.Storage.Append(ctx, id.String(), rows); err != nil {
		return sqlerr.Convert(fmt.Errorf("write table %s: %w", id, err))
	}
	return nil
}

// --- System parameters ---

// SystemParameter implements sql.SystemParameters.
func (e *Environment) SystemParameter(ctx context.Context, name string) (string, error) {
	if _, ok := params[name]; !ok {
		return "", sqlerr.Errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	if v := e.cfg.Compute.Parameter(name); v != "" {
		return v, nil
	}
	return params[name], nil
}

// SetSystemParameter implements sql.SystemParameters. Changing
// enable_compute_interactive_dataflows rolls every replica, one at a time.
func (e *Environment) SetSystemParameter(ctx context.Context, name, value string, reset bool) error {
	def, ok := params[name]
	if !ok {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	if reset {
		value = def
	}
	value, err := normalizeParam(name, value)
	if err != nil {
		return sqlerr.Errorf(sqlerr.InvalidParameterValue, "%v", err)
	}
	e.ddl.Lock()
	defer e.ddl.Unlock()
	if err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		if reset {
			return tx.ResetParam(name)
		}
		return tx.SetParam(name, value)
	}); err != nil {
		return err
	}
	old := e.cfg.Compute.Parameter(name)
	e.cfg.Compute.SetParameter(name, value)
	if name == controller.ParamInteractiveDataflows && old != value {
		rs, err := e.cfg.Catalog.Replicas("")
		if err != nil {
			return err
		}
		var cfgs []orchestrator.ReplicaConfig
		for _, r := range rs {
			cfgs = append(cfgs, e.replicaConfig(r))
		}
		e.cfg.Compute.RollReplicas(cfgs)
	}
	return nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, errors.New("not a Boolean")
}

// SystemParameterNames implements sql.SystemParameters.
func (e *Environment) SystemParameterNames(ctx context.Context) []string {
	var out []string
	for n := range params {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// --- Clusters ---

// Clusters implements sql.Clusters.
func (e *Environment) Clusters(ctx context.Context) ([]sql.Cluster, error) {
	cls, err := e.cfg.Catalog.Clusters()
	if err != nil {
		return nil, err
	}
	st := e.cfg.Compute.Status()
	status := map[string]string{}
	for _, cs := range st.Clusters {
		for _, r := range cs.Replicas {
			s := "offline"
			switch {
			case r.Connected && len(r.NotHydrated) == 0:
				s = "ready"
			case r.Connected:
				s = "hydrating"
			}
			status[cs.Name+"."+r.Name] = s
		}
	}
	var out []sql.Cluster
	for _, cl := range cls {
		rs, err := e.cfg.Catalog.Replicas(cl.Name)
		if err != nil {
			return nil, err
		}
		c := sql.Cluster{Name: cl.Name}
		for _, r := range rs {
			c.Replicas = append(c.Replicas, sql.Replica{Name: r.Name, Size: sizeString(r.Processes, r.Workers),
				Processes: r.Processes, Workers: r.Workers, Status: status[cl.Name+"."+r.Name]})
		}
		out = append(out, c)
	}
	return out, nil
}

func sizeString(p, w int) string {
	if p == 1 {
		return strconv.Itoa(w)
	}
	return fmt.Sprintf("%dx%d", p, w)
}

// parseSize reads "W" (one process of W workers) or "PxW".
func parseSize(spec sql.ReplicaSpec) (processes, workers int, err error) {
	processes, workers = DefaultProcesses, DefaultWorkers
	if s := strings.TrimSpace(spec.Size); s != "" {
		p, w, ok := strings.Cut(strings.ToLower(s), "x")
		if !ok {
			p, w = "1", p
		}
		if processes, err = strconv.Atoi(p); err != nil || processes < 1 {
			return 0, 0, sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid replica size %q: want W or PxW", spec.Size)
		}
		if workers, err = strconv.Atoi(w); err != nil || workers < 1 {
			return 0, 0, sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid replica size %q: want W or PxW", spec.Size)
		}
	}
	if spec.Processes > 0 {
		processes = spec.Processes
	}
	if spec.Workers > 0 {
		workers = spec.Workers
	}
	return processes, workers, nil
}

// CreateCluster implements sql.Clusters.
func (e *Environment) CreateCluster(ctx context.Context, name string, replicas []sql.ReplicaSpec) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	var crs []catalog.Replica
	for _, spec := range replicas {
		p, w, err := parseSize(spec)
		if err != nil {
			return err
		}
		crs = append(crs, catalog.Replica{Cluster: name, Name: spec.Name, Processes: p, Workers: w})
	}
	err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		cls, err := tx.Clusters()
		if err != nil {
			return err
		}
		for _, c := range cls {
			if c.Name == name {
				return sqlerr.Errorf(sqlerr.DuplicateObject, "cluster %q already exists", name)
			}
		}
		if err := tx.PutCluster(catalog.Cluster{Name: name}); err != nil {
			return err
		}
		for _, r := range crs {
			if err := tx.PutReplica(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := e.cfg.Compute.CreateCluster(name); err != nil {
		return err
	}
	if err := e.enableIntrospection(name); err != nil {
		return err
	}
	for _, r := range crs {
		if err := e.cfg.Compute.CreateReplica(ctx, e.replicaConfig(r)); err != nil {
			return err
		}
	}
	return nil
}

// DropCluster implements sql.Clusters.
func (e *Environment) DropCluster(ctx context.Context, name string) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	if err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		if err := tx.DropCluster(name); err != nil {
			return err
		}
		return dropIntrospection(tx, name)
	}); err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster %q", name)
		}
		return err
	}
	return e.cfg.Compute.DropCluster(ctx, name)
}

// CreateReplica implements sql.Clusters.
func (e *Environment) CreateReplica(ctx context.Context, cluster string, spec sql.ReplicaSpec) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	p, w, err := parseSize(spec)
	if err != nil {
		return err
	}
	r := catalog.Replica{Cluster: cluster, Name: spec.Name, Processes: p, Workers: w}
	err = e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		existing, err := tx.Replicas(cluster)
		if err != nil {
			return err
		}
		for _, x := range existing {
			if x.Name == spec.Name {
				return sqlerr.Errorf(sqlerr.DuplicateObject, "replica %q of cluster %q already exists", spec.Name, cluster)
			}
		}
		return tx.PutReplica(r)
	})
	if err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster %q", cluster)
		}
		return err
	}
	return e.cfg.Compute.CreateReplica(ctx, e.replicaConfig(r))
}

// DropReplica implements sql.Clusters.
func (e *Environment) DropReplica(ctx context.Context, cluster, name string) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	if err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error { return tx.DropReplica(cluster, name) }); err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return sqlerr.Errorf(sqlerr.UndefinedObject, "unknown replica %q of cluster %q", name, cluster)
		}
		return err
	}
	return e.cfg.Compute.DropReplica(ctx, cluster, name)
}
