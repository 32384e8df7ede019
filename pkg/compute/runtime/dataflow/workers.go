package dataflow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Fabric carries messages between the processes of one runtime. Engineer E
// implements it over TCP (pkg/compute/mesh); LocalFabric implements it in
// memory for tests.
type Fabric interface {
	// Send delivers msg to process `to`. Delivery must be FIFO per (sending
	// process, receiving process) pair. The fabric owns msg after the call.
	// An error is fatal to the runtime (shared fate).
	Send(to int, msg []byte) error
	// Receive registers the handler for messages from other processes. It is
	// called once, before the first Send; the fabric calls handler
	// sequentially per sending process and must buffer messages that arrive
	// before Receive is called.
	Receive(handler func(from int, msg []byte))
}

// Config sizes and wires a set of workers.
type Config struct {
	// Workers per process (W) and Processes (P); Process is this process's
	// index in [0, P).
	Workers, Processes, Process int
	// Fabric connects the processes; required when Processes > 1.
	Fabric Fabric
	// OnStep, if set, runs on each worker goroutine after every step (after
	// commands and operators): the place for peeks and frontier reports. It
	// returns whether it has unfinished work (a budgeted peek walk), in
	// which case the worker steps again instead of parking.
	OnStep func(w *Worker) bool
	// ObserveStep, if set, receives each worker step's duration.
	ObserveStep func(worker int, d time.Duration)
	// ProfileStep, if set, receives each worker step's attribution (its
	// phases and its longest command, operator schedule or hook), on the
	// worker goroutine; it must be cheap.
	ProfileStep func(StepProfile)
	// Nice, if positive, is added to the nice value of the workers' OS
	// threads (capped at 19; Linux only): a runtime whose work may wait (index maintenance) runs at a
	// lower priority than one that answers reads, so that the kernel gives
	// the reads a core first when both want one. A worker whose thread's
	// priority was changed never returns the thread to the Go runtime (it
	// exits with it locked, which ends the thread), so no other goroutine
	// inherits the priority. A failure to set it is reported through
	// OnNiceError and the worker runs at the default priority.
	Nice int
	// OnNiceError, if set, receives a worker's failure to apply Nice.
	OnNiceError func(worker int, err error)
	// Now, if set, replaces time.Now for step timing (tests inject a
	// clock to check step attribution without depending on wall time).
	Now func() time.Time
	// OnFatal, if set, is called once with the first fatal error (a fabric
	// send failure or a corrupt fabric message).
	OnFatal func(error)
}

// Workers is the set of this process's workers.
type Workers struct {
	cfg     Config
	peers   int
	workers []*Worker
	inboxes []*inbox

	mu      sync.Mutex // orders Install/Drop/Broadcast across all inboxes
	nextSeq uint64
	// dropping holds, per installed dataflow, the flag Drop sets at once
	// (before the drop reaches the workers' inboxes), so that an operator
	// in the middle of a long Schedule can notice and stop early.
	dropping map[uint64]*atomic.Bool

	regressions atomic.Int64
	fatalOnce   sync.Once
	// stepBudget is SetStepBudget's value in nanoseconds (0: off).
	stepBudget atomic.Int64
	fatal      atomic.Pointer[error]

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New validates cfg and creates (but does not start) the workers.
func New(cfg Config) (*Workers, error) {
	if cfg.Workers <= 0 {
		return nil, fmt.Errorf("dataflow: workers per process must be positive, got %d", cfg.Workers)
	}
	if cfg.Processes <= 0 {
		cfg.Processes = 1
	}
	if cfg.Process < 0 || cfg.Process >= cfg.Processes {
		return nil, fmt.Errorf("dataflow: process index %d outside [0, %d)", cfg.Process, cfg.Processes)
	}
	if cfg.Processes > 1 && cfg.Fabric == nil {
		return nil, errors.New("dataflow: a multi-process runtime needs a fabric")
	}
	ws := &Workers{cfg: cfg, peers: cfg.Workers * cfg.Processes}
	for i := 0; i < cfg.Workers; i++ {
		ib := newInbox()
		ws.inboxes = append(ws.inboxes, ib)
		ws.workers = append(ws.workers, &Worker{
			ws: ws, index: i + cfg.Workers*cfg.Process, local: i, inbox: ib,
			bySeq: map[uint64]*instance{}, early: map[uint64][]message{},
		})
	}
	if cfg.Fabric != nil {
		cfg.Fabric.Receive(ws.receive)
	}
	return ws, nil
}

// Start launches one goroutine per worker. They stop when ctx is cancelled or
// Stop is called.
func (ws *Workers) Start(ctx context.Context) {
	ctx, ws.cancel = context.WithCancel(ctx)
	for _, w := range ws.workers {
		ws.wg.Add(1)
		go func() {
			defer ws.wg.Done()
			w.run(ctx)
		}()
	}
}

// Stop stops the workers, drops every dataflow (running drop hooks) and
// waits for the worker goroutines to exit.
func (ws *Workers) Stop() {
	if ws.cancel != nil {
		ws.cancel()
	}
	ws.wg.Wait()
}

// Peers returns W*P.
func (ws *Workers) Peers() int { return ws.peers }

// now is the step clock (Config.Now).
func (ws *Workers) now() time.Time {
	if ws.cfg.Now != nil {
		return ws.cfg.Now()
	}
	return time.Now()
}

// Local returns the number of workers in this process.
func (ws *Workers) Local() int { return len(ws.workers) }

// ThreadIDs returns the OS thread ids of the local workers' threads (0 for
// a worker not yet running, and off Linux). Safe from any goroutine.
func (ws *Workers) ThreadIDs() []int {
	out := make([]int, len(ws.workers))
	for i, w := range ws.workers {
		out[i] = w.ThreadID()
	}
	return out
}

// Regressions counts ignored attempts to move an output frontier backwards;
// it stays zero unless an operator is buggy.
func (ws *Workers) Regressions() int64 { return ws.regressions.Load() }

// Err returns the first fatal error, if any.
func (ws *Workers) Err() error {
	if p := ws.fatal.Load(); p != nil {
		return *p
	}
	return nil
}

func (ws *Workers) fail(err error) {
	ws.fatalOnce.Do(func() {
		ws.fatal.Store(&err)
		if ws.cfg.OnFatal != nil {
			ws.cfg.OnFatal(err)
		}
	})
}

// Broadcast runs cmd on every local worker, after everything broadcast
// before it. cmd runs concurrently on the different workers.
func (ws *Workers) Broadcast(cmd func(*Worker)) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.broadcastLocked(cmd)
}

