package environment

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/storage"
)

// recordingOrchestrator records every config it is given; its replicas
// never start (Status: not found), so none ever hydrates.
type recordingOrchestrator struct {
	mu          sync.Mutex
	interactive map[string]bool // replicas given Interactive: true
	changed     chan struct{}
}

func (o *recordingOrchestrator) EnsureReplica(_ context.Context, cfg orchestrator.ReplicaConfig) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if cfg.Interactive {
		o.interactive[cfg.ID.Replica] = true
		select {
		case o.changed <- struct{}{}:
		default:
		}
	}
	return nil
}

func (o *recordingOrchestrator) RemoveReplica(context.Context, orchestrator.ReplicaID) error {
	return nil
}

func (o *recordingOrchestrator) ListReplicas(context.Context) ([]orchestrator.ReplicaID, error) {
	return nil, nil
}

func (o *recordingOrchestrator) Status(context.Context, orchestrator.ReplicaID) (orchestrator.ReplicaStatus, error) {
	return orchestrator.ReplicaStatus{}, orchestrator.ErrNotFound
}

func (o *recordingOrchestrator) rolled() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for r := range o.interactive {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// TestFlagRollOwner: changing enable_compute_interactive_dataflows on an
// orchestrator that sequences rollouts itself (Kubernetes) gives every
// replica its new config at once, although none hydrates; with local
// processes the controller rolls one replica and waits for it to hydrate
// before the next.
func TestFlagRollOwner(t *testing.T) {
	replicas := []string{"blue", "green", DefaultReplica}
	for _, tc := range []struct {
		name              string
		orchestratorRolls bool
		want              int // replicas reconfigured while none hydrates
	}{
		{name: "kubernetes: all at once", orchestratorRolls: true, want: len(replicas)},
		{name: "local processes: one at a time", orchestratorRolls: false, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cat, err := catalog.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer cat.Close()
			store, err := storage.Open(filepath.Join(dir, "storage"), storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			orch := &recordingOrchestrator{interactive: map[string]bool{}, changed: make(chan struct{}, 1)}
			ctl := controller.New(controller.Config{Log: testr.New(t), Orchestrator: orch, Storage: store, Oracle: store.Oracle()})
			ctl.Start()
			defer ctl.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			env, err := Open(ctx, Config{Log: testr.New(t), Catalog: cat, Storage: store, Compute: ctl,
				ParamDefaults:             map[string]string{controller.ParamInteractiveDataflows: "off"},
				OrchestratorRollsReplicas: tc.orchestratorRolls})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range replicas[:2] {
				if err := env.CreateReplica(ctx, DefaultCluster, sql.ReplicaSpec{Name: r, Size: "1"}); err != nil {
					t.Fatal(err)
				}
			}
			if err := env.SetSystemParameter(ctx, controller.ParamInteractiveDataflows, "on", false); err != nil {
				t.Fatal(err)
			}
			// Wait (by the configs seen, not by time) until the roll has
			// done all it can while no replica hydrates.
			for len(orch.rolled()) < tc.want {
				select {
				case <-orch.changed:
				case <-time.After(time.Minute):
					t.Fatalf("reconfigured %v after a minute, want %d replicas", orch.rolled(), tc.want)
				}
			}
			if got := orch.rolled(); len(got) != tc.want {
				t.Fatalf("reconfigured %v, want %d replicas", got, tc.want)
			}
			if tc.orchestratorRolls {
				if got, want := orch.rolled(), slices.Sorted(slices.Values(replicas)); !slices.Equal(got, want) {
					t.Fatalf("reconfigured %v, want %v", got, want)
				}
			}
		})
	}
}
