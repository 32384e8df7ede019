package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/offload"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// Errors callers act on.
var (
	// ErrUnknownCollection: a command names a collection the runtime does not have.
	ErrUnknownCollection = errors.New("runtime: unknown collection")
	// ErrDuplicateExport: CreateDataflow exports an id that already exists.
	ErrDuplicateExport = errors.New("runtime: collection already exists")
	// ErrStopped: the runtime was stopped.
	ErrStopped = errors.New("runtime: stopped")
)

// Config configures a runtime.
type Config struct {
	// Workers per process (W), Processes (P) and this process's index.
	Workers, Processes, Process int
	// Role labels the runtime.
	Role Role
	// Fabric connects the processes; required when Processes > 1.
	Fabric Fabric
	// Sources opens the sources of dataflows' source imports.
	Sources render.SourceFactory
	// StorageSinks opens the writers of materialized views' storage sinks
	// (subscribe sinks with a shard); nil refuses such dataflows.
	StorageSinks render.StorageSinkFactory
	// Respond receives every response, one at a time, in order, from
	// the runtime's responder goroutine.
	Respond func(Response)
	// RespondInline lets Respond also run on the goroutine that called
	// Peek, before Peek returns, when the peek is answered within the call
	// (a sealed point read) and no other response is queued: still one at
	// a time and in order. The caller of Peek must then hold no lock that
	// Respond takes.
	RespondInline bool
	// Metrics, if set, receives measurements.
	Metrics Metrics
	// MaxResultBytes bounds a peek's result (0: unbounded); it can be
	// changed with UpdateConfiguration("max_result_size").
	MaxResultBytes int
	// Publisher, if set, publishes every index export shard as it is built
	// (the maintenance runtime of a two-runtime process); nil publishes
	// nothing.
	Publisher Publisher
	// Shared, if set, resolves index imports of peer indexes published by
	// the other runtime of this process (an Interactive runtime's imports).
	Shared render.SharedImports
	// OnFatal, if set, is called once with the first fatal error (a lost
	// peer, a corrupt exchange message, a broken arrangement). The process
	// should exit: the runtime's state can no longer be trusted.
	OnFatal func(error)
	// WorkerNice, if positive, lowers the scheduling priority of the
	// workers' OS threads by that much (dataflow.Config.Nice; Linux only):
	// the maintenance runtime of a two-runtime process, so that the
	// interactive runtime and the read path get a core first.
	// OnWorkerNiceError, if set, hears of a worker that could not apply it
	// (and runs at the default priority).
	WorkerNice        int
	OnWorkerNiceError func(worker int, err error)
}

// Frontiers reports a collection's frontiers; they never regress, the first
// report is not below the dataflow's as_of, and a dropped collection is
// reported once with every frontier closed.
type Frontiers struct {
	ID                   plan.GlobalID
	Write, Input, Output frontier.Frontier
}

func (*Frontiers) isResponse() {}

// SubscribeResponse carries a subscribe's consolidated updates over
// [Lower, Upper) from this process's shard.
type SubscribeResponse struct {
	ID           plan.GlobalID
	Lower, Upper frontier.Frontier
	Updates      []UpdateRow
	// Error is set when the collection's error collection gained an error
	// in [Lower, Upper); the subscribe's output is then not trustworthy.
	Error error
}

func (*SubscribeResponse) isResponse() {}

// Peek asks for the contents of an index at a time.
type Peek struct {
	UUID      string
	Target    plan.GlobalID
	Timestamp frontier.Time
	// Keys, if non-nil, are literal key constraints: encoded index keys.
	Keys [][]byte
	// MFP is applied to each row of the index (nil: the rows as they are).
	MFP *expr.MFP
	// Streamable says the consumer needs no total order of the whole
	// result: when a worker's share exceeds the peek stash threshold, the
	// answer becomes a PeekResponse.Stream of chunks instead of one
	// materialised, sorted slice.
	Streamable bool
	// TopK, if set, lets each walk keep only the first rows of the result
	// in an order (an ordered peek with a limit): the consumer applies the
	// same order and limit to the merged answer.
	TopK *peek.TopK
}

// collection is the runtime-wide record of one export.
type collection struct {
	seq       uint64
	subscribe bool
}

