package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// ParamMaxResultSize bounds a peek's answer in bytes of encoded rows (0:
// unbounded). Replicas get it with the other parameters and refuse a
// larger answer; the controller enforces it again on what it accumulates
// from all of a replica's processes (in memory or spilled), since each
// process only sees its own part. Both fail the read with 54000.
const ParamMaxResultSize = "max_result_size"

// DefaultMaxResultSize is max_result_size when it is not set: 1 GiB, as
// Materialize's default, so no single read can fill the controller's
// memory or spill directory unnoticed.
const DefaultMaxResultSize = 1 << 30

// maxResultSizeLocked returns max_result_size in bytes (0: unbounded).
func (c *Controller) maxResultSizeLocked() uint64 {
	v, ok := c.params[ParamMaxResultSize]
	if !ok {
		return DefaultMaxResultSize
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return DefaultMaxResultSize // validated by the environment before it gets here
	}
	return n
}

// errReplicaGone is returned by ReconfigureReplica when the replica (or its
// cluster) was dropped while the rollout waited for it.
var errReplicaGone = errors.New("replica was dropped")

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
	if isAdmissionParam(name) {
		c.admit.setLimits(limitsFrom(c.params))
	}
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
// rollout. It does not give up on a replica that is slow to come back (a
// pod start on Kubernetes can take minutes): it waits, logging progress
// every RolloutLogInterval, and rolls the rest once it is back, so a roll
// never stops partway. A replica dropped meanwhile is skipped. A newer roll
// supersedes an older one still in progress; Close stops it.
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
		for i, cfg := range cfgs {
			err := c.ReconfigureReplica(ctx, cfg)
			switch {
			case ctx.Err() != nil:
				return // superseded or closing
			case errors.Is(err, errReplicaGone), errors.Is(err, ErrUnknownCluster):
				c.log.Info("Replica dropped during a rollout; skipping it", "replica", cfg.ID.String())
			case err != nil:
				// The orchestrator refused the config: the next replicas
				// still get theirs (this one keeps running as it was).
				c.log.Error(err, "Failed to roll a replica", "replica", cfg.ID.String())
			default:
				c.log.Info("Rolled a replica", "replica", cfg.ID.String(), "done", i+1, "of", len(cfgs))
			}
		}
	}()
}

