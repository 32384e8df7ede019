package render

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// StorageSinkFactory opens the writer of a storage sink (a subscribe sink
// with a Shard: a materialized view's output written to storage). The
// replica implements it with pkg/compute/sink.
type StorageSinkFactory interface {
	// activate schedules the sink's operator; the writer calls it (from
	// any goroutine) when the shard's upper advanced, so the sink's
	// frontier is reported without waiting for more input.
	OpenStorageSink(s plan.SubscribeSink, asOf frontier.Frontier, activate func()) (StorageSinkWriter, error)
}

// StorageSinkWriter receives a storage sink's whole output (every worker's
// updates are exchanged to the one worker that writes) and the dataflow's
// output frontier. Push must not block: the writer does its storage I/O on
// its own goroutine.
type StorageSinkWriter interface {
	Push(ok, errs []dataflow.Update, upper frontier.Frontier)
	// Upper is the shard's upper as the writer last knew it.
	Upper() frontier.Frontier
	// Close stops the writer; it is called on the worker goroutine when
	// the dataflow is dropped.
	Close() error
}

// storageSinkWorker is the global worker that writes every storage sink:
// a compare-and-append on one upper cannot be split among workers.
const storageSinkWorker = 0

// renderStorageSink adds a storage sink: ok and error rows are exchanged to
// one worker, which hands them with its input frontier (the meet over all
// workers) to the writer. Every worker reports that frontier through
// env.Subscribe, so the controller sees the sink's progress like a
// subscribe's; the writing worker reports it capped by the shard's upper,
// so the sink's frontier (and with it hydration and the compaction of the
// dataflow's inputs) follows what is durable, never running ahead of it.
func renderStorageSink(b *dataflow.Builder, s plan.SubscribeSink, asOf frontier.Frontier, ok, errs dataflow.Stream, env Env) error {
	var w StorageSinkWriter
	writes := b.Worker().Index() == storageSinkWorker
	if writes && env.StorageSinks == nil {
		return fmt.Errorf("storage sink %s: the runtime has no storage sink factory", s.ID)
	}
	toWriter := func(dataflow.Update) uint64 { return storageSinkWorker }
	var last, pushed frontier.Frontier
	first := true
	worker := b.Worker().Local()
	op := b.AddOperator("StorageSink "+s.ID.String(), []dataflow.Connection{{From: ok, Exchange: toWriter}, {From: errs, Exchange: toWriter}}, 0, dataflow.LogicFunc(func(op *dataflow.Operator) {
		var outs [2][]dataflow.Update
		for i := range outs {
			for _, d := range op.Input(i).Take() {
				outs[i] = append(outs[i], d.([]dataflow.Update)...)
			}
		}
		f := op.InputFrontier()
		if w != nil && (len(outs[0]) > 0 || len(outs[1]) > 0 || f != pushed) {
			w.Push(outs[0], outs[1], f)
			pushed = f
		}
		report := f
		if w != nil {
			report = frontier.Join(asOf, frontier.Meet(f, w.Upper()))
		}
		if report == last && !first {
			return
		}
		first = false
		last = report
		if env.Subscribe != nil {
			env.Subscribe(s.ID, worker, nil, nil, report)
		}
	}))
	if writes {
		var err error
		if w, err = env.StorageSinks.OpenStorageSink(s, asOf, op.Activator()); err != nil {
			return fmt.Errorf("storage sink %s: %w", s.ID, err)
		}
		b.OnDrop(func() {
			if err := w.Close(); err != nil && env.Fail != nil {
				env.Fail(fmt.Errorf("storage sink %s: %w", s.ID, err))
			}
		})
	}
	return nil
}

// storedErrorMark starts a stored error row. No encoded row starts with it
// (row tags are 0x10 to 0xF0), so a materialized view's shard holds its ok
// rows and its error rows, marked, side by side, and a table's shard never
// holds a marked row.
const storedErrorMark = 0xFF

// StoredError returns how error row errRow is stored in a shard.
func StoredError(errRow []byte) []byte {
	out := make([]byte, 0, len(errRow)+1)
	return append(append(out, storedErrorMark), errRow...)
}

// splitStoredErrors separates the marked error rows read from a shard
// (stored by a materialized view's sink) from its ok rows, so that a read
// of a view in error fails with the view's error.
func splitStoredErrors(b *dataflow.Builder, name string, in dataflow.Stream) (ok, errs dataflow.Stream) {
	op := b.AddOperator("StoredErrors "+name, []dataflow.Connection{{From: in}}, 2, dataflow.LogicFunc(func(op *dataflow.Operator) {
		for _, d := range op.Input(0).Take() {
			ups := d.([]dataflow.Update)
			var bad []dataflow.Update
			for _, u := range ups {
				if len(u.Val) > 0 && u.Val[0] == storedErrorMark {
					bad = append(bad, u)
				}
			}
			if len(bad) == 0 {
				op.Output(0).SendUpdates(ups)
				continue
			}
			good := make([]dataflow.Update, 0, len(ups)-len(bad))
			for _, u := range ups {
				if len(u.Val) == 0 || u.Val[0] != storedErrorMark {
					good = append(good, u)
				}
			}
			for i := range bad {
				bad[i].Val = bad[i].Val[1:]
			}
			op.Output(0).SendUpdates(good)
			op.Output(1).SendUpdates(bad)
		}
	}))
	return op.Stream(0), op.Stream(1)
}