// Commands is the command set a runtime's driver issues: the server's
// Engine drives a *Runtime (Solo) or the placement multiplexer, and the
// multiplexer drives the maintenance and interactive role wrappers, which
// drive a *Runtime each. It is defined here, under both drivers, because
// neither may import the other (docs/design/architecture.md).
type Commands interface {
	CreateDataflow(desc plan.DataflowDescription) error
	AllowCompaction(id plan.GlobalID, f frontier.Frontier) error
	UpdateConfiguration(params map[string]string) error
	Peek(p Peek)
	CancelPeek(uuid string)
}

// Runtime is one process's part of a compute runtime: W workers that build
// every dataflow it is told to, serve peeks and report frontiers.
type Runtime struct {
	cfg     Config
	metrics Metrics
	ws      *dataflow.Workers
	states  []*workerState

	mu          sync.Mutex // guards collections, liveExports, subscribes
	collections map[plan.GlobalID]*collection
	liveExports map[uint64]int // per dataflow seq: exports not yet dropped
	subscribes  map[plan.GlobalID]*subscribeMerger

	tracker *frontierTracker[plan.GlobalID]
	peeks   *peekAggregator
	// sealed lists the built index shards for point reads served off the
	// workers (sealedpeek.go); sealedPeeks counts those reads.
	sealed      *sealedShards
	sealedPeeks atomic.Uint64
	maxBytes    atomic.Int64
	walkBudget  atomic.Int64
	// sourceChunk bounds the items a source produces per step (0:
	// unbounded); "source_step_items".
	sourceChunk atomic.Int64
	// arrangeFuel bounds the updates an arrangement's batch build sorts or
	// merges per step (0: unbounded); "arrange_step_updates".
	arrangeFuel atomic.Int64
	walkMode    atomic.Int64 // an offload.Mode
	// stashThreshold is the chunk size of streamable peeks' walks (0:
	// never stream), parameter "peek_stash_threshold".
	stashThreshold atomic.Int64
	offload        *offload.Pool
	// imports counts how built dataflows read their index imports.
	imports render.ImportCounters
	// peekHist[i] counts answered peeks that took [2^(i-1), 2^i) ns.
	peekHist [64]atomic.Int64
	foreign  foreignPeeks
	resp     *responder
	stop     chan struct{}
	respDone sync.WaitGroup
}

// workerState is a worker's share of the runtime's state; only its worker
// goroutine touches it.
type workerState struct {
	indexes   map[plan.GlobalID]*render.Index
	dataflows map[uint64]*render.Built
	peeks     []*pendingPeek
	written   map[plan.GlobalID][2]frontier.Frontier
	pubs      map[plan.GlobalID]Publication
	builtAt   map[plan.GlobalID]time.Time
	hydrated  map[plan.GlobalID]time.Duration
	maint     maintenanceSampler
}

type pendingPeek struct {
	p        Peek
	maxBytes int
	// walk is the peek's cursor walk once its time became readable; it
	// advances by at most the walk budget per worker step, so one large
	// peek does not stall the worker's operators and other peeks.
	walk *peek.Walk
}

// DefaultWorkerStepBudget is how long a worker step schedules operators
// before it ends and lets commands, peeks and frontier reports in
// ("worker_step_budget_ms"; dataflow.Workers.SetStepBudget).
const DefaultWorkerStepBudget = 10 * time.Millisecond