func (ws *Workers) broadcastLocked(cmd func(*Worker)) {
	for _, ib := range ws.inboxes {
		ib.push(message{kind: msgCommand, cmd: cmd})
	}
}

// Install assigns the next dataflow sequence number and builds the dataflow
// on every worker with build, which must add the same operators on every
// worker of every process (processes must install the same dataflows in the
// same order). done, if non-nil, is called on each worker with its build
// error. Install returns the sequence number.
func (ws *Workers) Install(name string, build func(*Builder) error, done func(w *Worker, err error)) uint64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.nextSeq++
	seq := ws.nextSeq
	dropping := new(atomic.Bool)
	if ws.dropping == nil {
		ws.dropping = map[uint64]*atomic.Bool{}
	}
	ws.dropping[seq] = dropping
	ws.broadcastLocked(func(w *Worker) {
		err := w.build(seq, name, dropping, build)
		if done != nil {
			done(w, err)
		}
	})
	return seq
}

// Drop removes dataflow seq from every local worker, running drop hooks.
// The dataflow's operators see Operator.Dropping report true from this
// call on, even while their worker is still inside a step: the drop itself
// waits in the worker's inbox until the step returns.
func (ws *Workers) Drop(seq uint64) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if f := ws.dropping[seq]; f != nil {
		f.Store(true)
		delete(ws.dropping, seq)
	}
	ws.broadcastLocked(func(w *Worker) { w.drop(seq) })
}

// send routes a message from worker `from` to global worker dest.
func (ws *Workers) send(from *Worker, dest int, m message) {
	p := dest / ws.cfg.Workers
	if p == ws.cfg.Process {
		local := dest % ws.cfg.Workers
		if local == from.local {
			// Self-delivery skips the inbox; order is preserved because the
			// worker handles it before any later message from itself.
			from.handle(&m)
			return
		}
		ws.inboxes[local].push(m)
		return
	}
	wm := wireMessage{target: dest, from: m.from, seq: m.seq, op: m.op, port: m.port}
	if m.kind == msgFrontier {
		wm.kind, wm.front = wireFrontier, m.front
	} else {
		wm.kind, wm.updates = wireData, m.data.([]Update)
	}
	if err := ws.cfg.Fabric.Send(p, wm.encode(nil)); err != nil {
		ws.fail(fmt.Errorf("send to process %d: %w", p, err))
	}
}

// receive handles a message from another process's fabric.
func (ws *Workers) receive(from int, b []byte) {
	wm, err := decodeWire(b)
	if err != nil {
		ws.fail(fmt.Errorf("message from process %d: %w", from, err))
		return
	}
	if wm.target/ws.cfg.Workers != ws.cfg.Process || wm.from/ws.cfg.Workers != from {
		ws.fail(fmt.Errorf("message from process %d misrouted: worker %d to worker %d", from, wm.from, wm.target))
		return
	}
	m := message{seq: wm.seq, op: wm.op, port: wm.port, from: wm.from}
	if wm.kind == wireFrontier {
		m.kind, m.front = msgFrontier, wm.front
	} else {
		m.kind, m.data = msgData, wm.updates
	}
	ws.inboxes[wm.target%ws.cfg.Workers].push(m)
}

// Fail records a fatal error (shared fate: the process must end) and calls
// OnFatal once. Any goroutine may call it.
func (ws *Workers) Fail(err error) { ws.fail(err) }

// SetStepBudget bounds a worker step's operator schedules: once a step
// has scheduled operators for d, it ends after the schedule in progress,
// and the next step (after the worker's commands and its OnStep hook:
// peeks and frontier reports) resumes with the operator after the last
// one scheduled. An operator's own schedule is bounded by its fuel, not
// by this; 0 (the default) schedules every activated operator in every
// step. Safe from any goroutine; workers read it at each step.
func (ws *Workers) SetStepBudget(d time.Duration) { ws.stepBudget.Store(int64(max(d, 0))) }

// StepBudget returns the bound SetStepBudget set.
func (ws *Workers) StepBudget() time.Duration { return time.Duration(ws.stepBudget.Load()) }
