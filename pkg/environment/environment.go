package environment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/sql"
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
	// Superuser, when set, is the bootstrap superuser: Open makes sure the
	// catalog has it as a role with SUPERUSER and LOGIN (its password is
	// the front door's to check, not the catalog's).
	Superuser string
	// OrchestratorRollsReplicas says the orchestrator sequences replica
	// config changes itself (Kubernetes: the operator rolls one replica of a
	// cluster at a time, gated on its Hydrated condition). A change of
	// enable_compute_interactive_dataflows is then applied to every replica
	// at once; otherwise (local processes) the compute controller rolls the
	// replicas one at a time (controller.RollReplicas).
	OrchestratorRollsReplicas bool
}

// Environment implements sql.Backend over the catalog, storage and the
// compute controller. It is safe for concurrent use; DDL is serialised.
type Environment struct {
	cfg Config
	log logr.Logger

	// ddl serialises catalog changes with their effects.
	ddl sync.Mutex
	// decoded caches what statements read from the catalog.
	decoded decoded
	// rolls are the replica config changes being applied at once
	// (Config.OrchestratorRollsReplicas).
	rolls rolls
}

var _ sql.Backend = (*Environment)(nil)

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
	Arrangement plan.GlobalID `json:"arrangement,omitzero"`
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
	e := &Environment{cfg: cfg, log: cfg.Log, rolls: rolls{life: ctx}}
	if err := e.bootstrap(); err != nil {
		return nil, err
	}
	if err := e.ensureSuperuser(); err != nil {
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
		// Every role may use the first cluster, as every role may use a
		// fresh PostgreSQL database's public schema's functions: reads need
		// somewhere to run.
		if err := tx.SetGrant(catalog.Grant{Object: catalog.ClusterObject(DefaultCluster), Privileges: "U"}); err != nil {
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
	for _, k := range replicaParams {
		if _, ok := ps[k]; !ok {
			e.cfg.Compute.SetParameter(k, params[k])
		}
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
			// A catalogued table whose shard is gone lost its data: refuse to
			// start rather than serve it empty.
			if err := e.cfg.Storage.RequireShard(it.ID.String()); err != nil {
				return fmt.Errorf("recover table %s: %w", it.Name, err)
			}
			if err := e.cfg.Compute.CreateStorageCollection(it.ID); err != nil {
				return fmt.Errorf("recover table %s: %w", it.Name, err)
			}
		case sql.KindIndex, sql.KindMaterializedView:
			if err := e.installDataflow(it, byID); err != nil {
				return fmt.Errorf("recover %s %s: %w", it.Kind, it.Name, err)
			}
			reused++
		}
	}
	e.dropOrphanShards(items)
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

// dropOrphanShards drops the shards no catalogued table or materialized
// view owns: what a crash left between creating a table's shard and
// cataloguing it, or between uncataloguing an item and dropping its shard.
func (e *Environment) dropOrphanShards(items []sql.Item) {
	owned := map[string]bool{}
	for _, it := range items {
		if it.Kind == sql.KindTable || it.Kind == sql.KindMaterializedView {
			owned[it.ID.String()] = true
		}
	}
	for _, shard := range e.cfg.Storage.Shards() {
		if owned[shard] {
			continue
		}
		if err := e.cfg.Storage.DropShard(shard); err != nil {
			e.log.Error(err, "Failed to drop an orphan shard", "shard", shard)
			continue
		}
		e.log.Info("Dropped an orphan shard left by an interrupted CREATE or DROP", "shard", shard)
	}
}