// New creates a runtime; Start runs it.
func New(cfg Config) (*Runtime, error) {
	if cfg.Respond == nil {
		return nil, errors.New("runtime: config needs a Respond callback")
	}
	r := &Runtime{
		cfg:         cfg,
		metrics:     cfg.Metrics,
		collections: map[plan.GlobalID]*collection{},
		liveExports: map[uint64]int{},
		subscribes:  map[plan.GlobalID]*subscribeMerger{},
		tracker:     newFrontierTracker[plan.GlobalID](cfg.Workers),
		peeks:       newPeekAggregator(cfg.Workers),
		sealed:      newSealedShards(),
		resp:        newResponder(cfg.Respond),
		stop:        make(chan struct{}),
	}
	if r.metrics == nil {
		r.metrics = noMetrics{}
	}
	r.maxBytes.Store(int64(cfg.MaxResultBytes))
	r.walkBudget.Store(DefaultPeekWalkBudget)
	r.sourceChunk.Store(DefaultSourceStepItems)
	r.arrangeFuel.Store(render.DefaultArrangeStepUpdates)
	r.walkMode.Store(int64(offload.Budgeted))
	r.offload = offload.NewPool(max(2, cfg.Workers))
	dcfg := dataflow.Config{
		Workers: cfg.Workers, Processes: cfg.Processes, Process: cfg.Process, Fabric: cfg.Fabric,
		OnStep:      r.onStep,
		ObserveStep: r.metrics.WorkerStep,
		OnFatal:     cfg.OnFatal,
		Nice:        cfg.WorkerNice, OnNiceError: cfg.OnWorkerNiceError,
	}
	if p, ok := r.metrics.(StepProfiler); ok {
		dcfg.ProfileStep = p.StepProfile
	}
	ws, err := dataflow.New(dcfg)
	if err != nil {
		return nil, fmt.Errorf("new runtime: %w", err)
	}
	r.ws = ws
	ws.SetStepBudget(DefaultWorkerStepBudget)
	for i := 0; i < cfg.Workers; i++ {
		r.states = append(r.states, &workerState{
			indexes: map[plan.GlobalID]*render.Index{}, dataflows: map[uint64]*render.Built{},
			written: map[plan.GlobalID][2]frontier.Frontier{},
			pubs:    map[plan.GlobalID]Publication{},
			builtAt: map[plan.GlobalID]time.Time{}, hydrated: map[plan.GlobalID]time.Duration{},
		})
	}
	return r, nil
}

// Start runs the workers and the responder until ctx ends or Stop.
func (r *Runtime) Start(ctx context.Context) {
	r.respDone.Add(1)
	go func() {
		defer r.respDone.Done()
		r.resp.run(r.stop)
	}()
	r.ws.Start(ctx)
}

// Stop stops the workers (dropping every dataflow, releasing holds and
// source goroutines), forgets pending peeks, delivers the remaining
// responses and returns.
func (r *Runtime) Stop() {
	r.ws.Stop()
	// Pending peeks get no response: Canceled is reserved for CancelPeek,
	// and the controller treats a stopped replica's peeks as lost.
	r.peeks.drain()
	r.offload.Close()
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.respDone.Wait()
}

// WorkerThreadIDs returns the OS thread ids of the local workers (0 for a
// worker not yet running, and off Linux).
func (r *Runtime) WorkerThreadIDs() []int { return r.ws.ThreadIDs() }

// Err returns the runtime's fatal error (a lost peer), if any.
func (r *Runtime) Err() error { return r.ws.Err() }

// Role returns the runtime's role.
func (r *Runtime) Role() Role { return r.cfg.Role }

