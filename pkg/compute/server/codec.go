package server

import (
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// PlanCodec decodes plan.DataflowDescriptions; Dataflow.Description is then
// a *plan.DataflowDescription.
type PlanCodec struct{}

// Decode implements Codec.
func (PlanCodec) Decode(b []byte) (*Dataflow, error) {
	d, err := plan.Unmarshal(b)
	if err != nil {
		return nil, err
	}
	df := &Dataflow{Name: d.ID.String(), AsOf: d.AsOf, Until: d.Until, Description: d}
	for _, e := range d.IndexExports {
		df.Indexes = append(df.Indexes, e.ID.String())
	}
	for _, s := range d.SubscribeSinks {
		df.Subscribes = append(df.Subscribes, s.ID.String())
	}
	return df, nil
}

// Compatible implements Codec with plan.Compatible.
func (PlanCodec) Compatible(running, desired *Dataflow) bool {
	r, ok1 := running.Description.(*plan.DataflowDescription)
	d, ok2 := desired.Description.(*plan.DataflowDescription)
	return ok1 && ok2 && plan.Compatible(r, d) == nil
}
