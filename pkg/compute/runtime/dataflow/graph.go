package dataflow

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Logic is an operator's behaviour. Schedule runs on the operator's worker
// goroutine whenever the operator is activated: new input arrived, an input
// frontier moved, or it (or another goroutine, via an Activator) asked to run.
// It processes what it has and returns; to continue later it calls
// op.Activate().
type Logic interface {
	Schedule(op *Operator)
}

// LogicFunc adapts a function to Logic.
type LogicFunc func(op *Operator)

// Schedule calls f(op).
func (f LogicFunc) Schedule(op *Operator) { f(op) }

// Dropper is implemented by logic that owns resources (trace handles, source
// goroutines) to release when its dataflow is dropped. Drop runs once, on the
// worker goroutine.
type Dropper interface {
	Drop()
}

// Stream names one output of an operator in the dataflow being built.
type Stream struct {
	op   *Operator
	port int
}

// Connection feeds one operator input from a stream.
type Connection struct {
	From Stream
	// Exchange, when non-nil, routes each update to worker
	// Exchange(u) % (W*P); the payloads sent on From must then be []Update.
	// When nil the edge is a pipeline on the same worker carrying any payload.
	Exchange func(Update) uint64
}

// Operator is one node of a dataflow on one worker. All methods except
// Activator must be called on the worker goroutine.
type Operator struct {
	name    string
	index   int
	df      *instance
	inputs  []*InputPort
	outputs []*OutputPort
	logic   Logic
	// hold bounds the output frontier from above (Closed = no hold).
	hold      frontier.Frontier
	frontier  frontier.Frontier
	activated bool

	elapsed   time.Duration
	schedules int64
	// longest is the longest single schedule so far.
	longest time.Duration
}

// Name returns the operator's debug name.
func (op *Operator) Name() string { return op.name }

// Index returns the operator's position in its dataflow (identical on every
// worker).
func (op *Operator) Index() int { return op.index }

// Worker returns the worker running the operator.
func (op *Operator) Worker() *Worker { return op.df.w }

// Input returns input i.
func (op *Operator) Input(i int) *InputPort { return op.inputs[i] }

// Inputs returns the number of inputs.
func (op *Operator) Inputs() int { return len(op.inputs) }

// Output returns output i.
func (op *Operator) Output(i int) *OutputPort { return op.outputs[i] }

// Stream returns output i as a stream to connect downstream operators to.
func (op *Operator) Stream(i int) Stream { return Stream{op: op, port: i} }

// Frontier returns the operator's current output frontier.
func (op *Operator) Frontier() frontier.Frontier { return op.frontier }

// InputFrontier returns the meet of the operator's input frontiers (closed
// when it has no inputs).
func (op *Operator) InputFrontier() frontier.Frontier {
	f := frontier.Closed()
	for _, in := range op.inputs {
		f = frontier.Meet(f, in.frontier)
	}
	return f
}

// SetHold bounds the output frontier: it will not pass f. Sources hold their
// upper; operators with buffered work hold its least time. Closed releases
// the hold.
func (op *Operator) SetHold(f frontier.Frontier) { op.hold = f }

// Dropping reports whether the operator's dataflow has been asked to drop.
// The drop itself runs between steps, so an operator whose Schedule does a
// lot of work in one call (a join's or reduction's whole step) polls this
// and returns early: nothing it would produce is ever read. Like the other
// methods, call it on the worker goroutine.
func (op *Operator) Dropping() bool {
	return op.df.dropped || (op.df.dropping != nil && op.df.dropping.Load())
}

// Activate schedules the operator again in the current or next step.
func (op *Operator) Activate() { op.activated = true }

// Activator returns a function that any goroutine may call to activate the
// operator; calls after the dataflow was dropped are ignored.
func (op *Operator) Activator() func() {
	w, seq, idx := op.df.w, op.df.seq, op.index
	return func() { w.inbox.push(message{kind: msgActivate, seq: seq, op: idx}) }
}

// InputPort queues payloads for one operator input and tracks its frontier.
type InputPort struct {
	op       *Operator
	queue    []any
	senders  []frontier.Frontier
	frontier frontier.Frontier
}

// Take returns and clears the queued payloads, in arrival order. Payloads are
// shared with other receivers of the same stream and must not be modified.
func (in *InputPort) Take() []any {
	q := in.queue
	in.queue = nil
	return q
}

// Pending reports whether payloads are queued.
func (in *InputPort) Pending() bool { return len(in.queue) > 0 }

// Frontier returns the input frontier: the meet over its senders.
func (in *InputPort) Frontier() frontier.Frontier { return in.frontier }

func (in *InputPort) deliver(data any) {
	in.queue = append(in.queue, data)
	in.op.activated = true
}

func (in *InputPort) advance(sender int, f frontier.Frontier) {
	if sender < 0 || sender >= len(in.senders) {
		return
	}
	// FIFO delivery makes sender frontiers monotone; Join guards anyway.
	in.senders[sender] = frontier.Join(in.senders[sender], f)
	m := frontier.Closed()
	for _, s := range in.senders {
		m = frontier.Meet(m, s)
	}
	if m != in.frontier {
		in.frontier = m
		in.op.activated = true
	}
}