// CreateDataflow validates desc and builds it on every worker. It refuses
// (and builds nothing) when the description is invalid, exports an id that
// already exists, or imports an index that does not.
func (r *Runtime) CreateDataflow(desc plan.DataflowDescription) error {
	r.metrics.Command("create_dataflow")
	r.mu.Lock()
	defer r.mu.Unlock()
	hasIndex := func(id plan.GlobalID) bool {
		if c := r.collections[id]; c != nil && !c.subscribe {
			return true
		}
		return r.cfg.Shared != nil && r.cfg.Shared.Has(id)
	}
	if err := render.Check(&desc, hasIndex, r.sources()); err != nil {
		return fmt.Errorf("create dataflow %s: %w", desc.DebugName, err)
	}
	for _, imp := range desc.SourceImports {
		if imp.Connection.Kind != plan.SourceIntrospection && r.cfg.Sources == nil {
			return fmt.Errorf("create dataflow %s: source %s: the runtime has no source factory", desc.DebugName, imp.ID)
		}
	}
	var exports []plan.GlobalID
	for _, ex := range desc.IndexExports {
		exports = append(exports, ex.ID)
	}
	for _, s := range desc.SubscribeSinks {
		if s.Shard != "" && r.cfg.StorageSinks == nil {
			return fmt.Errorf("create dataflow %s: storage sink %s: the runtime has no storage sink factory", desc.DebugName, s.ID)
		}
		exports = append(exports, s.ID)
	}
	seen := map[plan.GlobalID]bool{}
	for _, id := range exports {
		if r.collections[id] != nil || seen[id] {
			return fmt.Errorf("create dataflow %s: export %s: %w", desc.DebugName, id, ErrDuplicateExport)
		}
		seen[id] = true
	}
	// Register before broadcasting so that a peek or compaction issued
	// right after this call finds the collection; workers process commands
	// in order, so they see the build first.
	seq := r.ws.Install(desc.DebugName, func(b *dataflow.Builder) error {
		st := r.states[b.Worker().Local()]
		built, err := render.Build(b, &desc, render.Env{
			Sources:      r.sources(),
			Indexes:      st.indexes,
			Shared:       r.cfg.Shared,
			Subscribe:    r.subscribeReport,
			StorageSinks: r.cfg.StorageSinks,
			Fail:         func(err error) { r.ws.Fail(fmt.Errorf("dataflow %s: %w", desc.DebugName, err)) },
			SourceChunk:  func() int { return int(r.sourceChunk.Load()) },
			Imports:      &r.imports,
			ArrangeFuel:  func() int { return int(r.arrangeFuel.Load()) },
		})
		if err != nil {
			return err
		}
		st.dataflows[b.Seq()] = built
		pubs := map[plan.GlobalID]Publication{}
		for id, idx := range built.Indexes {
			st.indexes[id] = idx
			r.sealed.built(id, b.Seq(), b.Worker().Local(), r.cfg.Workers, idx)
			delete(st.written, id)
			delete(st.hydrated, id)
			st.builtAt[id] = time.Now()
			if r.cfg.Publisher == nil {
				continue
			}
			pub, err := r.cfg.Publisher.Publish(id, b.Worker().Index(), idx.Ok.Trace, idx.Err.Trace)
			if err != nil {
				return fmt.Errorf("publish %s: %w", id, err)
			}
			pubs[id] = pub
			st.pubs[id] = pub
		}
		b.OnDrop(func() {
			delete(st.dataflows, b.Seq())
			for id, idx := range built.Indexes {
				r.sealed.dropped(id, b.Worker().Local(), idx)
				if st.indexes[id] == idx {
					delete(st.indexes, id)
					delete(st.written, id)
					delete(st.builtAt, id)
					delete(st.hydrated, id)
				}
				if pub := pubs[id]; pub != nil {
					pub.Close()
					if st.pubs[id] == pub {
						delete(st.pubs, id)
					}
				}
			}
		})
		return nil
	}, func(w *dataflow.Worker, err error) {
		if err != nil {
			r.ws.Fail(fmt.Errorf("build dataflow %s on worker %d: %w", desc.DebugName, w.Index(), err))
		}
	})
	for _, ex := range desc.IndexExports {
		r.collections[ex.ID] = &collection{seq: seq}
		r.tracker.add(ex.ID, desc.AsOf)
	}
	for _, s := range desc.SubscribeSinks {
		r.collections[s.ID] = &collection{seq: seq, subscribe: true}
		r.subscribes[s.ID] = newSubscribeMerger(r.cfg.Workers, desc.AsOf)
		r.tracker.add(s.ID, desc.AsOf)
	}
	r.liveExports[seq] = len(exports)
	if len(exports) == 0 {
		// Nothing can ever drop it; a dataflow without exports is useless.
		delete(r.liveExports, seq)
		r.ws.Drop(seq)
	}
	return nil
}

// AllowCompaction lets collection id forget history before f: reads
// (peeks) at times before f fail from now on. A closed f drops the
// collection; when the last export of a dataflow is dropped, the dataflow
// is dropped on every worker (every hold released, every source closed) and
// the collection's frontiers are reported closed.
func (r *Runtime) AllowCompaction(id plan.GlobalID, f frontier.Frontier) error {
	r.metrics.Command("allow_compaction")
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.collections[id]
	if c == nil {
		return fmt.Errorf("allow compaction of %s to %v: %w", id, f, ErrUnknownCollection)
	}
	if !c.subscribe {
		r.ws.Broadcast(func(w *dataflow.Worker) {
			st := r.states[w.Local()]
			if idx := st.indexes[id]; idx != nil {
				idx.AllowCompaction(f)
			}
			if pub := st.pubs[id]; pub != nil && !f.IsClosed() {
				if err := pub.Compact(f); err != nil {
					r.ws.Fail(fmt.Errorf("compact publication of %s: %w", id, err))
				}
			}
		})
	}
	if !f.IsClosed() {
		return nil
	}
	delete(r.collections, id)
	delete(r.subscribes, id)
	r.tracker.remove(id, r.frontiersEmitter(id))
	r.liveExports[c.seq]--
	if r.liveExports[c.seq] <= 0 {
		delete(r.liveExports, c.seq)
		r.ws.Drop(c.seq)
	}
	return nil
}

