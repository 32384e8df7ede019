package dataflow

import (
	"context"
	"errors"
	"math/bits"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

type msgKind uint8

const (
	msgCommand msgKind = iota
	msgData
	msgFrontier
	msgActivate
)

// message is one inbox entry of a worker.
type message struct {
	kind     msgKind
	seq      uint64
	op, port int
	from     int
	data     any
	front    frontier.Frontier
	cmd      func(*Worker)
}

// inbox is an unbounded FIFO with a wake signal; pushes never block, so a
// worker never blocks on another worker.
type inbox struct {
	mu    sync.Mutex
	items []message
	wake  chan struct{}
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{}, 1)} }

func (ib *inbox) push(m message) {
	ib.mu.Lock()
	ib.items = append(ib.items, m)
	ib.mu.Unlock()
	select {
	case ib.wake <- struct{}{}:
	default:
	}
}

func (ib *inbox) drain(dst []message) []message {
	ib.mu.Lock()
	dst = append(dst, ib.items...)
	clear(ib.items)
	ib.items = ib.items[:0]
	ib.mu.Unlock()
	return dst
}

func (ib *inbox) empty() bool {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	return len(ib.items) == 0
}

// Worker is one worker goroutine and the dataflows built on it. Its methods
// must be called on its own goroutine (from commands, operator logic or the
// step hook) unless documented otherwise.
type Worker struct {
	ws    *Workers
	index int // global worker index
	local int // index within this process
	inbox *inbox

	dataflows []*instance // in build order
	// resume is where the next step starts scheduling when the previous
	// one ended at its budget (Workers.SetStepBudget): the dataflow and
	// operator positions after the last operator scheduled. Positions are
	// clamped when dataflows come and go; they only decide fairness.
	resume    struct{ df, op int }
	bySeq     map[uint64]*instance
	lastBuilt uint64 // highest sequence number built or failed
	early     map[uint64][]message

	scratch []message

	// steps[i] counts steps whose duration in nanoseconds has bit length i
	// (a power-of-two histogram for introspection).
	steps [64]int64
	// timer attributes the current step (Config.ProfileStep).
	timer stepTimer
	// tid is the worker's OS thread id once it runs (Linux; else 0).
	tid atomic.Int64
}

// ThreadID returns the OS thread id of the worker's (locked) thread once it
// runs, 0 before or off Linux. Safe from any goroutine.
func (w *Worker) ThreadID() int { return int(w.tid.Load()) }

// reprioritize applies Config.Nice to the worker's locked thread and
// reports whether the thread's priority changed.
func (w *Worker) reprioritize() bool {
	nice := w.ws.cfg.Nice
	if nice <= 0 {
		return false
	}
	// run never reprioritizes the main thread (see there); this guards it.
	if onMainThread() {
		if f := w.ws.cfg.OnNiceError; f != nil {
			f(w.index, errors.New("worker runs on the process's main thread: its priority is left alone"))
		}
		return false
	}
	if err := lowerThreadPriority(nice); err != nil {
		if f := w.ws.cfg.OnNiceError; f != nil {
			f(w.index, err)
		}
		return false
	}
	return true
}

// StepHistogram returns the worker's step-duration histogram: entry i
// counts steps that took [2^(i-1), 2^i) nanoseconds.
func (w *Worker) StepHistogram() [64]int64 { return w.steps }

// Index returns the global worker index w + W*p.
func (w *Worker) Index() int { return w.index }

// Local returns the worker's index within its process.
func (w *Worker) Local() int { return w.local }

// Peers returns the total number of workers W*P.
func (w *Worker) Peers() int { return w.ws.peers }

// Process returns this process's index.
func (w *Worker) Process() int { return w.ws.cfg.Process }

// Dataflows returns the number of dataflows built on the worker.
func (w *Worker) Dataflows() int { return len(w.dataflows) }

// OperatorStats describes one operator for introspection.
type OperatorStats struct {
	Dataflow  uint64
	DebugName string
	Operator  int
	Name      string
	Elapsed   time.Duration
	Schedules int64
	// Longest is the longest single schedule of the operator: with the
	// step bounds on, no operator's should be much longer than one
	// step's fuel of work.
	Longest  time.Duration
	Frontier frontier.Frontier
}

