package render

import (
	"container/heap"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// temporalLogic renders a temporal filter (plan.TemporalFilter). An
// update (row, t, d) whose row is valid in [lower, upper) becomes
// (row, max(t, lower), d) and, with a bounded upper, (row, upper, -d);
// nothing when max(t, lower) >= upper. Updates at t go out at once; later
// ones wait in pending, a min-heap by time, and go out once the input
// frontier has passed their time, so downstream operators only ever see
// updates at times their frontier has not passed, as from any input.
//
// Invariant: the operator holds its output frontier at the least pending
// time, so every pending update is still sendable when it is released.
type temporalLogic struct {
	tf      *plan.TemporalFilter
	dec     *rowDecoder
	datums  []row.Datum
	pending updateHeap
}

// TemporalFilter renders a temporal filter over an update stream; it
// returns the ok stream and the stream of new errors.
func TemporalFilter(b *dataflow.Builder, name string, in dataflow.Stream, tf *plan.TemporalFilter) (ok, errs dataflow.Stream) {
	exprs := make([]expr.Expr, len(tf.Bounds))
	for i, bd := range tf.Bounds {
		exprs[i] = bd.Expr
	}
	lg := &temporalLogic{tf: tf, dec: &rowDecoder{used: usedColumns(exprs, nil)}}
	op := b.AddOperator("TemporalFilter "+name, []dataflow.Connection{{From: in}}, 2, lg)
	return op.Stream(0), op.Stream(1)
}

func (lg *temporalLogic) Schedule(op *dataflow.Operator) {
	var ok, errs []dataflow.Update
	for _, d := range op.Input(0).Take() {
		for _, u := range d.([]dataflow.Update) {
			var err error
			var v plan.Validity
			lg.datums, err = lg.dec.decode(row.Row(u.Val), lg.datums)
			if err == nil {
				v, err = lg.tf.Validity(lg.datums)
			}
			if err != nil {
				errs = append(errs, dataflow.Update{Val: ErrorRow(err), Time: u.Time, Diff: u.Diff})
				continue
			}
			ok = lg.admit(ok, u, v)
		}
	}
	ok = lg.release(ok, op.InputFrontier())
	op.Output(0).SendUpdates(ok)
	op.Output(1).SendUpdates(errs)
	if t, held := lg.pending.min(); held {
		op.SetHold(frontier.At(t))
	} else {
		op.SetHold(frontier.Closed())
	}
}

// admit turns one input update into its entry and exit: sent now when at
// the update's own time, pending otherwise.
func (lg *temporalLogic) admit(ok []dataflow.Update, u dataflow.Update, v plan.Validity) []dataflow.Update {
	enter := max(uint64(u.Time), v.Lower)
	if !v.Unbounded && enter >= v.Upper {
		return ok
	}
	in := dataflow.Update{Val: u.Val, Time: frontier.Time(enter), Diff: u.Diff}
	if in.Time == u.Time {
		ok = append(ok, in)
	} else {
		heap.Push(&lg.pending, in)
	}
	if !v.Unbounded {
		heap.Push(&lg.pending, dataflow.Update{Val: u.Val, Time: frontier.Time(v.Upper), Diff: -u.Diff})
	}
	return ok
}

// release appends the pending updates at times the input frontier has
// passed: no input can still arrive at or before them.
func (lg *temporalLogic) release(ok []dataflow.Update, f frontier.Frontier) []dataflow.Update {
	for len(lg.pending) > 0 && f.IsComplete(lg.pending[0].Time) {
		ok = append(ok, heap.Pop(&lg.pending).(dataflow.Update))
	}
	return ok
}

// updateHeap is a min-heap of updates by time.
type updateHeap []dataflow.Update

func (h updateHeap) Len() int           { return len(h) }
func (h updateHeap) Less(i, j int) bool { return h[i].Time < h[j].Time }
func (h updateHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *updateHeap) Push(x any)        { *h = append(*h, x.(dataflow.Update)) }
func (h *updateHeap) Pop() any {
	old := *h
	u := old[len(old)-1]
	old[len(old)-1] = dataflow.Update{}
	*h = old[:len(old)-1]
	return u
}

func (h updateHeap) min() (frontier.Time, bool) {
	if len(h) == 0 {
		return 0, false
	}
	return h[0].Time, true
}