// OnWorkers runs fn on every local worker of this process, on the worker
// goroutine between steps, after every command issued before it; an error
// is fatal for the runtime. The interactive wrapper advances its standing
// holds on peer indexes there, so that they move when this runtime's
// workers get to the compaction, not when it is dispatched.
func (r *Runtime) OnWorkers(fn func(local int) error) {
	r.ws.Broadcast(func(w *dataflow.Worker) {
		if err := fn(w.Local()); err != nil {
			r.ws.Fail(err)
		}
	})
}

// DefaultPeekWalkBudget is the number of (key, value) pairs a peek walk
// visits on its worker before the rest of the walk moves to the offload pool
// (mode "budgeted"): a point lookup finishes on the worker, while a scan or a
// key with millions of values stops blocking the worker within a
// millisecond or two.
const DefaultPeekWalkBudget = 10_000

// DefaultSourceStepItems is how many items (a load generator's keys or
// rewrites, ...) a source produces in one worker step before it yields: a
// few milliseconds of generation, so that a snapshot of millions of rows
// leaves the worker to other dataflows, commands and peeks between chunks.
// 8,192: at 16,384 a Poll of 64-byte rows and its KeyBy took 12-16 ms of
// CPU each (mostly fresh memory; BenchmarkChurnKeyValue), the longest
// maintenance schedules once the arrangement's were bounded
// (docs/design/runtime.md, "The longest schedule").
const DefaultSourceStepItems = 8_192

// UpdateConfiguration applies runtime parameters; unknown names are
// ignored (they belong to other layers). Known: "max_result_size" (bytes,
// 0 unbounded), "peek_walk_mode" (inline, budgeted or offload),
// "peek_walk_budget" (visits on the worker before offloading, 0 unbounded),
// "source_step_items" (items a source produces per step, 0 unbounded)
// and "peek_stash_threshold" (bytes of a streamable peek's result a walk
// buffers before handing a chunk over, 0: never stream).
func (r *Runtime) UpdateConfiguration(params map[string]string) error {
	r.metrics.Command("update_configuration")
	if v, ok := params["peek_walk_mode"]; ok {
		m, err := offload.ParseMode(v)
		if err != nil {
			return fmt.Errorf("update configuration: %w", err)
		}
		r.walkMode.Store(int64(m))
	}
	if v, ok := params["peek_walk_budget"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("update configuration: peek_walk_budget %q: want a non-negative integer", v)
		}
		r.walkBudget.Store(n)
	}
	if v, ok := params["source_step_items"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("update configuration: source_step_items %q: want a non-negative integer", v)
		}
		r.sourceChunk.Store(n)
	}
	if v, ok := params["arrange_step_updates"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("update configuration: arrange_step_updates %q: want a non-negative integer", v)
		}
		r.arrangeFuel.Store(n)
	}
	if v, ok := params["worker_step_budget_ms"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("update configuration: worker_step_budget_ms %q: want a non-negative integer", v)
		}
		r.ws.SetStepBudget(time.Duration(n) * time.Millisecond)
	}
	if v, ok := params["peek_stash_threshold"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("update configuration: peek_stash_threshold %q: want a non-negative integer", v)
		}
		r.stashThreshold.Store(n)
	}
	if v, ok := params["max_result_size"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("update configuration: max_result_size %q: want a non-negative integer", v)
		}
		r.maxBytes.Store(n)
	}
	return nil
}

// Peek reads index p.Target at p.Timestamp once that time is complete in
// the index. Exactly one PeekResponse per UUID follows, from this process
// with its shard of the result.
func (r *Runtime) Peek(p Peek) {
	r.metrics.Command("peek")
	fail := func(err error) {
		r.peekDone("error", 0)
		r.resp.push(&PeekResponse{UUID: p.UUID, Error: err})
	}
	r.mu.Lock()
	c := r.collections[p.Target]
	r.mu.Unlock()
	if c == nil || c.subscribe {
		fail(fmt.Errorf("peek %s at %d: index %s: %w", p.UUID, p.Timestamp, p.Target, ErrUnknownCollection))
		return
	}
	maxBytes := int(r.maxBytes.Load())
	if served, err := r.serveSealed(p, c.seq, maxBytes); served {
		if err != nil {
			fail(err)
		}
		return
	}
	if err := r.peeks.add(p.UUID); err != nil {
		fail(err)
		return
	}
	r.ws.Broadcast(func(w *dataflow.Worker) {
		st := r.states[w.Local()]
		st.peeks = append(st.peeks, &pendingPeek{p: p, maxBytes: maxBytes})
		// Serve it now if its time is already readable: the command is
		// handled between two steps, and the next step may be long (a
		// hydration); waiting for onStep would make the peek wait for all of
		// it even though the index was sealed at the end of the last one.
		r.servePeeks(st)
	})
}

