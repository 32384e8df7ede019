package controller

import (
	"fmt"
	"math"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/loadgen"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
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
	df := Dataflow{ID: d.ID, Class: computepb.DataflowClass(d.Class)}
	for _, ix := range d.IndexImports {
		df.IndexImports = append(df.IndexImports, ix.ID)
	}
	for _, s := range d.SourceImports {
		switch s.Connection.Kind {
		case plan.SourceTable:
			df.SourceImports = append(df.SourceImports, s.ID)
		case plan.SourceLoadGen:
			clock, err := generatorClock(s.Connection.Options)
			if err != nil {
				return Dataflow{}, fmt.Errorf("source %s: %w", s.ID, err)
			}
			df.Generators = append(df.Generators, clock)
		}
	}
	for _, e := range d.IndexExports {
		df.IndexExports = append(df.IndexExports, e.ID)
	}
	for _, s := range d.SubscribeSinks {
		df.SubscribeSinks = append(df.SubscribeSinks, s.ID)
	}
	df.Encode = func(asOf frontier.Time, class computepb.DataflowClass) (*computepb.DataflowDescription, error) {
		c := desc
		c.AsOf = frontier.At(asOf)
		if c.Until == (frontier.Frontier{}) {
			// The zero frontier is [0], which would end the dataflow at once;
			// an unset until means forever.
			c.Until = frontier.Closed()
		}
		if d.Class == plan.ClassOneShotRead && c.Until.IsClosed() && asOf < frontier.Time(math.MaxUint64) {
			// A one-shot read is peeked at its as_of and dropped; saying
			// so lets the replica read its imports once, as of then,
			// wherever it is rendered (render.snapshotTime), also when
			// the interactive flag is off and it runs as Maintained.
			c.Until = frontier.At(asOf + 1)
		}
		c.Class = plan.DataflowClass(class)
		return protocol.DataflowToProto(&c)
	}
	return df, nil
}

// generatorClock returns the clock of a load-generator source from its
// connection options (those of render.LoadGenerators).
func generatorClock(options map[string]string) (loadgen.Clock, error) {
	opts := make(map[string]string, len(options))
	for k, v := range options {
		if !strings.EqualFold(k, "output") {
			opts[k] = v
		}
	}
	parsed, err := loadgen.ParseOptions(options["generator"], opts)
	if err != nil {
		return loadgen.Clock{}, err
	}
	return loadgen.Clock{Start: parsed.Start, TickMS: parsed.TickMS}, nil
}
