package render

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// Source is one worker's instance of a source: it yields the worker's share
// of a collection's updates and the source's upper.
type Source interface {
	// Poll appends the updates that became available since the last call
	// to dst (rows in Val, Key nil) and returns them with the upper: every
	// update at a time before upper has been returned. The upper never
	// regresses; closed means the source is finished.
	Poll(dst []dataflow.Update) ([]dataflow.Update, frontier.Frontier, error)
	// Close releases the source (stops its goroutines). It is called once,
	// on the worker goroutine, when the dataflow is dropped.
	Close()
}

// SourceContext is what a source instance learns about where it runs.
type SourceContext struct {
	// Worker is the global worker index and Peers the worker count W*P; a
	// source shards its collection so that the workers together produce
	// each update exactly once.
	Worker, Peers int
	// AsOf is the dataflow's as_of: updates before it may be advanced to it.
	AsOf frontier.Frontier
	// Activate schedules the source operator; any goroutine may call it
	// when new data or a new upper is available.
	Activate func()
	// Host is the worker the source runs on; introspection sources read
	// its statistics (only from Poll, which runs on that worker).
	Host *dataflow.Worker
	// Chunk, if set, returns how many items (a load generator's keys, ...)
	// one Poll may produce before it returns and reactivates itself, so a
	// snapshot of millions of rows does not hold the worker for one step;
	// nil or 0 means unbounded (the system parameter source_step_items).
	Chunk func() int
}

type sourceLogic struct {
	name string
	src  Source
	asOf frontier.Frontier
	buf  []dataflow.Update
	fail func(error)
	dead bool
}

// renderSource adds the operator that drains src; its frontier follows the
// source's upper.
func renderSource(b *dataflow.Builder, name string, open func(SourceContext) (Source, error), asOf frontier.Frontier, fail func(error)) (dataflow.Stream, error) {
	lg := &sourceLogic{name: name, asOf: asOf, fail: fail}
	op := b.AddOperator("Source "+name, nil, 1, lg)
	op.SetHold(frontier.Minimum())
	src, err := open(SourceContext{Worker: b.Worker().Index(), Peers: b.Worker().Peers(), AsOf: asOf, Activate: op.Activator(), Host: b.Worker()})
	if err != nil {
		return dataflow.Stream{}, fmt.Errorf("open source %s: %w", name, err)
	}
	lg.src = src
	return op.Stream(0), nil
}

func (lg *sourceLogic) Schedule(op *dataflow.Operator) {
	if lg.dead {
		return
	}
	ups, upper, err := lg.src.Poll(lg.buf[:0])
	if err != nil {
		lg.dead = true
		lg.fail(fmt.Errorf("source %s: %w", lg.name, err))
		return
	}
	if len(ups) > 0 {
		// The dataflow is read as of as_of: earlier times are advanced to
		// it, so history before as_of consolidates (insertions and their
		// retractions cancel in the first batch) instead of flowing
		// through every operator.
		if t, ok := lg.asOf.Time(); ok {
			for i := range ups {
				if ups[i].Time < t {
					ups[i].Time = t
				}
			}
		}
		// Downstream may keep the slice, so it is not reused.
		op.Output(0).Send(ups)
		lg.buf = nil
	}
	op.SetHold(upper)
}

func (lg *sourceLogic) Drop() {
	if lg.src != nil {
		lg.src.Close()
	}
}
