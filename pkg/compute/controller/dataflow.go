package controller

import (
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/loadgen"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// Dataflow is what the controller needs to know of a dataflow description:
// its imports and exports, its class, and how to encode it at a given
// as_of. The plan package's DataflowDescription is adapted to it (see
// FromPlan); tests use literal values.
type Dataflow struct {
	// ID names the dataflow in logs and Schedule; by convention the id of
	// its first export.
	ID plan.GlobalID
	// IndexImports are compute collections (indexes) of the same cluster.
	IndexImports []plan.GlobalID
	// SourceImports are storage collections (tables) read through storage.
	SourceImports []plan.GlobalID
	// IndexExports are the indexes the dataflow maintains.
	IndexExports []plan.GlobalID
	// SubscribeSinks are subscribe sinks the dataflow feeds.
	SubscribeSinks []plan.GlobalID
	// Generators are the clocks of the load-generator sources it reads,
	// which every replica generates itself (no controller collection):
	// their snapshot is at their first tick, and at any wall-clock time
	// they are complete up to their latest tick (chooseTimeLocked).
	Generators []loadgen.Clock
	// Class tags the dataflow for placement on two-runtime replicas.
	Class computepb.DataflowClass
	// AsOf, when set, is a one-shot read's time, held by the caller (a
	// Snapshot): PeekDataflow then chooses none.
	AsOf *frontier.Time
	// Encode renders the description as its protocol message with the
	// given as_of and class. It must be deterministic: replicas compare
	// descriptions to reuse dataflows after a reconnect.
	Encode func(asOf frontier.Time, class computepb.DataflowClass) (*computepb.DataflowDescription, error)
}

// exports lists every collection the dataflow produces.
func (d *Dataflow) exports() []plan.GlobalID {
	out := make([]plan.GlobalID, 0, len(d.IndexExports)+len(d.SubscribeSinks))
	out = append(out, d.IndexExports...)
	return append(out, d.SubscribeSinks...)
}

// imports lists every collection the dataflow reads.
func (d *Dataflow) imports() []plan.GlobalID {
	out := make([]plan.GlobalID, 0, len(d.IndexImports)+len(d.SourceImports))
	out = append(out, d.IndexImports...)
	return append(out, d.SourceImports...)
}

// dataflow is a dataflow installed in a cluster.
type dataflow struct {
	desc  Dataflow
	asOf  frontier.Time
	class computepb.DataflowClass
	// seq orders dataflows by creation, the order the history replays them
	// in (a dataflow's imports are always created before it).
	seq uint64
}