// ReconfigureReplica applies a changed replica config through the
// orchestrator (which replaces the processes) and waits until the replica
// reconnected and hydrated every collection, so that callers rolling
// several replicas do it one at a time and a cluster keeps a hydrated
// replica throughout. It waits as long as that takes (logging every
// RolloutLogInterval) until ctx ends; it fails with errReplicaGone if the
// replica is dropped meanwhile. This is how local processes are rolled;
// an orchestrator that sequences rollouts itself (Kubernetes) is given
// each config with ApplyReplicaConfig instead.
func (c *Controller) ReconfigureReplica(ctx context.Context, cfg orchestrator.ReplicaConfig) error {
	cl, r, epoch, err := c.applyReplicaConfig(ctx, cfg)
	if err != nil || r == nil {
		return err
	}
	start := time.Now()
	nextLog := start.Add(c.cfg.RolloutLogInterval)
	for {
		done, gone, waiting := c.rolled(cl, r, epoch)
		if gone {
			return fmt.Errorf("reconfigure %s: %w", cfg.ID, errReplicaGone)
		}
		if done {
			return nil
		}
		if now := time.Now(); !now.Before(nextLog) {
			// Keep waiting: rolling the next replica too could leave the
			// cluster without a hydrated replica.
			c.log.Info(msgRolloutWaiting,
				"replica", cfg.ID.String(), "elapsed", now.Sub(start).Round(time.Second).String(), "waiting", waiting)
			nextLog = now.Add(c.cfg.RolloutLogInterval)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// msgRolloutWaiting is ReconfigureReplica's progress log.
const msgRolloutWaiting = "Replica rollout waiting for the replica to reconnect and hydrate"

// msgReconfiguredHydrated is logged once a replica given a config by
// ApplyReplicaConfig is back and hydrated.
const msgReconfiguredHydrated = "Replica reconfigured and hydrated"

// ApplyReplicaConfig applies a changed replica config through the
// orchestrator and returns without waiting: for an orchestrator that
// sequences the rollout itself (the operator on Kubernetes waits for each
// pod's Hydrated condition), so the controller keeps no second sequence.
// When the replica is back and has hydrated every collection of its
// cluster, the controller logs it from the frontiers it receives anyway
// (logRolledLocked); nothing polls. It fails with errReplicaGone if the
// replica is unknown.
func (c *Controller) ApplyReplicaConfig(ctx context.Context, cfg orchestrator.ReplicaConfig) error {
	_, r, epoch, err := c.applyReplicaConfig(ctx, cfg)
	if err != nil || r == nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r.roll = &rollWatch{epoch: epoch, start: time.Now()}
	c.logRolledLocked(r)
	return nil
}

// applyReplicaConfig gives cfg to the orchestrator and returns the replica
// with the epoch it had before, or a nil replica when cfg is already its
// config.
func (c *Controller) applyReplicaConfig(ctx context.Context, cfg orchestrator.ReplicaConfig) (*cluster, *replica, uint64, error) {
	c.mu.Lock()
	cl, err := c.clusterLocked(cfg.ID.Cluster)
	if err != nil {
		c.mu.Unlock()
		return nil, nil, 0, err
	}
	r, ok := cl.replicas[cfg.ID.Replica]
	if !ok {
		c.mu.Unlock()
		return nil, nil, 0, fmt.Errorf("reconfigure %s: %w", cfg.ID, errReplicaGone)
	}
	if r.cfg == cfg {
		c.mu.Unlock()
		return nil, nil, 0, nil
	}
	old := r.cfg
	r.cfg = cfg // connectOnce reads it under the same mutex
	epoch := r.epoch
	c.mu.Unlock()
	if err := c.cfg.Orchestrator.EnsureReplica(ctx, cfg); err != nil {
		// The processes were not replaced: remember the old config, so a
		// later roll applies this one again instead of skipping it.
		c.mu.Lock()
		if r.cfg == cfg {
			r.cfg = old
		}
		c.mu.Unlock()
		return nil, nil, 0, fmt.Errorf("reconfigure %s: %w", cfg.ID, err)
	}
	return cl, r, epoch, nil
}

// rollWatch is a config given by ApplyReplicaConfig whose completion is
// still to be logged: the replica's epoch before it, and when.
type rollWatch struct {
	epoch uint64
	start time.Time
}

// logRolledLocked logs, once, that replica r is back after the config
// ApplyReplicaConfig gave it and has hydrated every collection of its
// cluster. It runs when r connects and when a collection hydrates on r.
func (c *Controller) logRolledLocked(r *replica) {
	if r.roll == nil {
		return
	}
	if done, _ := c.rolledLocked(r.cluster, r, r.roll.epoch); !done {
		return
	}
	r.log.Info(msgReconfiguredHydrated, "elapsed", time.Since(r.roll.start).Round(time.Millisecond).String())
	r.roll = nil
}

// rolled reports whether replica r reconnected after epoch and
// hydrated every collection of its cluster, whether it (or the cluster)
// was dropped, and otherwise what it waits for.
func (c *Controller) rolled(cl *cluster, r *replica, epoch uint64) (done, gone bool, waiting string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clusters[cl.name] != cl || cl.replicas[r.cfg.ID.Replica] != r {
		return false, true, ""
	}
	done, waiting = c.rolledLocked(cl, r, epoch)
	return done, false, waiting
}

// rolledLocked reports whether replica r of cl reconnected after epoch
// and hydrated every collection of cl, and otherwise what it waits for.
func (c *Controller) rolledLocked(cl *cluster, r *replica, epoch uint64) (done bool, waiting string) {
	if r.epoch <= epoch || r.conns == nil {
		return false, "connection"
	}
	for _, col := range c.collections {
		if col.kind == kindCompute && !col.introspection && col.cluster == cl.name && !col.dropped && !r.hydratedLocked(col) {
			return false, "hydration of " + col.id.String()
		}
	}
	return true, ""
}
