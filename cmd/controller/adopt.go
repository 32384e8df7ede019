package main

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/environment"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/sql"
)

// Import of user-applied replicas (kubernetes orchestrator only). The orchestrator adopts a
// ComputeReplica a user applied for a cluster of the catalog (it labels it for this
// controller, so the operator waits for its Hydrated condition when rolling it); the adopter
// then adds it to the catalog as if CREATE CLUSTER REPLICA had named it, so that the
// controller connects to it, reports its hydration, rolls it when the interactive flag flips,
// and DROP CLUSTER REPLICA removes it.
//
// The hazard is re-importing a replica that a DROP is removing: DROP deletes the catalog
// entry first and the object after, so for a moment an adopted object exists that the
// catalog lacks. Every DROP therefore passes through droppingBackend, which records a
// tombstone before the catalog changes, and the adopter reads the catalog before checking
// tombstones, so that it either still sees the replica in the catalog or sees the tombstone.
// Tombstones outlive a successful DROP by tombstoneGrace, which covers the orchestrator's
// cache still listing the deleted object.

// defaultAdoptInterval is how often user-applied replicas are looked for.
const defaultAdoptInterval = 5 * time.Second

// tombstoneGrace is how long a finished DROP keeps its replica from being imported.
const tombstoneGrace = time.Minute

// adoptedLister is what the adopter needs of the orchestrator.
type adoptedLister interface {
	AdoptedReplicas(ctx context.Context) ([]orchestrator.ReplicaConfig, error)
}

// importReporter, when the orchestrator implements it, publishes the outcome of an import
// on the replica's object (a condition and an event), beside the log.
type importReporter interface {
	ImportFailed(ctx context.Context, id orchestrator.ReplicaID, cause error) error
	Imported(ctx context.Context, id orchestrator.ReplicaID) error
}

// replicaCreator is what the adopter needs of the environment.
type replicaCreator interface {
	CreateReplica(ctx context.Context, cluster string, spec sql.ReplicaSpec) error
}

type adopter struct {
	src adoptedLister
	cat *catalog.Catalog
	env replicaCreator
	log logr.Logger
	now func() time.Time

	mu sync.Mutex
	// replicas and clusters being dropped (zero time) or dropped (until the time).
	replicas map[orchestrator.ReplicaID]time.Time
	clusters map[string]time.Time
}

func newAdopter(src adoptedLister, cat *catalog.Catalog, env replicaCreator, log logr.Logger) *adopter {
	return &adopter{src: src, cat: cat, env: env, log: log, now: time.Now,
		replicas: map[orchestrator.ReplicaID]time.Time{}, clusters: map[string]time.Time{}}
}

// run imports every interval until ctx ends.
func (a *adopter) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := a.importOnce(ctx); err != nil && ctx.Err() == nil {
			a.log.Error(err, "Failed to import user-applied replicas")
		}
	}
}

// importOnce adds the adopted replicas the catalog lacks to it.
func (a *adopter) importOnce(ctx context.Context) error {
	// The catalog first, then the tombstones (see above).
	cls, err := a.cat.Clusters()
	if err != nil {
		return err
	}
	rs, err := a.cat.Replicas("")
	if err != nil {
		return err
	}
	adopted, err := a.src.AdoptedReplicas(ctx)
	if err != nil {
		return err
	}
	for _, cfg := range adopted {
		id := cfg.ID
		switch {
		case !slices.ContainsFunc(cls, func(c catalog.Cluster) bool { return c.Name == id.Cluster }):
			continue
		case slices.ContainsFunc(rs, func(r catalog.Replica) bool { return r.Cluster == id.Cluster && r.Name == id.Replica }):
			continue
		case a.dropping(id):
			continue
		}
		err := a.env.CreateReplica(ctx, id.Cluster, sql.ReplicaSpec{Name: id.Replica, Processes: cfg.Processes, Workers: cfg.Workers})
		if err != nil {
			// A concurrent CREATE CLUSTER REPLICA of the same name, or a shape the catalog
			// refuses: log and let the next round look again.
			a.log.Error(err, "Failed to import a user-applied replica", "replica", id.String())
			if r, ok := a.src.(importReporter); ok {
				if rerr := r.ImportFailed(ctx, id, err); rerr != nil {
					a.log.Error(rerr, "Failed to record an import failure", "replica", id.String())
				}
			}
			continue
		}
		a.log.Info("Imported a user-applied replica into the catalog", "replica", id.String(),
			"processes", cfg.Processes, "workers", cfg.Workers)
		if r, ok := a.src.(importReporter); ok {
			if err := r.Imported(ctx, id); err != nil {
				a.log.Error(err, "Failed to record an import", "replica", id.String())
			}
		}
	}
	return nil
}

// dropping says whether id or its cluster is being dropped or was dropped recently.
func (a *adopter) dropping(id orchestrator.ReplicaID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	live := func(until time.Time) bool { return until.IsZero() || now.Before(until) }
	if until, ok := a.replicas[id]; ok && live(until) {
		return true
	}
	until, ok := a.clusters[id.Cluster]
	return ok && live(until)
}

// dropStarted records a DROP before it changes the catalog; the returned func records how
// it ended (a failed DROP keeps its tombstone: the catalog may have lost the replica while
// its object remains).
func (a *adopter) dropStarted(id orchestrator.ReplicaID, cluster bool) func(error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	set := func(until time.Time) {
		if cluster {
			a.clusters[id.Cluster] = until
		} else {
			a.replicas[id] = until
		}
	}
	set(time.Time{})
	return func(err error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if err == nil {
			set(a.now().Add(tombstoneGrace))
		}
		// Forget expired tombstones so the maps stay small.
		now := a.now()
		for k, until := range a.replicas {
			if !until.IsZero() && now.After(until) {
				delete(a.replicas, k)
			}
		}
		for k, until := range a.clusters {
			if !until.IsZero() && now.After(until) {
				delete(a.clusters, k)
			}
		}
	}
}

// droppingBackend is the environment as pgwire sees it, telling the adopter about DROPs
// before they start.
type droppingBackend struct {
	*environment.Environment
	a *adopter
}

// DropReplica implements sql.Clusters.
func (b droppingBackend) DropReplica(ctx context.Context, cluster, name string) error {
	done := b.a.dropStarted(orchestrator.ReplicaID{Cluster: cluster, Replica: name}, false)
	err := b.Environment.DropReplica(ctx, cluster, name)
	done(err)
	return err
}

// DropCluster implements sql.Clusters.
func (b droppingBackend) DropCluster(ctx context.Context, name string) error {
	done := b.a.dropStarted(orchestrator.ReplicaID{Cluster: name}, true)
	err := b.Environment.DropCluster(ctx, name)
	done(err)
	return err
}

var _ sql.Backend = droppingBackend{}
