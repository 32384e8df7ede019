package controller

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// Materialized views. A materialized view is two collections: a storage
// collection (its shard, read like a table by every cluster) and the
// compute collection of the storage sink that writes the shard from a
// maintained dataflow on the view's cluster. The dataflow is created with
// CreateSinkDataflow, whose as_of never passes the shard's upper when the
// inputs allow it, so that a restarted dataflow resumes where the shard
// left off and its sink writes only what the shard lacks.

// ReadableAsOf returns the latest time readable in every input of df (the
// as_of a new dataflow would get): where a new materialized view's shard
// starts.
func (c *Controller) ReadableAsOf(df Dataflow) (frontier.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.chooseTimeLocked(df.imports(), df.Generators, serializable)
	if err != nil {
		return 0, fmt.Errorf("as_of of %s: %w", df.ID, err)
	}
	return t, nil
}

// CreateSinkDataflow installs the maintained dataflow of a materialized
// view whose storage sink writes the storage collection shard. Its as_of is
// the latest time readable in every input, but not beyond the shard's
// upper: at max(every input's since, min(that time, upper)). So after a
// restart the dataflow hydrates at the shard's upper and its sink finds the
// shard consistent with the snapshot; only if an input was compacted past
// the shard's upper does the as_of pass it (the shard then keeps its old
// contents until the as_of). It returns the as_of.
func (c *Controller) CreateSinkDataflow(cluster string, df Dataflow, shard plan.GlobalID) (frontier.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, err := c.clusterLocked(cluster)
	if err != nil {
		return 0, err
	}
	col, ok := c.collections[shard]
	if !ok || col.kind != kindStorage || col.dropped {
		return 0, fmt.Errorf("create dataflow %s: shard %s is not a storage collection: %w", df.ID, shard, ErrUnknownCollection)
	}
	upper, ok := col.write.Time()
	if !ok {
		return 0, fmt.Errorf("create dataflow %s: shard %s is closed: %w", df.ID, shard, ErrUnknownCollection)
	}
	latest, err := c.chooseTimeLocked(df.imports(), df.Generators, serializable)
	if err != nil {
		return 0, fmt.Errorf("create dataflow %s: %w", df.ID, err)
	}
	asOf := max(c.maxSinceLocked(df.imports()), min(latest, upper))
	if err := c.createDataflowLocked(cl, df, asOf, c.cfg.ReadPolicyLag); err != nil {
		return 0, err
	}
	return asOf, nil
}

// maxSinceLocked is the latest since of the inputs (each exists: callers
// checked with chooseAsOfLocked).
func (c *Controller) maxSinceLocked(inputs []plan.GlobalID) frontier.Time {
	var out frontier.Time
	for _, id := range inputs {
		if col, ok := c.collections[id]; ok {
			if st, ok := col.since.Time(); ok {
				out = max(out, st)
			}
		}
	}
	return out
}

// PauseReadPolicies keeps every read policy hold where it is (write
// frontiers still advance) until ResumeReadPolicies. The environment pauses
// them while it recovers: a table registered from the catalog would
// otherwise let its since jump to its upper minus the lag before the
// materialized views reading it are re-created, and those could then not
// resume at their shards' uppers.
func (c *Controller) PauseReadPolicies() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.policiesPaused = true
}

// ResumeReadPolicies moves every read policy hold to its target again.
func (c *Controller) ResumeReadPolicies() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.policiesPaused = false
	for _, col := range c.collections {
		if col.policy != nil {
			c.downgradeLocked(col.policy, col.policyTarget())
		}
	}
}
