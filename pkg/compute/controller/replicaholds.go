package controller

import (
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// Replica import holds. A collection holds its inputs at its own since,
// which follows the furthest replica (write frontier minus the read lag).
// That is not enough for a replica that is behind: a replica that has just
// been sent a dataflow reads its storage imports from the dataflow's as_of,
// and if its first read takes longer than the lag, storage would have
// compacted past the as_of and the dataflow could never hydrate ("read
// before since"). So every replica holds every storage collection each of
// its dataflows imports, per (replica, dataflow):
//   - at the as_of the replica was sent (CreateDataflow, or the history of
//     a connection) until the replica reports progress;
//   - then at one below the dataflow's reported input frontier (the meet
//     over its exports), because a table source re-listens from one below
//     its upper after a broken stream;
//   - across reconnects (the replica process keeps reading storage while
//     its controller connection is down), moved back to the new history's
//     as_of if that is earlier;
//   - released when the dataflow is dropped (its exports' sinces closed) or
//     the replica is removed.
//
// The holds are ordinary counted read holds on the storage collection, so
// its since, and what storage is allowed to compact, is the meet of them,
// the read policy and the dependent collections' holds. A replica that is
// gone for good but not dropped keeps its tables from compacting past where
// it was; dropping the replica lets them go.

// dataflowImportHolds are one replica's holds on one dataflow's storage
// imports, one per import.
type dataflowImportHolds []*ReadHold

// storageImportsLocked lists df's imports that are storage collections.
func (c *Controller) storageImportsLocked(df *dataflow) []plan.GlobalID {
	var out []plan.GlobalID
	for _, id := range df.desc.SourceImports {
		if col, ok := c.collections[id]; ok && col.kind == kindStorage {
			out = append(out, id)
		}
	}
	return out
}

// holdImportsLocked makes r hold df's storage imports at asOf or earlier:
// a fresh hold is acquired at asOf, an existing one later than asOf is
// replaced by one at asOf (acquired before the old one is released, so
// since never passes either).
func (c *Controller) holdImportsLocked(r *replica, df *dataflow, asOf frontier.Time) {
	if c.hooks.skipReplicaImportHolds {
		return
	}
	id := df.desc.ID
	old := r.importHolds[id]
	var next dataflowImportHolds
	for _, in := range c.storageImportsLocked(df) {
		var prev *ReadHold
		for _, h := range old {
			if h.id == in {
				prev = h
			}
		}
		if prev != nil && prev.since <= asOf {
			next = append(next, prev)
			continue
		}
		h, err := c.acquireHoldLocked(in, asOf)
		if err != nil {
			// The caller chose asOf readable in every import, so this is a
			// bug; keep any older hold rather than none.
			c.log.Error(err, "Failed to hold a replica's dataflow import", "replica", r.cfg.ID.String(), "dataflow", id)
			if prev != nil {
				next = append(next, prev)
			}
			continue
		}
		next = append(next, h)
	}
	for _, h := range old {
		if !containsHold(next, h) {
			c.releaseLocked(h)
		}
	}
	if len(next) == 0 {
		delete(r.importHolds, id)
		return
	}
	r.importHolds[id] = next
}

func containsHold(hs []*ReadHold, h *ReadHold) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

// holdHistoryImportsLocked re-establishes r's import holds for the
// dataflows of a history just built for it: each at the as_of it was sent,
// or earlier where r already held it. Holds of dataflows no longer in the
// cluster are released.
func (c *Controller) holdHistoryImportsLocked(r *replica) {
	for id, df := range r.cluster.dataflows {
		if t, ok := c.historyAsOfLocked(df); ok {
			c.holdImportsLocked(r, df, t)
		} else {
			c.releaseImportHoldsLocked(r, id)
		}
	}
	for id := range r.importHolds {
		if _, ok := r.cluster.dataflows[id]; !ok {
			c.releaseImportHoldsLocked(r, id)
		}
	}
}

// advanceImportHoldsLocked moves r's holds for the dataflow exporting
// collection col to one below the dataflow's input frontier as r reports
// it (the meet over the dataflow's exports); never backwards, and not
// before every export was reported.
func (c *Controller) advanceImportHoldsLocked(r *replica, col *collection) {
	df := col.dataflow
	if df == nil {
		return
	}
	holds := r.importHolds[df.desc.ID]
	if len(holds) == 0 {
		return
	}
	input := frontier.Closed()
	for _, e := range df.desc.exports() {
		rf, ok := r.frontiers[e]
		if !ok {
			return
		}
		input = frontier.Meet(input, rf.input)
	}
	t, ok := input.Time()
	if !ok {
		// The replica has read everything (or dropped the dataflow): the
		// drop releases the holds.
		return
	}
	if t == 0 {
		return
	}
	for _, h := range holds {
		c.downgradeLocked(h, t-1)
	}
}

// releaseImportHoldsLocked releases r's holds for dataflow id.
func (c *Controller) releaseImportHoldsLocked(r *replica, id plan.GlobalID) {
	for _, h := range r.importHolds[id] {
		c.releaseLocked(h)
	}
	delete(r.importHolds, id)
}

// releaseAllImportHoldsLocked releases every import hold of a removed
// replica.
func (c *Controller) releaseAllImportHoldsLocked(r *replica) {
	for id := range r.importHolds {
		c.releaseImportHoldsLocked(r, id)
	}
}

// maybeReleaseDroppedDataflowLocked releases every replica's import holds for df once
// each of its exports' sinces is closed: replicas have been told to drop
// it.
func (c *Controller) maybeReleaseDroppedDataflowLocked(cl *cluster, df *dataflow) {
	for _, e := range df.desc.exports() {
		if col, ok := c.collections[e]; ok && !col.since.IsClosed() {
			return
		}
	}
	for _, r := range cl.replicas {
		c.releaseImportHoldsLocked(r, df.desc.ID)
	}
}