// OutputPort sends payloads to the operator's downstream inputs.
type OutputPort struct {
	op      *Operator
	targets []*edge
}

// edge connects an output port to one downstream input.
type edge struct {
	to       *Operator
	port     int
	exchange func(Update) uint64
	// parts buffers exchanged updates per destination worker until the
	// sending operator's schedule ends (data is flushed before frontiers).
	parts [][]Update
	// dests and counts are partition's scratch: each update's destination
	// and each destination's count in the payload being partitioned.
	dests  []uint32
	counts []int
}

// partition appends each update of ups to its destination's part. It
// counts the destinations first and grows each part once to fit, so no
// part is copied as it fills: sizing parts for an even share overflowed
// whenever a payload's keys were not spread evenly (a load generator's
// shard hashes to its own worker, so its whole chunk has one destination,
// and the part was copied whole; a seventh of a hydration's CPU in
// BenchmarkChurnKeyValue's profile).
func (e *edge) partition(ups []Update) {
	peers := uint64(len(e.parts))
	if len(e.counts) != len(e.parts) {
		e.counts = make([]int, len(e.parts))
	}
	dests := e.dests[:0]
	for _, u := range ups {
		d := e.exchange(u) % peers
		dests = append(dests, uint32(d))
		e.counts[d]++
	}
	for d, c := range e.counts {
		if c > 0 {
			e.parts[d] = slices.Grow(e.parts[d], c)
			e.counts[d] = 0
		}
	}
	for i, u := range ups {
		d := dests[i]
		e.parts[d] = append(e.parts[d], u)
	}
	e.dests = dests[:0]
}

// Send emits a payload to every downstream input. Exchange edges require
// []Update payloads; the slice and the byte slices in it must not be modified
// after sending.
func (out *OutputPort) Send(data any) {
	for _, e := range out.targets {
		if e.exchange == nil {
			e.to.inputs[e.port].deliver(data)
			continue
		}
		ups, ok := data.([]Update)
		if !ok {
			// A plan that wires a non-update stream into an exchange is a
			// renderer bug; it cannot come from user input.
			panic(fmt.Sprintf("dataflow: operator %q sent %T on an exchange edge", out.op.name, data))
		}
		peers := uint64(len(e.parts))
		if peers == 1 {
			// A single worker owns every key: forward the payload without
			// copying (clipped, so a later append in this schedule copies).
			if len(e.parts[0]) == 0 {
				e.parts[0] = ups[:len(ups):len(ups)]
			} else {
				e.parts[0] = append(e.parts[0], ups...)
			}
			continue
		}
		e.partition(ups)
	}
}

// SendUpdates is Send for update payloads, skipping empty slices.
func (out *OutputPort) SendUpdates(ups []Update) {
	if len(ups) > 0 {
		out.Send(ups)
	}
}

// instance is one dataflow on one worker.
type instance struct {
	w       *Worker
	seq     uint64
	name    string
	ops     []*Operator
	onDrop  []func()
	dropped bool
	// dropping is set (from another goroutine) as soon as the dataflow's
	// drop is requested; see Operator.Dropping.
	dropping *atomic.Bool
}

// Builder constructs one worker's copy of a dataflow. Every worker must add
// the same operators with the same connections in the same order.
type Builder struct {
	df *instance
}

// Worker returns the worker the dataflow is being built on.
func (b *Builder) Worker() *Worker { return b.df.w }

// Seq returns the dataflow's sequence number (identical on every worker).
func (b *Builder) Seq() uint64 { return b.df.seq }

// OnDrop registers f to run on the worker goroutine when the dataflow is
// dropped (after every operator's Drop).
func (b *Builder) OnDrop(f func()) { b.df.onDrop = append(b.df.onDrop, f) }

// AddOperator adds an operator reading the given connections and producing
// `outputs` streams. It starts activated so that it runs once after the build.
func (b *Builder) AddOperator(name string, inputs []Connection, outputs int, logic Logic) *Operator {
	df := b.df
	op := &Operator{
		name:      name,
		index:     len(df.ops),
		df:        df,
		logic:     logic,
		hold:      frontier.Closed(),
		frontier:  frontier.Minimum(),
		activated: true,
	}
	peers := df.w.ws.peers
	for i, c := range inputs {
		in := &InputPort{op: op, frontier: frontier.Minimum()}
		if c.Exchange == nil {
			in.senders = make([]frontier.Frontier, 1)
		} else {
			in.senders = make([]frontier.Frontier, peers)
		}
		op.inputs = append(op.inputs, in)
		src := c.From.op
		if src == nil || src.df != df || c.From.port < 0 || c.From.port >= len(src.outputs) {
			panic(fmt.Sprintf("dataflow: operator %q input %d connects to a stream of another dataflow or a missing port", name, i))
		}
		e := &edge{to: op, port: i, exchange: c.Exchange}
		if c.Exchange != nil {
			e.parts = make([][]Update, peers)
		}
		src.outputs[c.From.port].targets = append(src.outputs[c.From.port].targets, e)
	}
	for i := 0; i < outputs; i++ {
		op.outputs = append(op.outputs, &OutputPort{op: op})
	}
	df.ops = append(df.ops, op)
	return op
}

// Operator returns the operator producing the stream.
func (s Stream) Operator() *Operator { return s.op }
