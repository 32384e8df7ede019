package server

import (
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// PlanCodec converts the protocol's DataflowDescription to a
// plan.DataflowDescription (protocol.DataflowFromProto); Dataflow.Description
// is then a *plan.DataflowDescription.
type PlanCodec struct{}

// Decode implements Codec. A description that converts but does not
// validate, or whose id converts but a later field does not, is refused
// with an *InvalidDataflowError naming it.
func (PlanCodec) Decode(p *computepb.DataflowDescription) (*Dataflow, error) {
	d, err := protocol.DataflowFromProto(p)
	if err != nil {
		if id, idErr := protocol.GlobalIDFromProto(p.GetId()); idErr == nil {
			return nil, &InvalidDataflowError{ID: id, Err: err}
		}
		return nil, err
	}
	df := &Dataflow{ID: d.ID, AsOf: d.AsOf, Until: d.Until, Description: d}
	for _, e := range d.IndexExports {
		df.Indexes = append(df.Indexes, e.ID)
	}
	for _, s := range d.SubscribeSinks {
		df.Subscribes = append(df.Subscribes, s.ID)
	}
	if err := d.Validate(); err != nil {
		if !d.ID.Valid() {
			return nil, err // nothing to name it by
		}
		return nil, &InvalidDataflowError{ID: df.ID, Err: err}
	}
	return df, nil
}

// Compatible implements Codec with plan.Compatible.
func (PlanCodec) Compatible(running, desired *Dataflow) bool {
	r, ok1 := running.Description.(*plan.DataflowDescription)
	d, ok2 := desired.Description.(*plan.DataflowDescription)
	return ok1 && ok2 && plan.Compatible(r, d) == nil
}