// CancelPeek cancels a pending peek: if it has not been answered, its one
// response is Canceled.
func (r *Runtime) CancelPeek(uuid string) {
	r.metrics.Command("cancel_peek")
	if resp, d, ok := r.peeks.cancel(uuid); ok {
		r.peekDone("canceled", d)
		if resp != nil {
			r.resp.push(resp)
		}
	}
}

// onStep runs on every worker after each step: it reports frontier changes
// and serves the peeks whose time became readable. Peeks wait here rather
// than being polled: a worker steps only when something (new data, a
// frontier, a command) arrived, and an index's upper advances only in a
// step of the worker that owns the shard.
func (r *Runtime) onStep(w *dataflow.Worker) bool {
	st := r.states[w.Local()]
	if d := st.maint.sample(w, time.Now()); d > 0 {
		r.metrics.ArrangementMaintenance(w.Index(), d)
	}
	for id, idx := range st.indexes {
		cur := [2]frontier.Frontier{idx.Upper(), idx.InputFrontier()}
		if st.written[id] == cur {
			continue
		}
		st.written[id] = cur
		if _, done := st.hydrated[id]; !done && idx.AsOf().Less(cur[0]) {
			st.hydrated[id] = time.Since(st.builtAt[id])
		}
		if pub := st.pubs[id]; pub != nil {
			if err := pub.Refresh(); err != nil {
				r.ws.Fail(fmt.Errorf("refresh publication of %s: %w", id, err))
			}
		}
		r.tracker.update(id, w.Local(), cur[0], cur[1], r.frontiersEmitter(id))
	}
	r.servePeeks(st)
	return false
}

// servePeeks answers (or hands to the offload pool) every pending peek of
// the worker whose time is readable; the others keep waiting.
func (r *Runtime) servePeeks(st *workerState) {
	if len(st.peeks) == 0 {
		return
	}
	budget := int(r.walkBudget.Load())
	keep := st.peeks[:0]
	for _, pp := range st.peeks {
		if !r.peeks.active(pp.p.UUID) {
			continue // canceled (or answered by another path)
		}
		rows, err, done := r.tryPeek(st, pp, budget)
		if !done {
			if pp.walk == nil {
				keep = append(keep, pp) // waits for its time
			}
			continue // else the offload pool finishes it
		}
		r.finishPeek(pp.p.UUID, rows, err, pp.maxBytes)
	}
	clear(st.peeks[len(keep):])
	st.peeks = keep
}

// finishPeek records one worker's answer and, when it completes the peek,
// sends the process's one response. Safe from any goroutine.
func (r *Runtime) finishPeek(uuid string, rows []peek.RowCount, err error, maxBytes int) {
	r.finishPeekOn(uuid, rows, err, maxBytes, r.resp.push)
}

// finishPeekOn is finishPeek with the response handed to push.
func (r *Runtime) finishPeekOn(uuid string, rows []peek.RowCount, err error, maxBytes int, push func(Response)) {
	if resp, result, d, ok := r.peeks.finish(uuid, rows, err, maxBytes); ok {
		r.peekDone(result, d)
		if resp != nil {
			push(resp)
		}
	}
}

// ImportCounts returns how many index imports (per worker) built dataflows
// read only through cursors (one-shot reductions) and how many they
// flattened into row updates.
func (r *Runtime) ImportCounts() (cursor, flattened uint64) {
	return r.imports.Cursor.Load(), r.imports.Flattened.Load()
}

// LiveImports returns how many index imports (per worker) built dataflows
// read as live imports of a peer index (render.ImportLive).
func (r *Runtime) LiveImports() uint64 { return r.imports.Live.Load() }

// WalkCounts returns how many peek walks finished on their worker and how
// many moved to the offload pool.
func (r *Runtime) WalkCounts() (inline, offloaded uint64) { return r.offload.Counts() }

