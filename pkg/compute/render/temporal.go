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
// ones wait in pending and go out once the input frontier has passed
// their time, so downstream operators only ever see updates at times
// their frontier has not passed, as from any input.
//
// The operator holds its output frontier at the least pending time, so a
// pending update is sendable whenever it is released. (Releases happen in
// the schedule that sees the input frontier pass them, before the output
// frontier moves, so today the hold only restates that.)
type temporalLogic struct {
	tf      *plan.TemporalFilter
	dec     *rowDecoder
	datums  []row.Datum
	pending futureUpdates
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
	ok = lg.pending.release(ok, op.InputFrontier())
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
	if frontier.Time(enter) == u.Time {
		ok = append(ok, dataflow.Update{Val: u.Val, Time: u.Time, Diff: u.Diff})
	} else {
		lg.pending.add(frontier.Time(enter), u.Val, u.Diff)
	}
	if !v.Unbounded {
		lg.pending.add(frontier.Time(v.Upper), u.Val, -u.Diff)
	}
	return ok
}

// futureUpdates are updates at future times, consolidated per (time, row): a
// row's exit and the exit its retraction cancels take no memory once
// both are known, so a row updated often inside a long window keeps one
// entry, not two per update. times is a min-heap of the times with
// updates, possibly holding times whose updates have all cancelled
// (skipped when reached, and dropped by a rebuild once they outnumber
// the live ones).
type futureUpdates struct {
	byTime map[frontier.Time]map[string]int64
	times  timeHeap
}

func (p *futureUpdates) add(t frontier.Time, val []byte, diff int64) {
	if p.byTime == nil {
		p.byTime = map[frontier.Time]map[string]int64{}
	}
	at := p.byTime[t]
	if at == nil {
		at = map[string]int64{}
		p.byTime[t] = at
		heap.Push(&p.times, t)
	}
	k := string(val)
	if at[k] += diff; at[k] == 0 {
		delete(at, k)
		if len(at) == 0 {
			delete(p.byTime, t)
		}
	}
	if len(p.times) > 2*len(p.byTime)+64 {
		p.rebuild()
	}
}

// rebuild drops the heap's times that have no updates left.
func (p *futureUpdates) rebuild() {
	p.times = p.times[:0]
	for t := range p.byTime {
		p.times = append(p.times, t)
	}
	heap.Init(&p.times)
}

// release appends the pending updates at times the input frontier has
// passed: no input can still arrive at or before them.
func (p *futureUpdates) release(ok []dataflow.Update, f frontier.Frontier) []dataflow.Update {
	for len(p.times) > 0 && f.IsComplete(p.times[0]) {
		t := heap.Pop(&p.times).(frontier.Time)
		for val, diff := range p.byTime[t] {
			ok = append(ok, dataflow.Update{Val: []byte(val), Time: t, Diff: diff})
		}
		delete(p.byTime, t)
	}
	return ok
}

// min returns the least time with pending updates.
func (p *futureUpdates) min() (frontier.Time, bool) {
	for len(p.times) > 0 {
		if _, live := p.byTime[p.times[0]]; live {
			return p.times[0], true
		}
		heap.Pop(&p.times)
	}
	return 0, false
}

// entries counts the pending (time, row) pairs and heap slots.
func (p *futureUpdates) entries() (pairs, slots int) {
	for _, at := range p.byTime {
		pairs += len(at)
	}
	return pairs, len(p.times)
}

// timeHeap is a min-heap of times.
type timeHeap []frontier.Time

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(frontier.Time)) }
func (h *timeHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}