// Operators returns statistics for every operator on the worker.
func (w *Worker) Operators() []OperatorStats {
	var out []OperatorStats
	for _, df := range w.dataflows {
		for _, op := range df.ops {
			out = append(out, OperatorStats{
				Dataflow: df.seq, DebugName: df.name, Operator: op.index, Name: op.name,
				Elapsed: op.elapsed, Schedules: op.schedules, Longest: op.longest, Frontier: op.frontier,
			})
		}
	}
	return out
}

func (w *Worker) run(ctx context.Context) {
	// Workers own an OS thread so the kernel, not the Go scheduler, shares
	// cores between runtimes (docs/design/two-runtimes.md, Scheduling).
	goruntime.LockOSThread()
	if w.ws.cfg.Nice > 0 && onMainThread() {
		// The process's main thread is never ended by the Go runtime (a
		// goroutine exiting locked to it parks it instead), so a reniced
		// main thread would keep its priority. Keep the main thread
		// occupied while the worker runs on a new goroutine: that one
		// cannot be scheduled on it, so it gets a thread of its own.
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.run(ctx)
		}()
		<-done
		goruntime.UnlockOSThread()
		return
	}
	if w.reprioritize() {
		// The thread keeps its changed priority: it must not go back to
		// the Go runtime's pool. Returning while locked ends it.
		defer w.dropAll()
	} else {
		defer goruntime.UnlockOSThread()
		defer w.dropAll()
	}
	w.tid.Store(int64(threadID()))
	profiled := w.ws.cfg.ProfileStep != nil
	for {
		start := w.ws.now()
		w.timer.reset(w.index)
		var cpu0 time.Duration
		if profiled {
			cpu0, _ = threadCPU()
		}
		w.scratch = w.ws.inboxes[w.local].drain(w.scratch[:0])
		for i := range w.scratch {
			w.handle(&w.scratch[i])
		}
		clear(w.scratch)
		stepped := w.ws.now()
		w.timer.p.Inbox = stepped.Sub(start)
		more := w.step()
		if hook := w.ws.cfg.OnStep; hook != nil {
			h0 := w.ws.now()
			if hook(w) {
				more = true
			}
			w.timer.hook(w.ws.now().Sub(h0))
		}
		d := w.ws.now().Sub(start)
		w.steps[bits.Len64(uint64(d))]++
		if obs := w.ws.cfg.ObserveStep; obs != nil {
			obs(w.index, d)
		}
		if profiled {
			w.timer.p.Total = d
			if cpu1, ok := threadCPU(); ok {
				w.timer.p.CPU = cpu1 - cpu0
			}
			w.ws.cfg.ProfileStep(w.timer.p)
		}
		if ctx.Err() != nil {
			return
		}
		if more || !w.inbox.empty() {
			continue
		}
		select {
		case <-w.inbox.wake:
		case <-ctx.Done():
			return
		}
	}
}

func (w *Worker) handle(m *message) {
	if m.kind == msgCommand {
		t0 := w.ws.now()
		w.timer.cmd, w.timer.cmdDataflow = "", nil
		m.cmd(w)
		w.timer.command(w.ws.now().Sub(t0))
		return
	}
	df := w.bySeq[m.seq]
	if df == nil {
		if m.seq > w.lastBuilt && m.kind != msgActivate {
			w.early[m.seq] = append(w.early[m.seq], *m)
		}
		// Otherwise the dataflow was dropped (or failed to build): discard.
		return
	}
	w.deliver(df, m)
}

func (w *Worker) deliver(df *instance, m *message) {
	if m.op < 0 || m.op >= len(df.ops) {
		return
	}
	op := df.ops[m.op]
	switch m.kind {
	case msgActivate:
		op.activated = true
	case msgData:
		if m.port >= 0 && m.port < len(op.inputs) {
			op.inputs[m.port].deliver(m.data)
		}
	case msgFrontier:
		if m.port >= 0 && m.port < len(op.inputs) {
			op.inputs[m.port].advance(m.from, m.front)
		}
	}
}

