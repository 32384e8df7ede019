package server

import (
	"context"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// reconcile ends a connection's initialization: it compares the dataflows
// the controller asked for with those running, keeps the compatible ones
// (without rebuilding, so without re-hydration), drops the rest, applies the
// buffered commands, and reports every frontier afresh.
//
// A dataflow with a subscribe sink is never kept: the updates it already
// emitted went to the previous controller, and the new one needs them from
// the as_of again.
func (s *Server) reconcile(ctx context.Context, c *conn) {
	kept := map[*dataflowState]bool{}
	reusedCmd := map[int]bool{}
	desiredExports := map[plan.GlobalID]bool{}
	for i, b := range c.buffered {
		if b.df == nil {
			continue
		}
		for _, id := range b.df.Exports() {
			desiredExports[id] = true
		}
		if ds := s.reusable(b.df); ds != nil && !kept[ds] {
			kept[ds] = true
			reusedCmd[i] = true
			for _, id := range ds.df.Exports() {
				// The new controller will not read below its own as_of;
				// reports start there.
				if col := s.st.collections[id]; col != nil {
					col.asOf = frontier.Join(col.asOf, b.df.AsOf)
				}
			}
		}
	}
	var reused, replaced, dropped int
	reused = len(kept)
	// Drop in a deterministic order (by name), not map order, so every
	// process of a replica issues the same sequence of drops.
	var stale []*dataflowState
	for ds := range s.st.dataflows {
		if !kept[ds] {
			stale = append(stale, ds)
		}
	}
	slices.SortFunc(stale, func(a, b *dataflowState) int {
		if c := a.df.ID.Compare(b.df.ID); c != 0 {
			return c
		}
		return slices.CompareFunc(a.df.Exports(), b.df.Exports(), plan.GlobalID.Compare)
	})
	for _, ds := range stale {
		wanted := false
		for _, id := range ds.df.Exports() {
			wanted = wanted || desiredExports[id]
		}
		if wanted {
			replaced++
		} else {
			dropped++
		}
		s.dropDataflow(ctx, ds)
	}
	s.metrics.Reconciled(reused, replaced, dropped)
	s.log.Info("Reconciled dataflows", "nonce", c.nonce, "reused", reused, "replaced", replaced, "dropped", dropped)

	c.phase = running
	buffered := c.buffered
	c.buffered = nil
	for i, b := range buffered {
		if reusedCmd[i] {
			continue
		}
		s.apply(ctx, c, b.cmd, b.df)
	}
	// Everything the new connection knows starts now.
	var cols []*collection
	for _, col := range s.st.collections {
		cols = append(cols, col)
	}
	slices.SortFunc(cols, func(a, b *collection) int { return a.id.Compare(b.id) })
	for _, col := range cols {
		s.reportFrontiers(c, col, &FrontiersEvent{ID: col.id, Write: col.write, Input: col.input, Output: col.output})
	}
	// Hydration is reported afresh too; not hydrated is what a connection
	// assumes of a collection it has not heard about.
	var hydrated []*collection
	for _, col := range cols {
		if col.hydrated {
			hydrated = append(hydrated, col)
		}
	}
	if len(hydrated) > 0 {
		c.respond(statusResponse(hydrated...))
	}
}

// reusable returns the running dataflow that can serve desired as it is, or
// nil.
func (s *Server) reusable(desired *Dataflow) *dataflowState {
	exports := desired.Exports()
	if len(exports) == 0 || len(desired.Subscribes) > 0 {
		return nil
	}
	col := s.st.collections[exports[0]]
	if col == nil {
		return nil
	}
	running := col.df.df
	if !sameSet(running.Exports(), exports) {
		return nil
	}
	for _, id := range exports {
		if c := s.st.collections[id]; c == nil || c.df != col.df {
			return nil // partly dropped
		}
	}
	if !s.codec.Compatible(running, desired) {
		return nil
	}
	return col.df
}

// dropDataflow drops every live export of ds from the runtime.
func (s *Server) dropDataflow(ctx context.Context, ds *dataflowState) {
	for _, id := range ds.df.Exports() {
		col, ok := s.st.collections[id]
		if !ok || col.df != ds {
			continue
		}
		if err := s.rt.AllowCompaction(ctx, id, frontier.Closed()); err != nil {
			s.log.Error(err, "Failed to drop collection during reconciliation", "id", id)
		}
		s.dropCollection(nil, col)
	}
	delete(s.st.dataflows, ds)
}

func sameSet(a, b []plan.GlobalID) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, plan.GlobalID.Compare)
	slices.SortFunc(b, plan.GlobalID.Compare)
	return slices.Equal(a, b)
}
