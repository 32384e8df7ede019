package render

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// flattenFuel is how many updates Flatten emits per schedule. An imported
// index is read whole by a one-shot dataflow; emitting the snapshot in one
// schedule would materialise a row update per indexed row in every reader at
// once (and run its downstream operators over all of it before any other
// dataflow of the worker steps). In slices of this size each reader holds
// at most one slice in flight, and the worker interleaves readers and
// maintenance between slices.
const flattenFuel = 4096

// flattenLogic emits the collection behind an arrangement as unkeyed row
// updates (the value row, or the key of an error arrangement, in Val), read
// as of asOf (earlier times advanced to it). When its input frontier
// advances from f0 to f1 it walks the batches of [f0, f1) in slices of
// fuel updates, one slice per schedule, holding its output frontier at f0
// and its trace handle at f0 until the walk ends.
type flattenLogic struct {
	name   string
	handle *trace.Handle
	cut    inputCut
	asOf   frontier.Frontier
	keys   bool
	fuel   int
	fail   func(error)
	broken bool

	// f0 is where the next walk starts; the output is held there (the
	// input frontier alone would let it pass updates of [f0, input) not
	// yet emitted). f1 ends the walk in progress.
	f0, f1 frontier.Frontier
	// The walk in progress (walking): batches of [f0, f1) and a cursor into
	// fresh[next-1].
	walking bool
	fresh   []*batch.Batch
	next    int
	cur     *batch.Cursor
	out     []dataflow.Update
	// copyRows: the batch under cur keeps its columns off the Go heap, so
	// the rows sent downstream are copied into rows (package batch: a
	// slice of an arena is valid only while its batch is reachable, and
	// the sent updates outlive the walk's hold on the batch).
	copyRows bool
	rows     []byte
	// remaining counts the walk's updates not yet emitted.
	remaining int
}

// Flatten renders the collection behind an arrangement: one output of row
// updates, emitted incrementally (see flattenLogic).
func Flatten(b *dataflow.Builder, name string, in *Arranged, asOf frontier.Frontier, keys bool, fail func(error)) dataflow.Stream {
	return flatten(b, name, in, asOf, keys, flattenFuel, fail)
}

func flatten(b *dataflow.Builder, name string, in *Arranged, asOf frontier.Frontier, keys bool, fuel int, fail func(error)) dataflow.Stream {
	lg := &flattenLogic{name: name, handle: in.Trace.NewHandle(name), asOf: asOf, keys: keys, fuel: max(fuel, 1), fail: fail, f0: frontier.Minimum()}
	op := b.AddOperator(name, []dataflow.Connection{{From: in.Stream}}, 1, lg)
	op.SetHold(lg.f0)
	return op.Stream(0)
}

func (lg *flattenLogic) Schedule(op *dataflow.Operator) {
	if lg.broken {
		return
	}
	if !lg.walking {
		f1 := op.InputFrontier()
		if !lg.f0.Less(f1) {
			return
		}
		// The whole chain, cut at f0 and f1; see stepLogic.Schedule for why
		// the handle is not asked for the cut.
		_, fresh, err := lg.cut.cut(lg.handle.Trace().Snapshot().Batches, lg.f0, f1)
		if err != nil {
			lg.broken = true
			op.SetHold(lg.f0)
			lg.fail(fmt.Errorf("%s: read over [%v, %v): %w", lg.name, lg.f0, f1, err))
			return
		}
		lg.f1, lg.fresh, lg.next, lg.cur, lg.walking = f1, fresh, 0, nil, true
		lg.remaining = 0
		for _, b := range fresh {
			lg.remaining += b.Len()
		}
		// The walk's updates are at or beyond f0 (advanced to as_of, which
		// only moves them later): the hold at f0 covers them.
	}
	if !lg.walk() {
		op.Output(0).SendUpdates(lg.out)
		lg.out = nil
		op.Activate()
		return
	}
	op.Output(0).SendUpdates(lg.out)
	lg.out = nil
	lg.finish(op)
}

// walk emits up to fuel updates into lg.out and reports whether the walk
// is complete. A (key, value) pair's updates are emitted together.
func (lg *flattenLogic) walk() bool {
	emitted := 0
	// Sized once: the slice is sent downstream whole and never reused.
	lg.out = make([]dataflow.Update, 0, min(lg.fuel, lg.remaining))
	lg.rows = nil // the last slice's rows belong to its updates
	defer func() { lg.remaining -= emitted }()
	for {
		if lg.cur == nil || !lg.cur.KeyValid() {
			if lg.next == len(lg.fresh) {
				return true
			}
			b := lg.fresh[lg.next]
			c := b.Cursor()
			lg.cur, lg.copyRows = &c, b.OffHeapBytes() > 0
			lg.next++
			continue
		}
		c := lg.cur
		for ; c.ValValid(); c.StepVal() {
			if emitted >= lg.fuel {
				return false
			}
			r := c.Val()
			if lg.keys {
				r = c.Key()
			}
			if lg.copyRows {
				off := len(lg.rows)
				lg.rows = append(lg.rows, r...)
				r = lg.rows[off:len(lg.rows):len(lg.rows)]
			}
			c.ForEachUpdate(func(t frontier.Time, d int64) {
				lg.out = append(lg.out, dataflow.Update{Val: r, Time: lg.asOf.AdvanceTime(t), Diff: d})
				emitted++
			})
		}
		c.StepKey()
	}
}

// finish ends the walk of [f0, f1): the handle and the output move on to
// f1, and the operator runs again if the input advanced meanwhile. The
// output stays held at f1, not released: if the input is already beyond
// f1, the updates of [f1, input) are not emitted yet.
func (lg *flattenLogic) finish(op *dataflow.Operator) {
	lg.f0, lg.walking, lg.fresh, lg.cur = lg.f1, false, nil, nil
	op.SetHold(lg.f0)
	if lg.f0.IsClosed() {
		lg.handle.Release()
		return
	}
	// Advancing can only fail on a released handle, which Drop alone does.
	_ = lg.handle.SetLogical(lg.f0)
	_ = lg.handle.SetPhysical(lg.f0)
	if lg.f0.Less(op.InputFrontier()) {
		op.Activate() // the input moved on during the walk
	}
}

// Drop releases the operator's trace handle.
func (lg *flattenLogic) Drop() { lg.handle.Release() }
