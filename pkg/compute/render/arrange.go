package render

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// exertFuel is the merge work an arrangement does per schedule when it has
// no new data, so that merges finish on an otherwise idle worker.
const exertFuel = 1 << 16

// Arranged is one worker's shard of an arrangement: its trace and a
// frontier-only stream whose frontier is the trace's upper as this dataflow
// sees it. Consumers read batches from the trace through their own handles.
type Arranged struct {
	Trace  *trace.Trace
	Stream dataflow.Stream
	// listeners are activated (on the worker goroutine) when upper advances.
	listeners *[]func()
}

// OnAdvance registers f to run on the worker goroutine whenever the trace's
// upper advances; it returns a function that unregisters it.
func (a *Arranged) OnAdvance(f func()) (remove func()) {
	*a.listeners = append(*a.listeners, f)
	idx := len(*a.listeners) - 1
	return func() {
		if idx < len(*a.listeners) {
			(*a.listeners)[idx] = nil
		}
	}
}

func keyHash(u dataflow.Update) uint64 { return row.Hash(u.Key) }

// arrangeLogic buffers keyed updates and, each time its input frontier
// advances from f0 to f1, seals the updates in [f0, f1) into one batch of the
// trace, making the trace's upper f1.
type arrangeLogic struct {
	name      string
	tr        *trace.Trace
	pending   []dataflow.Update
	lower     frontier.Frontier
	builder   batch.Builder
	listeners []func()
	fail      func(error)
}

// Arrange exchanges a keyed update stream (Key set) by key hash and arranges
// it on each worker.
func Arrange(b *dataflow.Builder, name string, keyed dataflow.Stream, fail func(error)) *Arranged {
	lg := &arrangeLogic{name: name, tr: trace.New(frontier.Minimum()), lower: frontier.Minimum(), fail: fail}
	op := b.AddOperator("Arrange "+name, []dataflow.Connection{{From: keyed, Exchange: keyHash}}, 1, lg)
	return &Arranged{Trace: lg.tr, Stream: op.Stream(0), listeners: &lg.listeners}
}

func (lg *arrangeLogic) Schedule(op *dataflow.Operator) {
	in := op.Input(0)
	for _, d := range in.Take() {
		lg.pending = append(lg.pending, d.([]dataflow.Update)...)
	}
	f1 := in.Frontier()
	if lg.lower.Less(f1) {
		keep := lg.pending[:0]
		for _, u := range lg.pending {
			if f1.LessEqualTime(u.Time) {
				keep = append(keep, u)
				continue
			}
			lg.builder.Push(u.Key, u.Val, u.Time, u.Diff)
		}
		clear(lg.pending[len(keep):])
		lg.pending = keep
		bat, err := lg.builder.Build(batch.Description{Lower: lg.lower, Upper: f1, Since: frontier.Minimum()})
		lg.builder.Reset()
		if err == nil {
			err = lg.tr.Insert(bat)
		}
		if err != nil {
			// Only a bug or an oversized batch gets here; the arrangement
			// can no longer be trusted, so its dataflow must not report
			// progress past it.
			lg.fail(fmt.Errorf("arrange %s: %w", lg.name, err))
			op.SetHold(lg.lower)
			return
		}
		lg.lower = f1
		for _, f := range lg.listeners {
			if f != nil {
				f()
			}
		}
	}
	fuel := exertFuel
	if lg.tr.Exert(&fuel) {
		op.Activate()
	}
}
