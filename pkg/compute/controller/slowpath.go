package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/readtrace"
)

// PeekDataflow answers a read that no index serves (the slow path): it
// installs df, a transient dataflow that imports indexes or tables and
// exports one transient index, at a timestamp chosen by iso over df's
// imports; peeks the export once at that timestamp; and drops the
// dataflow. With enable_compute_interactive_dataflows on, the dataflow is
// tagged OneShotRead. Every hold taken is released on every path. Nothing
// is installed before the cluster's read admission lets the read run
// (admission.go).
func (c *Controller) PeekDataflow(ctx context.Context, cluster string, df Dataflow, iso Isolation, finishing *plan.Finishing) (PeekResult, error) {
	return c.PeekDataflowOn(ctx, cluster, "", df, iso, finishing, "")
}

// PeekDataflowOn is PeekDataflow answered by one replica when replica is
// not empty (or when df reads introspection collections: then by any
// connected replica), at a time chosen from that replica's frontiers. The
// dataflow is still installed on every replica, as every dataflow is.
// spillDir is PeekRequest.SpillDir: a large answer of a one-shot read is
// as big as an index scan's and must not be held in memory either.
func (c *Controller) PeekDataflowOn(ctx context.Context, cluster, replica string, df Dataflow, iso Isolation, finishing *plan.Finishing, spillDir string) (PeekResult, error) {
	if len(df.IndexExports) != 1 || len(df.SubscribeSinks) != 0 {
		return PeekResult{}, fmt.Errorf("peek dataflow %s: want exactly one index export", df.ID)
	}
	target := df.IndexExports[0]
	start := time.Now()
	release, err := c.admit.acquire(ctx, cluster, readOneShot)
	if err != nil {
		return PeekResult{}, fmt.Errorf("peek dataflow %s: %w", df.ID, err)
	}
	defer release()
	readtrace.Observe(ctx, readtrace.Admission, start)
	start = time.Now()
	c.mu.Lock()
	cl, err := c.clusterLocked(cluster)
	if err != nil {
		c.mu.Unlock()
		return PeekResult{}, err
	}
	r, err := c.targetReplicaLocked(cl, replica, df.imports())
	if err != nil {
		c.mu.Unlock()
		return PeekResult{}, fmt.Errorf("peek dataflow %s: %w", df.ID, err)
	}
	var ts frontier.Time
	if r != nil {
		replica = r.cfg.ID.Replica
	}
	switch {
	case df.AsOf != nil:
		ts = *df.AsOf
	case r != nil:
		ts, err = c.chooseReplicaAsOfLocked(r, df.imports())
	default:
		ts, err = c.chooseTimeLocked(df.imports(), df.Generators, iso)
	}
	if err != nil {
		c.mu.Unlock()
		return PeekResult{}, fmt.Errorf("peek dataflow %s: %w", df.ID, err)
	}
	readtrace.Observe(ctx, readtrace.Timestamp, start)
	ctlStart := time.Now()
	df.Class = computepb.DataflowClass_DATAFLOW_CLASS_MAINTAINED
	if c.interactiveLocked() {
		df.Class = computepb.DataflowClass_DATAFLOW_CLASS_ONE_SHOT_READ
	}
	if err := c.createDataflowLocked(cl, df, ts, c.cfg.ReadPolicyLag); err != nil {
		c.mu.Unlock()
		return PeekResult{}, err
	}
	col := c.collections[target]
	// The peek's own hold; the policy hold is dropped with the dataflow.
	hold, err := c.acquireHoldLocked(target, ts)
	if err != nil {
		c.dropLocked(col)
		c.mu.Unlock()
		return PeekResult{}, err
	}
	// A one-shot dataflow is read at ts and nothing later: drop it now so
	// that it goes as soon as the peek's hold does.
	c.dropLocked(col)
	class := df.Class
	c.mu.Unlock()
	return c.peekHeld(ctx, PeekRequest{Cluster: cluster, Target: target, Isolation: iso, Finishing: finishing, Replica: replica,
		SpillDir: spillDir}, hold, class, ctlStart)
}