// tryPeek serves pp on this worker's shard if its time is readable. It
// reports done=false while the time is not readable (pp.walk == nil) or
// when the walk moved to the offload pool, which finishes the peek.
func (r *Runtime) tryPeek(st *workerState, pp *pendingPeek, budget int) ([]peek.RowCount, error, bool) {
	p := pp.p
	idx := st.indexes[p.Target]
	if idx == nil {
		return nil, fmt.Errorf("peek %s: index %s: %w", p.UUID, p.Target, ErrUnknownCollection), true
	}
	okRead, errRead, err := idx.ReadAt(p.Timestamp)
	if errors.Is(err, trace.ErrNotYetReadable) {
		return nil, nil, false
	}
	if err != nil {
		return nil, fmt.Errorf("peek %s at %d on index %s: %w", p.UUID, p.Timestamp, p.Target, err), true
	}
	chunkBytes, sink := r.peekSink(p)
	pp.walk, err = NewPeekWalk(p, okRead, errRead, pp.maxBytes, chunkBytes)
	if err != nil {
		return nil, err, true
	}
	// The captured batches are immutable: the rest of the walk may run on
	// an offload goroutine and still reads as of t, without copies or locks.
	pol := offload.Policy{Mode: offload.Mode(r.walkMode.Load()), Budget: budget}
	uuid, maxBytes := p.UUID, pp.maxBytes
	if !r.offload.RunChunked(r.peeks.context(uuid), pp.walk, pol, sink, func(rows []peek.RowCount, err error) {
		r.finishPeek(uuid, rows, err, maxBytes)
	}) {
		return nil, nil, false
	}
	rows, err := pp.walk.Result()
	return rows, err, true
}

// peekSink returns the chunk size and sink of p's walks: a streamable
// peek's large result leaves in chunks of about the stash threshold, with
// backpressure from the consumer (see PeekStream); any other peek is not
// chunked (0, nil).
func (r *Runtime) peekSink(p Peek) (int, offload.Sink) {
	th := r.stashThreshold.Load()
	if !p.Streamable || p.TopK != nil || th <= 0 {
		return 0, nil
	}
	return int(th), chunkSink{a: r.peeks, uuid: p.UUID, capacity: peekStreamChunksPerWorker * r.cfg.Workers,
		emit: func(resp *PeekResponse) { r.resp.push(resp) }}
}

// subscribeReport merges one worker's subscribe output into the process's
// SubscribeResponse stream.
func (r *Runtime) subscribeReport(id plan.GlobalID, worker int, ok, errs []dataflow.Update, upper frontier.Frontier) {
	ups := make([]UpdateRow, 0, len(ok)+len(errs))
	for _, u := range ok {
		ups = append(ups, UpdateRow{Row: u.Val, Time: u.Time, Diff: u.Diff})
	}
	for _, u := range errs {
		ups = append(ups, UpdateRow{Row: u.Val, Time: u.Time, Diff: u.Diff, Error: true})
	}
	r.mu.Lock()
	m := r.subscribes[id]
	r.mu.Unlock()
	if m == nil {
		return
	}
	m.report(worker, ups, upper, func(b subscribeBatch) {
		resp := &SubscribeResponse{ID: id, Lower: b.Lower, Upper: b.Upper}
		for _, u := range b.Updates {
			if !u.Error {
				resp.Updates = append(resp.Updates, u)
			} else if u.Diff > 0 && resp.Error == nil {
				resp.Error = render.DecodeErrorRow(u.Row)
			}
		}
		r.resp.push(resp)
	})
	r.tracker.update(id, worker, upper, upper, r.frontiersEmitter(id))
}

// frontiersEmitter queues a Frontiers response for id; the tracker calls it
// under its lock so that reports keep their order.
func (r *Runtime) frontiersEmitter(id plan.GlobalID) func(collectionFrontiers) {
	return func(f collectionFrontiers) {
		r.resp.push(&Frontiers{ID: id, Write: f.Write, Input: f.Input, Output: f.Output})
	}
}

// peekDone records an answered peek in the metrics and the duration
// histogram that introspection exposes.
func (r *Runtime) peekDone(result string, d time.Duration) {
	r.metrics.PeekFinished(result, d)
	r.peekHist[bits.Len64(uint64(max(d, 0)))].Add(1)
}

// WorkerStepBudget returns the workers' step budget
// ("worker_step_budget_ms").
func (r *Runtime) WorkerStepBudget() time.Duration { return r.ws.StepBudget() }
