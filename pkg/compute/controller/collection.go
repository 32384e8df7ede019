package controller

import (
	"fmt"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// collectionKind says who maintains a collection and so where its
// compaction goes.
type collectionKind int

const (
	// kindCompute collections (indexes, subscribe sinks, transient indexes)
	// are maintained by the cluster's replicas.
	kindCompute collectionKind = iota
	// kindStorage collections (tables) live in the controller's storage;
	// their write frontier is the shard's upper.
	kindStorage
)

// collection is the controller's view of one collection. All fields are
// guarded by the controller's mutex.
type collection struct {
	id      plan.GlobalID
	kind    collectionKind
	cluster string // empty for storage collections
	asOf    frontier.Time
	// holds counts every read hold, including the read policy's and those
	// of dependent dataflows; since is its frontier.
	holds *frontier.Holds
	// since is the last since applied (AllowCompaction sent); it never
	// regresses.
	since frontier.Frontier
	// write is the furthest write frontier any replica (or storage) reported.
	write frontier.Frontier
	// policy keeps since lag behind write; nil once the collection is
	// dropped by the user.
	policy *ReadHold
	lag    time.Duration
	// inputs are this collection's holds on the collections it reads, kept
	// at its own since.
	inputs []*ReadHold
	// dataflow is set for compute collections created by a dataflow: the
	// dataflow's id (the first export), shared by its exports.
	dataflow *dataflow
	// dropped is set once the user dropped the collection.
	dropped bool
	// subscribe is set for subscribe sinks.
	subscribe *subscription
	// introspection is set for a cluster's introspection indexes, whose
	// contents differ per replica.
	introspection bool
}

// newCollection returns a collection readable from asOf with no holds.
func newCollection(id plan.GlobalID, kind collectionKind, asOf frontier.Time, lag time.Duration) *collection {
	return &collection{
		id: id, kind: kind, asOf: asOf,
		holds: frontier.NewHolds(),
		since: frontier.At(asOf),
		write: frontier.At(asOf),
		lag:   lag,
	}
}

// readableAt reports whether t is in [since, ...), the times a new hold or
// peek may use.
func (c *collection) readableAt(t frontier.Time) bool {
	return c.since.LessEqualTime(t)
}

// policyTarget is where the read policy wants its hold: lag behind write,
// never before asOf.
func (c *collection) policyTarget() frontier.Time {
	wt, ok := c.write.Time()
	if !ok {
		// A closed write frontier: everything is final; keep the hold where
		// the last time is readable.
		return c.policyHoldTime()
	}
	lagMs := frontier.Time(c.lag.Milliseconds())
	if wt <= lagMs {
		return c.asOf
	}
	return max(c.asOf, wt-lagMs)
}

func (c *collection) policyHoldTime() frontier.Time {
	if c.policy == nil {
		return c.asOf
	}
	return c.policy.since
}

func (c *collection) String() string {
	return fmt.Sprintf("%s(since=%v write=%v)", c.id, c.since, c.write)
}
