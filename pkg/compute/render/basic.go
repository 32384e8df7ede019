package render

import (
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// passLogic forwards every payload of every input to output 0: the union of
// its inputs. Its frontier is the meet of theirs.
func passLogic(op *dataflow.Operator) {
	for i := 0; i < op.Inputs(); i++ {
		for _, d := range op.Input(i).Take() {
			op.Output(0).Send(d)
		}
	}
}

// Concat returns the union of update streams (nil for none).
func Concat(b *dataflow.Builder, name string, streams []dataflow.Stream) dataflow.Stream {
	if len(streams) == 1 {
		return streams[0]
	}
	if len(streams) == 0 {
		return Empty(b, name)
	}
	conns := make([]dataflow.Connection, len(streams))
	for i, s := range streams {
		conns[i] = dataflow.Connection{From: s}
	}
	return b.AddOperator("Union "+name, conns, 1, dataflow.LogicFunc(passLogic)).Stream(0)
}

// Empty returns a stream with no updates whose frontier is closed at once.
func Empty(b *dataflow.Builder, name string) dataflow.Stream {
	return b.AddOperator("Empty "+name, nil, 1, dataflow.LogicFunc(func(*dataflow.Operator) {})).Stream(0)
}

// Constant emits rows once at time t (skipped when the frontier is closed:
// such a dataflow reads nothing) and then closes.
func Constant(b *dataflow.Builder, name string, ups []dataflow.Update) dataflow.Stream {
	sent := false
	return b.AddOperator("Constant "+name, nil, 1, dataflow.LogicFunc(func(op *dataflow.Operator) {
		if !sent {
			sent = true
			// Only worker 0 emits, so the collection holds each row once.
			if op.Worker().Index() == 0 {
				op.Output(0).SendUpdates(ups)
			}
		}
	})).Stream(0)
}

// Negate returns the stream with every diff negated.
func Negate(b *dataflow.Builder, name string, s dataflow.Stream) dataflow.Stream {
	return b.AddOperator("Negate "+name, []dataflow.Connection{{From: s}}, 1, dataflow.LogicFunc(func(op *dataflow.Operator) {
		for _, d := range op.Input(0).Take() {
			in := d.([]dataflow.Update)
			out := make([]dataflow.Update, len(in))
			for i, u := range in {
				u.Diff = -u.Diff
				out[i] = u
			}
			op.Output(0).Send(out)
		}
	})).Stream(0)
}

// importLogic mirrors a trace exported by another dataflow on the same
// worker: it holds its output frontier at the trace's upper and is
// activated whenever that upper advances.
type importLogic struct {
	arranged *Arranged
	remove   func()
}

// Import returns an arrangement of this dataflow over another dataflow's
// exported trace (same worker). Consumers take their own handles.
func Import(b *dataflow.Builder, name string, exported *Arranged) *Arranged {
	lg := &importLogic{arranged: exported}
	op := b.AddOperator("Import "+name, nil, 1, lg)
	op.SetHold(frontier.Minimum())
	act := op.Activate
	lg.remove = exported.OnAdvance(act)
	var listeners []func()
	return &Arranged{Trace: exported.Trace, Stream: op.Stream(0), listeners: &listeners}
}

func (lg *importLogic) Schedule(op *dataflow.Operator) { op.SetHold(lg.arranged.Trace.Upper()) }

func (lg *importLogic) Drop() { lg.remove() }
