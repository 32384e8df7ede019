package controller

import (
	"sync/atomic"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// ReadHold keeps a collection readable at times at or after its since until
// it is released. Every hold must be released exactly once; Release is
// idempotent so that deferred releases on several paths are safe.
type ReadHold struct {
	id       plan.GlobalID
	since    frontier.Time
	owner    holdOwner
	released atomic.Bool
}

// holdOwner applies hold changes to the collections it owns.
type holdOwner interface {
	releaseHold(id plan.GlobalID, since frontier.Time)
	downgradeHold(id plan.GlobalID, from, to frontier.Time) error
}

// ID returns the held collection.
func (h *ReadHold) ID() plan.GlobalID { return h.id }

// Since returns the least time the hold keeps readable.
func (h *ReadHold) Since() frontier.Time { return h.since }

// Release gives the hold up. Calling it again does nothing.
func (h *ReadHold) Release() {
	if h == nil || !h.released.CompareAndSwap(false, true) {
		return
	}
	h.owner.releaseHold(h.id, h.since)
}
