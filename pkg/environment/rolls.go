package environment

import (
	"context"
	"sync"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// reconfigurer applies one replica's changed config and waits until the
// replica is back and hydrated (*controller.Controller).
type reconfigurer interface {
	ReconfigureReplica(ctx context.Context, cfg orchestrator.ReplicaConfig) error
}

// rolls applies replica config changes to every replica at once, for an
// orchestrator that sequences the rollout itself: each replica's config
// goes to the orchestrator without waiting for another replica, and its
// return is only observed (logged). A newer change supersedes the waits of
// an older one; they all end with the context Open was given.
type rolls struct {
	life context.Context

	mu     sync.Mutex
	cancel context.CancelFunc
}

// applyAtOnce applies cfgs in the background, one goroutine per replica.
func (r *rolls) applyAtOnce(c reconfigurer, cfgs []orchestrator.ReplicaConfig, log logr.Logger) {
	r.mu.Lock()
	if r.cancel != nil {
		r.cancel()
	}
	ctx, cancel := context.WithCancel(r.life)
	r.cancel = cancel
	r.mu.Unlock()
	for _, cfg := range cfgs {
		go func() {
			err := c.ReconfigureReplica(ctx, cfg)
			switch {
			case ctx.Err() != nil:
				// Superseded or shutting down: the newer roll or the next
				// start applies the config.
			case err != nil:
				log.Error(err, "Failed to reconfigure a replica", "replica", cfg.ID.String())
			default:
				log.Info("Replica reconfigured and hydrated", "replica", cfg.ID.String())
			}
		}()
	}
}
