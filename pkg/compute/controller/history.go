package controller

import (
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// historyLocked renders the reduced command history of a cluster: what a
// replica must be told, after Hello and before InitializationComplete, to
// reach the cluster's current state. It is derived from the state rather
// than recorded, which makes it reduced by construction:
//   - configuration is merged into one CreateInstance;
//   - each live dataflow appears once, re-based to the meet of its exports'
//     sinces (its latest compaction), followed by Schedule and an
//     AllowCompaction for any export whose since is further;
//   - dropped dataflows (every export's since closed) are absent;
//   - pending peeks are re-issued, since a replica that reconnects may be
//     the one that answers them.
func (c *Controller) historyLocked(cl *cluster) []*computepb.Command {
	return c.historyForLocked(cl, nil)
}

// replicaHistoryLocked is the history for a (re)connecting replica r:
// peeks addressed to another replica alone are left out, and a dataflow r
// was never sent is held back when r is near its memory limit
// (admitReplayLocked, memory.go).
func (c *Controller) replicaHistoryLocked(r *replica) []*computepb.Command {
	return c.historyForLocked(r.cluster, r)
}

// historyForLocked is the history for replica r, or the whole cluster's
// when r is nil.
func (c *Controller) historyForLocked(cl *cluster, r *replica) []*computepb.Command {
	params := make(map[string]string, len(c.params))
	for k, v := range c.params {
		params[k] = v
	}
	cmds := []*computepb.Command{{Kind: &computepb.Command_CreateInstance{CreateInstance: &computepb.CreateInstance{
		Parameters:         params,
		Logging:            cl.logging.proto(),
		PeekStashThreshold: peekStashThreshold,
		PeekStashChunkSize: peekStashChunkSize,
	}}}}
	dfs := make([]*dataflow, 0, len(cl.dataflows))
	for _, df := range cl.dataflows {
		dfs = append(dfs, df)
	}
	slices.SortFunc(dfs, func(a, b *dataflow) int { return int(a.seq) - int(b.seq) })
	for _, df := range dfs {
		asOf := c.exportsSinceLocked(df)
		t, ok := c.historyAsOfLocked(df)
		if !ok {
			continue // dropped everywhere but not yet forgotten
		}
		if r != nil && !c.admitReplayLocked(r, df) {
			continue
		}
		body, err := df.desc.Encode(t, df.class)
		if err != nil {
			c.log.Error(err, "Failed to encode a dataflow for the history", "dataflow", df.desc.ID)
			continue
		}
		cmds = append(cmds,
			&computepb.Command{Kind: &computepb.Command_CreateDataflow{CreateDataflow: &computepb.CreateDataflow{Dataflow: body}}},
			&computepb.Command{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: protocol.GlobalIDToProto(df.desc.ID)}}})
		for _, e := range df.desc.exports() {
			if col, ok := c.collections[e]; ok && asOf.Less(col.since) {
				cmds = append(cmds, &computepb.Command{Kind: &computepb.Command_AllowCompaction{AllowCompaction: &computepb.AllowCompaction{
					Id: protocol.GlobalIDToProto(e), Frontier: protocol.FrontierToProto(col.since),
				}}})
			}
		}
	}
	peeks := make([]*peek, 0, len(cl.peeks))
	for _, p := range cl.peeks {
		if r == nil || p.sendsTo(r.cfg.ID.Replica) {
			peeks = append(peeks, p)
		}
	}
	slices.SortFunc(peeks, func(a, b *peek) int { return a.started.Compare(b.started) })
	for _, p := range peeks {
		cmds = append(cmds, p.cmd)
	}
	return cmds
}

// exportsSinceLocked is the meet of df's exports' sinces.
func (c *Controller) exportsSinceLocked(df *dataflow) frontier.Frontier {
	asOf := frontier.Closed()
	for _, e := range df.desc.exports() {
		if col, ok := c.collections[e]; ok {
			asOf = frontier.Meet(asOf, col.since)
		}
	}
	return asOf
}

// historyAsOfLocked is the as_of df is replayed at: the meet of its
// exports' sinces, never before its original as_of; false once every
// export's since is closed.
func (c *Controller) historyAsOfLocked(df *dataflow) (frontier.Time, bool) {
	t, ok := c.exportsSinceLocked(df).Time()
	if !ok {
		return 0, false
	}
	return max(t, df.asOf), true
}

// HistorySize returns the length of a cluster's reduced history.
func (c *Controller) HistorySize(cluster string) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, err := c.clusterLocked(cluster)
	if err != nil {
		return 0, err
	}
	return len(c.historyLocked(cl)), nil
}
