package controller

import (
	"slices"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// Status is a snapshot of the controller for /api/status and tests.
type Status struct {
	Clusters    []ClusterStatus    `json:"clusters"`
	Collections []CollectionStatus `json:"collections"`
	ReadHolds   int                `json:"read_holds"`
}

// ClusterStatus describes a cluster.
type ClusterStatus struct {
	Name         string          `json:"name"`
	Replicas     []ReplicaStatus `json:"replicas"`
	Dataflows    int             `json:"dataflows"`
	PendingPeeks int             `json:"pending_peeks"`
	HistorySize  int             `json:"history_size"`
}

// ReplicaStatus describes a replica's connection and hydration.
type ReplicaStatus struct {
	Name      string `json:"name"`
	Processes int    `json:"processes"`
	Workers   int    `json:"workers"`
	Epoch     uint64 `json:"epoch"`
	Connected bool   `json:"connected"`
	LastError string `json:"last_error,omitempty"`
	// Hydrated lists the compute collections whose output frontier passed
	// their as_of on this replica; NotHydrated the others. The replica's
	// own introspection indexes are in neither.
	Hydrated    []plan.GlobalID `json:"hydrated"`
	NotHydrated []plan.GlobalID `json:"not_hydrated"`
	// MemoryNearLimit lists the processes whose last memory report said
	// they are near their memory limit: no new dataflow is sent to the
	// replica (memory.go).
	MemoryNearLimit []int `json:"memory_near_limit,omitempty"`
	// PeekLanes counts the processes whose peek lane is up (lane.go).
	PeekLanes int `json:"peek_lanes"`
}

// CollectionStatus describes a collection's frontiers.
type CollectionStatus struct {
	ID      plan.GlobalID `json:"id"`
	Kind    string        `json:"kind"`
	Cluster string        `json:"cluster,omitempty"`
	AsOf    uint64        `json:"as_of"`
	Since   string        `json:"since"`
	Write   string        `json:"write"`
	Holds   int           `json:"holds"`
	Dropped bool          `json:"dropped,omitempty"`
	// Replicas maps replica name to its write frontier for the collection.
	Replicas map[string]string `json:"replicas,omitempty"`
}

// Status returns a consistent snapshot and refreshes derived metrics.
func (c *Controller) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshMetricsLocked()
	st := Status{Clusters: []ClusterStatus{}, Collections: []CollectionStatus{}, ReadHolds: c.outstanding}
	for _, cl := range c.clusters {
		cs := ClusterStatus{Name: cl.name, Replicas: []ReplicaStatus{}, Dataflows: len(cl.dataflows), PendingPeeks: len(cl.peeks), HistorySize: len(c.historyLocked(cl))}
		for _, r := range cl.replicas {
			rs := ReplicaStatus{Name: r.cfg.ID.Replica, Processes: r.cfg.Processes, Workers: r.cfg.Workers,
				Epoch: r.epoch, Connected: r.conns != nil, LastError: r.lastError, Hydrated: []plan.GlobalID{}, NotHydrated: []plan.GlobalID{},
				MemoryNearLimit: r.nearLimitLocked()}
			for _, p := range r.conns {
				if p.lane != nil {
					rs.PeekLanes++
				}
			}
			for _, col := range c.collections {
				if col.kind != kindCompute || col.introspection || col.cluster != cl.name || col.dropped {
					continue
				}
				if r.hydratedLocked(col) {
					rs.Hydrated = append(rs.Hydrated, col.id)
				} else {
					rs.NotHydrated = append(rs.NotHydrated, col.id)
				}
			}
			slices.SortFunc(rs.Hydrated, plan.GlobalID.Compare)
			slices.SortFunc(rs.NotHydrated, plan.GlobalID.Compare)
			cs.Replicas = append(cs.Replicas, rs)
		}
		slices.SortFunc(cs.Replicas, func(a, b ReplicaStatus) int { return strings.Compare(a.Name, b.Name) })
		st.Clusters = append(st.Clusters, cs)
	}
	slices.SortFunc(st.Clusters, func(a, b ClusterStatus) int { return strings.Compare(a.Name, b.Name) })
	for _, col := range c.collections {
		cs := CollectionStatus{ID: col.id, Kind: "compute", Cluster: col.cluster, AsOf: uint64(col.asOf),
			Since: col.since.String(), Write: col.write.String(), Holds: holdCount(col), Dropped: col.dropped}
		if col.kind == kindStorage {
			cs.Kind = "storage"
		} else if cl := c.clusters[col.cluster]; cl != nil {
			cs.Replicas = map[string]string{}
			for name, r := range cl.replicas {
				if rf, ok := r.frontiers[col.id]; ok && r.conns != nil {
					cs.Replicas[name] = rf.write.String()
				}
			}
		}
		st.Collections = append(st.Collections, cs)
	}
	slices.SortFunc(st.Collections, func(a, b CollectionStatus) int { return a.ID.Compare(b.ID) })
	return st
}

func holdCount(col *collection) int {
	return int(col.holds.Len())
}
