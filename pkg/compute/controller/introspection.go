package controller

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// ErrUnknownReplica is returned for a read that names a replica the
// cluster does not have.
var ErrUnknownReplica = errors.New("unknown replica")

// introspectionLagIntervals is how many refresh intervals an introspection
// collection's since trails the furthest replica's write frontier. The
// frontier is the furthest of all replicas while a read uses one replica's
// own frontier, so the lag must cover replicas that are a little behind.
const introspectionLagIntervals = 30

// loggingConfig is a cluster's introspection configuration, sent in every
// replica's CreateInstance.
type loggingConfig struct {
	// ids maps relation name to the GlobalId of its index.
	ids      map[string]plan.GlobalID
	interval time.Duration
}

func (l *loggingConfig) proto() *computepb.LoggingConfig {
	if l == nil {
		return nil
	}
	indexes := make(map[string]*computepb.GlobalId, len(l.ids))
	for name, id := range l.ids {
		indexes[name] = protocol.GlobalIDToProto(id)
	}
	return &computepb.LoggingConfig{IntervalMs: uint64(l.interval.Milliseconds()), Indexes: indexes}
}

// EnableIntrospection makes every replica of cluster maintain the
// introspection relations, relation name -> index GlobalId ("s<N>"),
// refreshed every interval. Replicas receive it in CreateInstance, so it
// must be called before the cluster's replicas are created: a replica
// process enables logging once, on its first CreateInstance.
//
// Each index becomes a collection of the cluster. Its contents differ per
// replica (each describes itself): reads of it go to one replica (see
// PeekRequest.Replica) at a time that replica has completed.
func (c *Controller) EnableIntrospection(cluster string, ids map[string]plan.GlobalID, interval time.Duration) error {
	if len(ids) == 0 {
		return fmt.Errorf("enable introspection on %s: no relations", cluster)
	}
	if interval <= 0 {
		interval = time.Second
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, err := c.clusterLocked(cluster)
	if err != nil {
		return err
	}
	if cl.logging != nil {
		return fmt.Errorf("enable introspection on %s: %w", cluster, ErrExists)
	}
	for _, id := range ids {
		if _, ok := c.collections[id]; ok {
			return fmt.Errorf("enable introspection on %s: collection %s: %w", cluster, id, ErrExists)
		}
	}
	lag := max(c.cfg.ReadPolicyLag, introspectionLagIntervals*interval)
	for _, id := range ids {
		col := newCollection(id, kindCompute, 0, lag)
		col.cluster = cl.name
		col.introspection = true
		c.collections[id] = col
		col.policy, _ = c.acquireHoldLocked(id, 0) // readable: since == asOf
	}
	cl.logging = &loggingConfig{ids: maps.Clone(ids), interval: interval}
	return nil
}

// IntrospectionIDs returns a cluster's introspection indexes, relation
// name -> GlobalId, or nil when introspection is off.
func (c *Controller) IntrospectionIDs(cluster string) map[string]plan.GlobalID {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.clusters[cluster]
	if !ok || cl.logging == nil {
		return nil
	}
	return maps.Clone(cl.logging.ids)
}

// readsIntrospectionLocked reports whether any input is an introspection
// collection.
func (c *Controller) readsIntrospectionLocked(inputs []plan.GlobalID) bool {
	for _, id := range inputs {
		if col, ok := c.collections[id]; ok && col.introspection {
			return true
		}
	}
	return false
}

// targetReplicaLocked resolves the replica a read must go to: the named
// one, or for a read of introspection data with none named, any connected
// replica (the first by name). An empty result means every replica may
// answer.
func (c *Controller) targetReplicaLocked(cl *cluster, named string, inputs []plan.GlobalID) (*replica, error) {
	if named != "" {
		r, ok := cl.replicas[named]
		if !ok {
			return nil, fmt.Errorf("cluster %q has no replica %q: %w", cl.name, named, ErrUnknownReplica)
		}
		return r, nil
	}
	if !c.readsIntrospectionLocked(inputs) {
		return nil, nil
	}
	names := slices.Sorted(maps.Keys(cl.replicas))
	if len(names) == 0 {
		return nil, fmt.Errorf("cluster %q has no replicas to read introspection data from: %w", cl.name, ErrUnknownReplica)
	}
	for _, n := range names {
		if cl.replicas[n].conns != nil {
			return cl.replicas[n], nil
		}
	}
	// None is connected: wait for the first to come (the read is
	// cancellable).
	return cl.replicas[names[0]], nil
}

// chooseReplicaAsOfLocked picks the read time of a read answered by r
// alone: the latest time complete on r in every input, never below an
// input's since. Other replicas' frontiers play no part, so a read never
// waits for them. When r has not reported an input yet, the read is at the
// oracle's time (r answers once it gets there).
func (c *Controller) chooseReplicaAsOfLocked(r *replica, inputs []plan.GlobalID) (frontier.Time, error) {
	var maxSince frontier.Time
	minWrite := frontier.Closed()
	reported := true
	for _, id := range inputs {
		col, st, err := c.liveInputLocked(id)
		if err != nil {
			return 0, err
		}
		maxSince = max(maxSince, st)
		w := col.write
		if col.kind == kindCompute {
			rf, ok := r.frontiers[id]
			if !ok || r.conns == nil {
				reported = false
				continue
			}
			w = rf.write
		}
		minWrite = frontier.Meet(minWrite, w)
	}
	if !reported {
		// Reading before r's first report would see nothing (the
		// relations' times are the replica's clock); read now instead, and
		// let the replica answer at its next refresh.
		return max(maxSince, c.now()), nil
	}
	if wt, ok := minWrite.Time(); ok && wt > 0 {
		return max(maxSince, wt-1), nil
	}
	return maxSince, nil
}
