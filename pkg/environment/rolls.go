package environment

import (
	"context"
	"sync"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// configApplier hands one replica's changed config to the orchestrator
// without waiting for the replica (*controller.Controller, which logs the
// replica's return and hydration from the frontiers it receives).
type configApplier interface {
	ApplyReplicaConfig(ctx context.Context, cfg orchestrator.ReplicaConfig) error
}

// rolls applies replica config changes to every replica at once, for an
// orchestrator that sequences the rollout itself (the operator on
// Kubernetes): each replica's config goes to the orchestrator without
// waiting for another replica or for its hydration. A newer change
// cancels the calls of an older one still in flight; they all end with the
// context Open was given.
type rolls struct {
	life context.Context

	mu     sync.Mutex
	cancel context.CancelFunc
}

// applyAtOnce applies cfgs in the background, one goroutine per replica.
func (r *rolls) applyAtOnce(c configApplier, cfgs []orchestrator.ReplicaConfig, log logr.Logger) {
	r.mu.Lock()
	if r.cancel != nil {
		r.cancel()
	}
	ctx, cancel := context.WithCancel(r.life)
	r.cancel = cancel
	r.mu.Unlock()
	for _, cfg := range cfgs {
		go func() {
			err := c.ApplyReplicaConfig(ctx, cfg)
			switch {
			case ctx.Err() != nil:
				// Superseded or shutting down: the newer roll or the next
				// start applies the config.
			case err != nil:
				log.Error(err, "Failed to reconfigure a replica", "replica", cfg.ID.String())
			default:
				log.Info("Replica config applied; the orchestrator rolls it", "replica", cfg.ID.String())
			}
		}()
	}
}
