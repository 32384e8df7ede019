package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/sql"
)

type fakeAdoptedLister []orchestrator.ReplicaConfig

func (f fakeAdoptedLister) AdoptedReplicas(context.Context) ([]orchestrator.ReplicaConfig, error) {
	return f, nil
}

// recordingCreator adds what it is asked to create to the catalog, as the environment does.
type recordingCreator struct {
	cat     *catalog.Catalog
	created []string
}

func (r *recordingCreator) CreateReplica(_ context.Context, cluster string, spec sql.ReplicaSpec) error {
	r.created = append(r.created, cluster+"."+spec.Name)
	return r.cat.Update(func(tx *catalog.Tx) error {
		return tx.PutReplica(catalog.Replica{Cluster: cluster, Name: spec.Name, Processes: spec.Processes, Workers: spec.Workers})
	})
}

func TestAdopterImportsOnlyWhatNoDropIsRemoving(t *testing.T) {
	cat, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if err := cat.Update(func(tx *catalog.Tx) error {
		for _, c := range []string{"prod", "dev"} {
			if err := tx.PutCluster(catalog.Cluster{Name: c}); err != nil {
				return err
			}
		}
		return tx.PutReplica(catalog.Replica{Cluster: "prod", Name: "r1", Processes: 1, Workers: 1})
	}); err != nil {
		t.Fatal(err)
	}
	cfg := func(cluster, name string) orchestrator.ReplicaConfig {
		return orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: cluster, Replica: name}, Processes: 2, Workers: 3}
	}
	lister := fakeAdoptedLister{
		cfg("prod", "r1"),    // already in the catalog
		cfg("prod", "blue"),  // imported
		cfg("gone", "x"),     // cluster not in the catalog
		cfg("prod", "green"), // being dropped
		cfg("dev", "d1"),     // its cluster is being dropped
	}
	creator := &recordingCreator{cat: cat}
	a := newAdopter(lister, cat, creator, testr.New(t))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a.now = func() time.Time { return now }

	dropGreen := a.dropStarted(orchestrator.ReplicaID{Cluster: "prod", Replica: "green"}, false)
	dropDev := a.dropStarted(orchestrator.ReplicaID{Cluster: "dev"}, true)
	if err := a.importOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"prod.blue"}; !slices.Equal(creator.created, want) {
		t.Fatalf("imported %v, want %v", creator.created, want)
	}
	rs, err := cat.Replicas("prod")
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(rs, func(r catalog.Replica) bool { return r.Name == "blue" }); i < 0 || rs[i].Processes != 2 || rs[i].Workers != 3 {
		t.Fatalf("catalog replicas %+v: want blue with the manifest's 2 x 3", rs)
	}

	// A finished DROP keeps its replica out while the orchestrator's cache may still list
	// it; a failed one keeps it out for good (the catalog may have lost it already).
	dropGreen(nil)
	dropDev(errors.New("replica removal failed"))
	creator.created = nil
	now = now.Add(tombstoneGrace / 2)
	if err := a.importOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(creator.created) != 0 {
		t.Fatalf("imported %v within the grace after a DROP", creator.created)
	}
	now = now.Add(tombstoneGrace)
	if err := a.importOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"prod.green"}; !slices.Equal(creator.created, want) {
		t.Fatalf("after the grace imported %v, want %v (dev's failed drop keeps d1 out)", creator.created, want)
	}
}

// reportingLister is an adoptedLister that also records import outcomes, as the
// kubernetes orchestrator does on the ComputeReplicas.
type reportingLister struct {
	fakeAdoptedLister
	failed, imported []string
}

func (r *reportingLister) ImportFailed(_ context.Context, id orchestrator.ReplicaID, cause error) error {
	r.failed = append(r.failed, id.String()+": "+cause.Error())
	return nil
}

func (r *reportingLister) Imported(_ context.Context, id orchestrator.ReplicaID) error {
	r.imported = append(r.imported, id.String())
	return nil
}

// refusingCreator refuses the replicas named in refuse and creates the others.
type refusingCreator struct {
	recordingCreator
	refuse string
}

func (r *refusingCreator) CreateReplica(ctx context.Context, cluster string, spec sql.ReplicaSpec) error {
	if spec.Name == r.refuse {
		return errors.New("replica name refused")
	}
	return r.recordingCreator.CreateReplica(ctx, cluster, spec)
}

// TestAdopterReportsImportOutcomes checks that an import the catalog refuses is reported to
// the orchestrator (which records an event and a condition), not only logged, and that a
// successful import is reported too.
func TestAdopterReportsImportOutcomes(t *testing.T) {
	cat, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if err := cat.Update(func(tx *catalog.Tx) error { return tx.PutCluster(catalog.Cluster{Name: "prod"}) }); err != nil {
		t.Fatal(err)
	}
	cfg := func(name string) orchestrator.ReplicaConfig {
		return orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "prod", Replica: name}, Processes: 1, Workers: 1}
	}
	lister := &reportingLister{fakeAdoptedLister: fakeAdoptedLister{cfg("good"), cfg("bad")}}
	a := newAdopter(lister, cat, &refusingCreator{recordingCreator: recordingCreator{cat: cat}, refuse: "bad"}, testr.New(t))
	if err := a.importOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"prod/bad: replica name refused"}; !slices.Equal(lister.failed, want) {
		t.Errorf("reported failures %q, want %q", lister.failed, want)
	}
	if want := []string{"prod/good"}; !slices.Equal(lister.imported, want) {
		t.Errorf("reported imports %q, want %q", lister.imported, want)
	}
}
