package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// Reasons of a replica's hydration report.
const (
	// HydrationReasonHydrated: connected, and every maintained dataflow of the
	// cluster has produced output past its as_of on this replica.
	HydrationReasonHydrated = "Hydrated"
	// HydrationReasonHydrating: connected, some maintained dataflow is still
	// catching up.
	HydrationReasonHydrating = "Hydrating"
	// HydrationReasonNotConnected: the controller has no connection to the
	// replica (starting, restarting, or unreachable); whatever it hydrated
	// before is gone with the connection.
	HydrationReasonNotConnected = "NotConnected"
)

// DefaultHydrationInterval is how often ReportHydration re-reports.
const DefaultHydrationInterval = 250 * time.Millisecond

// HydrationReporter receives replicas' hydration; the kubernetes
// orchestrator implements it by writing the Hydrated condition, which the
// operator waits for before rolling the next replica of a cluster.
// Reports repeat while nothing changes, so implementations must make a
// repeated identical report cheap.
type HydrationReporter interface {
	SetHydrated(ctx context.Context, id orchestrator.ReplicaID, hydrated bool, reason, message string) error
}

// ReplicaHydration is one replica's hydration as the controller sees it.
type ReplicaHydration struct {
	ID       orchestrator.ReplicaID
	Hydrated bool
	Reason   string
	Message  string
}

// Hydration reports, for every replica, whether it hydrated every
// maintained dataflow of its cluster. A replica of a cluster without
// maintained dataflows is hydrated as soon as it is connected. Subscribe
// sinks, one-shot reads and the replica's introspection indexes do not
// count: they are not what a rollout must wait for.
func (c *Controller) Hydration() []ReplicaHydration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ReplicaHydration
	for _, cl := range c.clusters {
		for _, r := range cl.replicas {
			out = append(out, c.hydrationLocked(cl, r))
		}
	}
	slices.SortFunc(out, func(a, b ReplicaHydration) int {
		return strings.Compare(a.ID.String(), b.ID.String())
	})
	return out
}

func (c *Controller) hydrationLocked(cl *cluster, r *replica) ReplicaHydration {
	h := ReplicaHydration{ID: r.cfg.ID}
	if r.conns == nil {
		h.Reason = HydrationReasonNotConnected
		h.Message = "the controller is not connected to the replica"
		if r.lastError != "" {
			h.Message += ": " + r.lastError
		}
		return h
	}
	var total, pending int
	for _, col := range c.collections {
		if !maintainedLocked(cl, col) {
			continue
		}
		total++
		if !r.hydratedLocked(col) {
			pending++
		}
	}
	if pending > 0 {
		h.Reason = HydrationReasonHydrating
		h.Message = fmt.Sprintf("%d of %d maintained collections not hydrated yet", pending, total)
		return h
	}
	h.Hydrated = true
	h.Reason = HydrationReasonHydrated
	h.Message = fmt.Sprintf("all %d maintained collections hydrated", total)
	return h
}

// maintainedLocked says whether col is a maintained export of a dataflow of
// cl that a replica must hydrate before it can serve reads of it.
func maintainedLocked(cl *cluster, col *collection) bool {
	return col.kind == kindCompute && col.cluster == cl.name && !col.dropped && !col.introspection &&
		col.subscribe == nil && col.dataflow != nil &&
		col.dataflow.class == computepb.DataflowClass_DATAFLOW_CLASS_MAINTAINED
}

// ReportHydration reports every replica's hydration to rep every interval
// (DefaultHydrationInterval when <= 0) until ctx ends. It reports the
// current state rather than changes: the receiver may need to rewrite an
// unchanged report (the kubernetes orchestrator claims a newer generation
// once the operator has rolled the pods), and a failed write is retried by
// the next round. A replica that restarts reports NotConnected until it
// reconnected and hydrated again, as long as the restart outlasts one
// interval; a shorter one is invisible, which is harmless because the
// report is about the replica's current processes.
//
// Errors are logged once per replica until its report succeeds again.
func (c *Controller) ReportHydration(ctx context.Context, rep HydrationReporter, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultHydrationInterval
	}
	failing := map[orchestrator.ReplicaID]string{}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		live := map[orchestrator.ReplicaID]bool{}
		for _, h := range c.Hydration() {
			live[h.ID] = true
			err := rep.SetHydrated(ctx, h.ID, h.Hydrated, h.Reason, h.Message)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil && failing[h.ID] != err.Error():
				failing[h.ID] = err.Error()
				c.log.Info("Failed to report replica hydration; retrying", "replica", h.ID.String(), "error", err.Error())
			case err == nil && failing[h.ID] != "":
				delete(failing, h.ID)
				c.log.Info("Reported replica hydration again", "replica", h.ID.String(), "hydrated", h.Hydrated)
			}
		}
		for id := range failing {
			if !live[id] {
				delete(failing, id)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