// step schedules activated operators once each, in build order from
// where the previous step stopped, until every one was visited or the
// step budget is spent, and reports whether any operator is still
// activated.
func (w *Worker) step() bool {
	budget := time.Duration(w.ws.stepBudget.Load())
	start := w.ws.now()
	n := len(w.dataflows)
	first, firstOp := w.resume.df, w.resume.op
	if first >= n {
		first, firstOp = 0, 0
	}
	w.resume.df, w.resume.op = 0, 0
	for k := 0; k < n; k++ {
		i := (first + k) % n
		df := w.dataflows[i]
		j := 0
		if k == 0 {
			j = min(firstOp, len(df.ops))
		}
		for ; j < len(df.ops); j++ {
			op := df.ops[j]
			if !op.activated {
				continue
			}
			end := w.schedule(op)
			if df.dropped {
				break
			}
			if budget > 0 && end.Sub(start) >= budget {
				w.resume.df, w.resume.op = i, j+1
				return w.anyActivated()
			}
		}
	}
	// A step that started mid-dataflow owes that dataflow's earlier
	// operators a visit; they are first in the next step.
	if firstOp > 0 && first < n {
		w.resume.df = first
	}
	return w.anyActivated()
}

// schedule runs op once and returns the time its schedule ended.
func (w *Worker) schedule(op *Operator) time.Time {
	op.activated = false
	t0 := w.ws.now()
	op.logic.Schedule(op)
	end := w.ws.now()
	d := end.Sub(t0)
	op.elapsed += d
	op.schedules++
	op.longest = max(op.longest, d)
	w.timer.operator(op, d)
	w.afterSchedule(op)
	return end
}

func (w *Worker) anyActivated() bool {
	for _, df := range w.dataflows {
		for _, op := range df.ops {
			if op.activated {
				return true
			}
		}
	}
	return false
}

// afterSchedule flushes exchanged data, then advances and propagates the
// operator's output frontier, preserving "data before frontier" per path.
func (w *Worker) afterSchedule(op *Operator) {
	for _, out := range op.outputs {
		for _, e := range out.targets {
			if e.exchange == nil {
				continue
			}
			for dest, ups := range e.parts {
				if len(ups) == 0 {
					continue
				}
				e.parts[dest] = nil
				w.ws.send(w, dest, message{kind: msgData, seq: op.df.seq, op: e.to.index, port: e.port, from: w.index, data: ups})
			}
		}
	}
	f := frontier.Meet(op.InputFrontier(), op.hold)
	if f == op.frontier {
		return
	}
	if !op.frontier.LessEqual(f) {
		w.ws.regressions.Add(1)
		return
	}
	op.frontier = f
	for _, out := range op.outputs {
		for _, e := range out.targets {
			if e.exchange == nil {
				e.to.inputs[e.port].advance(0, f)
				continue
			}
			for dest := range e.parts {
				w.ws.send(w, dest, message{kind: msgFrontier, seq: op.df.seq, op: e.to.index, port: e.port, from: w.index, front: f})
			}
		}
	}
}

// build constructs dataflow seq with fn and replays messages that arrived
// before it existed.
func (w *Worker) build(seq uint64, name string, dropping *atomic.Bool, fn func(*Builder) error) error {
	df := &instance{w: w, seq: seq, name: name, dropping: dropping}
	w.timer.cmd, w.timer.cmdDataflow = "build", df
	if seq > w.lastBuilt {
		w.lastBuilt = seq
	}
	early := w.early[seq]
	delete(w.early, seq)
	if err := fn(&Builder{df: df}); err != nil {
		df.drop()
		return err
	}
	w.dataflows = append(w.dataflows, df)
	w.bySeq[seq] = df
	for i := range early {
		w.deliver(df, &early[i])
	}
	return nil
}

// drop removes dataflow seq from the worker, running its drop hooks.
func (w *Worker) drop(seq uint64) {
	df := w.bySeq[seq]
	if df == nil {
		return
	}
	w.timer.cmd, w.timer.cmdDataflow = "drop", df
	delete(w.bySeq, seq)
	for i, d := range w.dataflows {
		if d == df {
			w.dataflows = append(w.dataflows[:i], w.dataflows[i+1:]...)
			break
		}
	}
	df.drop()
}

func (w *Worker) dropAll() {
	for _, df := range w.dataflows {
		df.drop()
	}
	w.dataflows = nil
	clear(w.bySeq)
}

func (df *instance) drop() {
	if df.dropped {
		return
	}
	df.dropped = true
	for _, op := range df.ops {
		if d, ok := op.logic.(Dropper); ok {
			d.Drop()
		}
	}
	for _, f := range df.onDrop {
		f()
	}
}
