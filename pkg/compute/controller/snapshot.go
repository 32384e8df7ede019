package controller

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/loadgen"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// Snapshot is one read time held for a set of collections: every read
// that names it (PeekRequest.AsOf, Dataflow.AsOf) reads at Time, so that
// several reads, issued one after another, see one state of the data. The
// SQL layer's transaction blocks read through one (its time domain is
// every collection the block could read).
type Snapshot struct {
	time  frontier.Time
	holds map[plan.GlobalID]*ReadHold
}

// Time is the snapshot's read time.
func (s *Snapshot) Time() frontier.Time { return s.time }

// Holds reports whether the snapshot holds collection id at its time.
func (s *Snapshot) Holds(id plan.GlobalID) bool {
	_, ok := s.holds[id]
	return ok
}

// Release gives up every hold of the snapshot. Calling it again does
// nothing.
func (s *Snapshot) Release() {
	for _, h := range s.holds {
		h.Release()
	}
}

// HoldSnapshot picks one read time for the collections ids (and the
// load-generator clocks of the sources beside them), as a read of all of
// them at isolation iso would, and holds each collection readable there
// until the snapshot is released. The choice and the holds are made in
// one critical section, so no collection compacts past the time between
// them. Ids the controller does not know (dropped meanwhile) are left
// out: a read of one fails.
func (c *Controller) HoldSnapshot(ids []plan.GlobalID, generators []loadgen.Clock, iso Isolation) (*Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := make([]plan.GlobalID, 0, len(ids))
	for _, id := range ids {
		if _, _, err := c.liveInputLocked(id); err == nil {
			live = append(live, id)
		}
	}
	ts, err := c.chooseTimeLocked(live, generators, iso)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	snap := &Snapshot{time: ts, holds: make(map[plan.GlobalID]*ReadHold, len(live))}
	for _, id := range live {
		h, err := c.acquireHoldLocked(id, ts)
		if err != nil {
			for _, h := range snap.holds {
				h.released.Store(true)
				c.releaseHoldLocked(h.id, h.since)
			}
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		snap.holds[id] = h
	}
	return snap, nil
}
