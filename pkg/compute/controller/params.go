package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// rolloutTimeout bounds how long a replica reconfiguration waits for the
// new incarnation to connect and hydrate before moving on.
const rolloutTimeout = 2 * time.Minute

// Parameter returns a system parameter's value ("" when unset).
func (c *Controller) Parameter(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.params[name]
}

// SetParameter sets a system parameter and sends it to every replica.
func (c *Controller) SetParameter(name, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.params[name] == value {
		return
	}
	c.params[name] = value
	cmd := &computepb.Command{Kind: &computepb.Command_UpdateConfiguration{UpdateConfiguration: &computepb.UpdateConfiguration{
		Parameters: map[string]string{name: value},
	}}}
	for _, cl := range c.clusters {
		for _, r := range cl.replicas {
			r.sendLocked(cmd)
		}
	}
}

// RollReplicas applies changed replica configs one replica at a time in
// the background (ReconfigureReplica each), so that a cluster keeps a
// hydrated replica throughout and the caller is not blocked by the
// rollout. A newer roll supersedes an older one still in progress.
func (c *Controller) RollReplicas(cfgs []orchestrator.ReplicaConfig) {
	c.mu.Lock()
	if c.rollCancel != nil {
		c.rollCancel()
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.rollCancel = cancel
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cancel()
		for _, cfg := range cfgs {
			if err := c.ReconfigureReplica(ctx, cfg); err != nil {
				if ctx.Err() == nil {
					c.log.Error(err, "Failed to roll a replica", "replica", cfg.ID.String())
				}
				return
			}
		}
	}()
}

// ReconfigureReplica applies a changed replica config through the
// orchestrator (which replaces the processes) and waits until the replica
// reconnected and hydrated every collection, so that callers rolling
// several replicas do it one at a time and a cluster keeps a hydrated
// replica throughout. It fails when that does not happen within the
// rollout timeout.
func (c *Controller) ReconfigureReplica(ctx context.Context, cfg orchestrator.ReplicaConfig) error {
	c.mu.Lock()
	cl, err := c.clusterLocked(cfg.ID.Cluster)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	r, ok := cl.replicas[cfg.ID.Replica]
	if !ok {
		c.mu.Unlock()
		return fmt.Errorf("reconfigure %s: no such replica", cfg.ID)
	}
	if r.cfg == cfg {
		c.mu.Unlock()
		return nil
	}
	r.cfg = cfg // connectOnce reads it under the same mutex
	epoch := r.epoch
	c.mu.Unlock()
	if err := c.cfg.Orchestrator.EnsureReplica(ctx, cfg); err != nil {
		return fmt.Errorf("reconfigure %s: %w", cfg.ID, err)
	}
	deadline := time.Now().Add(rolloutTimeout)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		done := r.epoch > epoch && r.conns != nil
		for _, col := range c.collections {
			if done && col.kind == kindCompute && !col.introspection && col.cluster == cl.name && !col.dropped && !r.hydratedLocked(col) {
				done = false
			}
		}
		c.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	// Stop the rollout here: rolling the next replica too could leave the
	// cluster without a hydrated replica.
	return fmt.Errorf("reconfigure %s: not connected and hydrated within %v; rollout stopped", cfg.ID, rolloutTimeout)
}
