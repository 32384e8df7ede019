package disruption

import (
	"fmt"
	"sort"
	"strings"
)

// Condition type and reasons this package publishes.
const (
	TypeDisruptionAllowed = "DisruptionAllowed"

	// ReasonDraining: this replica's budget is open: its pods may be evicted.
	ReasonDraining = "Draining"
	// ReasonPeersHydrated: every other replica is hydrated; a drain may evict its pods.
	ReasonPeersHydrated = "PeersHydrated"
	// ReasonPeerDraining: another replica of the cluster holds the open budget.
	ReasonPeerDraining = "PeerDraining"
	// ReasonPeerNotHydrated: another replica is not hydrated; evictions wait for it.
	ReasonPeerNotHydrated = "PeerNotHydrated"
	// ReasonSingleReplica: the replica is alone in its cluster; a drain interrupts reads.
	ReasonSingleReplica = "SingleReplica"
)

// Single-replica policies (spec.disruption.singleReplica).
const (
	PolicyWait  = "Wait"
	PolicyAllow = "Allow"
)

// Event reasons.
const (
	EventDrainAllowed         = "DrainAllowed"
	EventDrainBlocked         = "DrainBlocked"
	EventDrainInterruptsReads = "DrainInterruptsReads"
	EventSingleReplica        = "SingleReplica"
)

// Replica is what the decision needs to know about one replica of the cluster.
type Replica struct {
	Name      string
	Processes int
	// Hydrated: serving reads (Available, hydrated when a controller manages it, not
	// rolling).
	Hydrated bool
	// DrainingNodes are the cordoned nodes that run live pods of the replica.
	DrainingNodes []string
	// Open: its budget allows evictions now (as observed).
	Open bool
	// Policy is the single-replica policy (PolicyWait or PolicyAllow; empty is Wait).
	Policy string
}

// Decision is the budget and condition of one replica.
type Decision struct {
	// MaxUnavailable for the replica's PodDisruptionBudget: 0 or its processes.
	MaxUnavailable int
	Status         bool
	Reason         string
	Message        string
	// Warning marks a condition whose event is a warning.
	Warning bool
	// Event is the event reason to record when the condition changes ("" for none).
	Event string
}

// Decide decides for every replica of cluster, by name.
func Decide(cluster string, replicas []Replica) map[string]Decision {
	rs := append([]Replica(nil), replicas...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
	out := make(map[string]Decision, len(rs))
	if len(rs) == 1 {
		out[rs[0].Name] = single(cluster, rs[0])
		return out
	}
	notHydrated := func(self string) []string {
		var names []string
		for _, r := range rs {
			if r.Name != self && !r.Hydrated {
				names = append(names, r.Name)
			}
		}
		return names
	}
	holder := ""
	for _, r := range rs {
		// Keep the open replica open while it is wanted or not back.
		if r.Open && len(notHydrated(r.Name)) == 0 && (len(r.DrainingNodes) > 0 || !r.Hydrated) {
			holder = r.Name
			break
		}
	}
	if holder == "" {
		for _, r := range rs {
			if len(r.DrainingNodes) > 0 && len(notHydrated(r.Name)) == 0 {
				holder = r.Name
				break
			}
		}
	}
	for _, r := range rs {
		var d Decision
		switch waiting := notHydrated(r.Name); {
		case r.Name == holder:
			d = Decision{MaxUnavailable: r.Processes, Status: true, Reason: ReasonDraining, Event: EventDrainAllowed,
				Message: fmt.Sprintf("its pods may be evicted (%s): every other replica of cluster %s is hydrated", drainingText(r), cluster)}
		case holder != "":
			d = Decision{Reason: ReasonPeerDraining,
				Message: fmt.Sprintf("%s of cluster %s may be evicted now; evictions of this replica wait until it is back%s", holder, cluster, drainSuffix(r))}
		case len(waiting) > 0:
			d = Decision{Reason: ReasonPeerNotHydrated,
				Message: fmt.Sprintf("evictions wait until %s of cluster %s %s hydrated%s", strings.Join(waiting, ", "), cluster, isAre(waiting), drainSuffix(r))}
		default:
			d = Decision{Status: true, Reason: ReasonPeersHydrated,
				Message: fmt.Sprintf("every other replica of cluster %s is hydrated: a drain may evict its pods once their node is cordoned (one replica of the cluster at a time)", cluster)}
		}
		if !d.Status && len(r.DrainingNodes) > 0 {
			d.Event, d.Warning = EventDrainBlocked, false
		}
		out[r.Name] = d
	}
	return out
}

// single decides for a replica alone in its cluster.
func single(cluster string, r Replica) Decision {
	if r.Policy == PolicyAllow {
		d := Decision{MaxUnavailable: r.Processes, Status: true, Reason: ReasonSingleReplica, Event: EventSingleReplica,
			Message: fmt.Sprintf("the only replica of cluster %s: a drain of a node running its pods interrupts reads of the cluster until they are back (disruption.singleReplica: Allow)", cluster)}
		if len(r.DrainingNodes) > 0 {
			d.Event, d.Warning = EventDrainInterruptsReads, true
			d.Message = fmt.Sprintf("the only replica of cluster %s: its pods may be evicted (%s), which interrupts reads of the cluster until they are back (disruption.singleReplica: Allow)", cluster, drainingText(r))
		}
		return d
	}
	d := Decision{Reason: ReasonSingleReplica, Event: EventSingleReplica,
		Message: fmt.Sprintf("the only replica of cluster %s: a drain of a node running its pods would interrupt reads, so it waits (disruption.singleReplica: Wait); add a replica to the cluster, or set Allow", cluster)}
	if len(r.DrainingNodes) > 0 {
		d.Event, d.Warning = EventDrainBlocked, true
		d.Message = fmt.Sprintf("the only replica of cluster %s: the drain of %s waits, since evicting its pods would interrupt reads (disruption.singleReplica: Wait); add a replica to the cluster, or set Allow", cluster, nodesText(r.DrainingNodes))
	}
	return d
}

func drainingText(r Replica) string {
	if len(r.DrainingNodes) == 0 {
		return "while they come back"
	}
	return "for the drain of " + nodesText(r.DrainingNodes)
}

func drainSuffix(r Replica) string {
	if len(r.DrainingNodes) == 0 {
		return ""
	}
	return "; the drain of " + nodesText(r.DrainingNodes) + " waits"
}

func nodesText(nodes []string) string {
	n := append([]string(nil), nodes...)
	sort.Strings(n)
	if len(n) == 1 {
		return "node " + n[0]
	}
	return "nodes " + strings.Join(n, ", ")
}

func isAre(names []string) string {
	if len(names) == 1 {
		return "is"
	}
	return "are"
}
