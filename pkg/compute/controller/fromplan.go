package controller

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// FromPlan adapts a plan.DataflowDescription. Index imports name the
// imported index ids; source imports of kind table name storage
// collections, while load-generator and introspection sources are
// self-contained on the replica and need no controller collection. The
// description is copied; Encode sets as_of and class on the copy.
func FromPlan(d *plan.DataflowDescription) (Dataflow, error) {
	if d == nil || !d.ID.Valid() {
		return Dataflow{}, fmt.Errorf("dataflow description without a valid id")
	}
	desc := *d
	df := Dataflow{ID: d.ID.String(), Class: computepb.DataflowClass(d.Class)}
	for _, ix := range d.IndexImports {
		df.IndexImports = append(df.IndexImports, ix.ID.String())
	}
	for _, s := range d.SourceImports {
		if s.Connection.Kind == plan.SourceTable {
			df.SourceImports = append(df.SourceImports, s.ID.String())
		}
	}
	for _, e := range d.IndexExports {
		df.IndexExports = append(df.IndexExports, e.ID.String())
	}
	for _, s := range d.SubscribeSinks {
		df.SubscribeSinks = append(df.SubscribeSinks, s.ID.String())
	}
	df.Encode = func(asOf frontier.Time, class computepb.DataflowClass) ([]byte, error) {
		c := desc
		c.AsOf = frontier.At(asOf)
		if c.Until == (frontier.Frontier{}) {
			// The zero frontier is [0], which would end the dataflow at once;
			// an unset until means forever.
			c.Until = frontier.Closed()
		}
		c.Class = plan.DataflowClass(class)
		return plan.Marshal(&c)
	}
	return df, nil
}
