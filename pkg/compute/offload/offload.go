package offload

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tandemdb/tandem/pkg/compute/peek"
)

// Mode selects where walks run.
type Mode int

const (
	// Budgeted walks up to Budget records on the worker, then offloads.
	Budgeted Mode = iota
	// Inline walks to completion on the worker.
	Inline
	// Always offloads the whole walk.
	Always
)

func (m Mode) String() string {
	switch m {
	case Inline:
		return "inline"
	case Always:
		return "offload"
	default:
		return "budgeted"
	}
}

// ParseMode parses the system parameter peek_walk_mode.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{Budgeted, Inline, Always} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown peek walk mode %q (want inline, budgeted or offload)", s)
}

// Policy is the mode plus the budget of records a worker walks per peek
// before offloading.
type Policy struct {
	Mode   Mode
	Budget int
}

// DefaultPolicy walks 10k records on the worker: a point lookup finishes
// there; a scan or a skewed key moves off it within about a millisecond.
var DefaultPolicy = Policy{Mode: Budgeted, Budget: 10_000}

// Update applies the system parameters peek_walk_mode and
// peek_walk_budget found in params.
func (p Policy) Update(params map[string]string) (Policy, error) {
	if v, ok := params["peek_walk_mode"]; ok {
		m, err := ParseMode(v)
		if err != nil {
			return p, err
		}
		p.Mode = m
	}
	if v, ok := params["peek_walk_budget"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return p, fmt.Errorf("peek_walk_budget %q: want a positive integer", v)
		}
		p.Budget = n
	}
	return p, nil
}

// sliceRecords is how many records an offloaded walk visits between
// cancellation checks.
const sliceRecords = 4096

// Done receives a walk's outcome exactly once.
type Done func(rows []peek.RowCount, err error)

// Sink receives the chunks of a chunked walk (peek.Options.ChunkBytes). Put
// takes a chunk; it returns false when the consumer is full, and then calls
// resume, once, from any goroutine, when the walk may continue (or when the
// consumer gave up: the walk's context is then canceled). The walk's last
// rows still arrive through Done.
type Sink interface {
	Put(rows []peek.RowCount, resume func()) bool
}

type job struct {
	ctx  context.Context
	walk *peek.Walk
	sink Sink
	done Done
}

// Pool is a fixed set of goroutines that continue offloaded walks in FIFO
// order.
type Pool struct {
	mu      sync.Mutex
	queue   []job
	wake    chan struct{}
	closed  bool
	wg      sync.WaitGroup
	inline  atomic.Uint64
	offload atomic.Uint64
}

// NewPool starts size goroutines (at least one).
func NewPool(size int) *Pool {
	p := &Pool{wake: make(chan struct{}, 1)}
	for range max(1, size) {
		p.wg.Add(1)
		go p.loop()
	}
	return p
}

// Counts returns how many walks finished on the worker and how many were
// offloaded.
func (p *Pool) Counts() (inline, offloaded uint64) { return p.inline.Load(), p.offload.Load() }

// Run walks w under pol. If the walk finishes on the calling goroutine, Run
// returns true and the caller reads w.Result(); done is not called.
// Otherwise the rest of the walk is queued on the pool, Run returns false,
// and done runs exactly once on a pool goroutine.
func (p *Pool) Run(ctx context.Context, w *peek.Walk, pol Policy, done Done) bool {
	return p.RunChunked(ctx, w, pol, nil, done)
}

// RunChunked is Run for a chunked walk whose chunks go to sink (nil: the
// walk is not chunked). A walk with a chunk ready leaves the worker even in
// Inline mode: handing a chunk over may have to wait for the consumer, and
// a worker never waits; the pool parks such a walk, holding no goroutine,
// until the sink resumes it.
func (p *Pool) RunChunked(ctx context.Context, w *peek.Walk, pol Policy, sink Sink, done Done) bool {
	switch pol.Mode {
	case Inline:
		w.Step(0)
	case Budgeted:
		w.Step(max(1, pol.Budget))
	}
	if w.Done() {
		p.inline.Add(1)
		return true
	}
	p.offload.Add(1)
	p.enqueue(job{ctx: ctx, walk: w, sink: sink, done: done})
	return false
}

// enqueue queues j, or fails it when the pool is closed.
func (p *Pool) enqueue(j job) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		j.done(nil, fmt.Errorf("peek walk: %w", context.Canceled))
		return
	}
	p.queue = append(p.queue, j)
	p.signalLocked()
	p.mu.Unlock()
}

// signalLocked wakes one idle goroutine; sends happen under mu so that
// Close cannot close the channel under a sender.
func (p *Pool) signalLocked() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *Pool) next() (job, bool) {
	for {
		p.mu.Lock()
		if len(p.queue) > 0 {
			j := p.queue[0]
			p.queue[0] = job{}
			p.queue = p.queue[1:]
			if len(p.queue) > 0 {
				// Pass the wake-up on so idle siblings pick up the rest.
				p.signalLocked()
			}
			p.mu.Unlock()
			return j, true
		}
		if p.closed {
			p.mu.Unlock()
			return job{}, false
		}
		p.mu.Unlock()
		<-p.wake
	}
}

func (p *Pool) loop() {
	defer p.wg.Done()
	for {
		j, ok := p.next()
		if !ok {
			return
		}
		p.continueWalk(j)
	}
}

// continueWalk walks j until it ends, is canceled, or parks on its sink.
func (p *Pool) continueWalk(j job) {
	for {
		if err := j.ctx.Err(); err != nil {
			j.done(nil, err)
			return
		}
		if j.walk.ChunkReady() {
			if j.sink == nil {
				j.done(nil, fmt.Errorf("peek walk: chunked walk without a sink"))
				return
			}
			var once sync.Once
			if !j.sink.Put(j.walk.TakeChunk(), func() { once.Do(func() { p.enqueue(j) }) }) {
				return // parked: the sink re-queues it
			}
			continue
		}
		if j.walk.Step(sliceRecords) {
			j.done(j.walk.Result())
			return
		}
	}
}

// Close fails queued walks with context.Canceled and waits for the pool's
// goroutines to finish the walks they are running.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return
	}
	p.closed = true
	queued := p.queue
	p.queue = nil
	close(p.wake)
	p.mu.Unlock()
	for _, j := range queued {
		j.done(nil, fmt.Errorf("peek walk: %w", context.Canceled))
	}
	p.wg.Wait()
}
