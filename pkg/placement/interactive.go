package placement

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/trace"
	"github.com/tandemdb/tandem/pkg/sharing"
)

// Incarnations counts, per GlobalId, how many dataflows exporting it this
// process has seen. Both runtimes receive the same CreateDataflow stream, so
// they agree on every incarnation without talking to each other.
type Incarnations struct {
	mu sync.Mutex
	n  map[plan.GlobalID]uint64
}

// Next records one more export of id and returns its incarnation.
func (in *Incarnations) Next(id plan.GlobalID) uint64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.n == nil {
		in.n = map[plan.GlobalID]uint64{}
	}
	in.n[id]++
	return in.n[id]
}

// PeekMetrics receives the interactive path's peek measurements.
type PeekMetrics interface {
	PeekFinished(result string, d time.Duration)
}

// Interactive wraps the interactive runtime of a two-runtime process. It
// renders OneShotRead and LiveRead dataflows on the inner runtime; for every Maintained
// dataflow it records the exports as peers and keeps the standing hold on
// their published points (I1c); and it serves peeks on peer indexes straight
// from the registry, off the maintenance workers.
type Interactive struct {
	inner   runtime.Commands
	reg     *sharing.Registry
	workers []int // global worker indexes of this process
	respond func(runtime.Response)
	metrics PeekMetrics

	mu       sync.Mutex
	incs     Incarnations
	peers    map[plan.GlobalID]uint64 // peer index -> incarnation
	sinks    map[plan.GlobalID]bool   // peer subscribe sinks
	peeks    map[string]context.CancelFunc
	maxBytes int
	// threshold is the chunk size of streamable peer peeks (0: never
	// stream), parameter "peek_stash_threshold" as on the runtimes.
	threshold int
	ctx       context.Context
	stop      context.CancelFunc
	wg        sync.WaitGroup
}

// InteractiveConfig configures an Interactive wrapper.
type InteractiveConfig struct {
	Registry *sharing.Registry
	// Workers per process and this process's index: worker w of this
	// process reads the points of global worker w + Workers*Process.
	Workers, Process int
	// Respond receives the peer peeks' responses (the multiplexer's
	// interactive responder).
	Respond        func(runtime.Response)
	Metrics        PeekMetrics
	MaxResultBytes int
	// StashThreshold is the initial "peek_stash_threshold": a streamable
	// peer peek whose result exceeds it is answered with a stream.
	StashThreshold int
}

// NewInteractive returns the wrapper around the runtime newInner builds;
// Close stops its in-flight reads. The runtime imports the maintenance
// runtime's indexes through the wrapper (its SharedImports), so the
// wrapper exists first and hands itself to newInner.
func NewInteractive(cfg InteractiveConfig, newInner func(shared render.SharedImports) (runtime.Commands, error)) (*Interactive, error) {
	ctx, stop := context.WithCancel(context.Background())
	ws := make([]int, cfg.Workers)
	for w := range ws {
		ws[w] = w + cfg.Workers*cfg.Process
	}
	x := &Interactive{
		reg: cfg.Registry, workers: ws, respond: cfg.Respond, metrics: cfg.Metrics,
		peers: map[plan.GlobalID]uint64{}, sinks: map[plan.GlobalID]bool{}, peeks: map[string]context.CancelFunc{},
		maxBytes: cfg.MaxResultBytes, threshold: cfg.StashThreshold, ctx: ctx, stop: stop,
	}
	inner, err := newInner(x)
	if err != nil {
		stop()
		return nil, err
	}
	x.inner = inner
	return x, nil
}

// Close cancels every in-flight peer read and waits for them.
func (x *Interactive) Close() {
	x.stop()
	x.wg.Wait()
}

func (x *Interactive) key(id plan.GlobalID, inc uint64, worker int, errs bool) sharing.Key {
	return sharing.Key{ID: id.String(), Worker: worker, Incarnation: inc, Errors: errs}
}

// CreateDataflow renders a OneShotRead or LiveRead dataflow; for any other
// it records the index exports as peers held at the dataflow's as_of.
func (x *Interactive) CreateDataflow(desc plan.DataflowDescription) error {
	if Renders(runtime.Interactive, desc.Class) {
		return x.inner.CreateDataflow(desc)
	}
	var errs []error
	for _, e := range desc.IndexExports {
		inc := x.incs.Next(e.ID)
		x.mu.Lock()
		x.peers[e.ID] = inc
		x.mu.Unlock()
		errs = append(errs, x.advanceStanding(e.ID, inc, desc.AsOf))
	}
	// Subscribe sinks publish nothing; they are peers only so that their
	// compaction and drop are accepted here rather than refused.
	x.mu.Lock()
	for _, s := range desc.SubscribeSinks {
		x.sinks[s.ID] = true
	}
	x.mu.Unlock()
	return errors.Join(errs...)
}

func (x *Interactive) advanceStanding(id plan.GlobalID, inc uint64, f frontier.Frontier) error {
	var errs []error
	for _, w := range x.workers {
		errs = append(errs, x.advanceWorker(id, inc, w, f))
	}
	return errors.Join(errs...)
}

// advanceWorker advances the standing hold on global worker w's points.
func (x *Interactive) advanceWorker(id plan.GlobalID, inc uint64, w int, f frontier.Frontier) error {
	var errs []error
	for _, e := range []bool{false, true} {
		errs = append(errs, x.reg.AdvanceStandingHold(x.key(id, inc, w, e), f))
	}
	return errors.Join(errs...)
}

// WorkerRunner is implemented by an inner runtime whose workers can run a
// function between their steps (*runtime.Runtime): the standing holds
// then advance there.
type WorkerRunner interface {
	OnWorkers(fn func(local int) error)
}

// AllowCompaction advances the standing hold of a peer index, or goes to
// the inner runtime for what it renders. The standing hold advances when
// the inner runtime's workers apply the compaction (each worker its own
// points, between its steps), not when the command is dispatched: while
// the interactive runtime is stalled (a long step), its holds stay where
// it last got to and the publisher's hold gap shows it. An inner target
// without workers (tests) advances them at once.
func (x *Interactive) AllowCompaction(id plan.GlobalID, f frontier.Frontier) error {
	x.mu.Lock()
	inc, peer := x.peers[id]
	sink := x.sinks[id]
	if f.IsClosed() {
		delete(x.peers, id)
		delete(x.sinks, id)
	}
	x.mu.Unlock()
	switch {
	case peer:
		if wr, ok := x.inner.(WorkerRunner); ok {
			wr.OnWorkers(func(local int) error {
				if local >= len(x.workers) {
					return nil
				}
				return x.advanceWorker(id, inc, x.workers[local], f)
			})
			return nil
		}
		return x.advanceStanding(id, inc, f)
	case sink:
		return nil
	}
	return x.inner.AllowCompaction(id, f)
}

// UpdateConfiguration applies what the wrapper uses and forwards the rest.
func (x *Interactive) UpdateConfiguration(params map[string]string) error {
	if v, ok := params["max_result_size"]; ok {
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil {
			x.mu.Lock()
			x.maxBytes = n
			x.mu.Unlock()
		}
	}
	if v, ok := params["peek_stash_threshold"]; ok {
		// Validated (and refused) by the inner runtime, which gets it too.
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			x.mu.Lock()
			x.threshold = n
			x.mu.Unlock()
		}
	}
	return x.inner.UpdateConfiguration(params)
}

// Peek serves a peek on a peer index from the registry; any other peek goes
// to the inner runtime.
func (x *Interactive) Peek(p runtime.Peek) {
	x.mu.Lock()
	inc, peer := x.peers[p.Target]
	if !peer {
		x.mu.Unlock()
		x.inner.Peek(p)
		return
	}
	ctx, cancel := context.WithCancel(x.ctx)
	x.peeks[p.UUID] = cancel
	out := &peerOutput{}
	if p.Streamable && p.TopK == nil && x.threshold > 0 {
		out.threshold = x.threshold
		out.open = func() *runtime.PeekStream {
			s := runtime.NewPeekStream(peerStreamChunks, cancel)
			x.respond(&runtime.PeekResponse{UUID: p.UUID, Stream: s})
			return s
		}
	}
	maxBytes := x.maxBytes
	x.mu.Unlock()
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer cancel()
		start := time.Now()
		err := x.readPeer(ctx, p, inc, maxBytes, out)
		x.mu.Lock()
		delete(x.peeks, p.UUID)
		x.mu.Unlock()
		result := "rows"
		switch {
		case errors.Is(err, context.Canceled), errors.Is(err, runtime.ErrStreamClosed):
			result = "canceled"
		case err != nil:
			result = "error"
		}
		if x.metrics != nil {
			x.metrics.PeekFinished(result, time.Since(start))
		}
		if out.stream != nil {
			// The peek's one response (the stream) is out: a cancel or an
			// error just ends the stream, whose consumer answers for it.
			out.stream.Finish(err)
			return
		}
		resp := &runtime.PeekResponse{UUID: p.UUID, Rows: out.rows(), Error: err}
		switch {
		case errors.Is(err, context.Canceled):
			resp = &runtime.PeekResponse{UUID: p.UUID, Canceled: true}
		case err != nil:
			resp.Rows = nil
		}
		x.respond(resp)
	}()
}

// peerStreamChunks bounds a streamed peer peek's buffer: its one producer
// walks the workers in turn, so two chunks keep it busy while the consumer
// sends one, and it holds at most about three chunks in memory.
const peerStreamChunks = 2

// peerOutput collects a peer peek's result: in memory while it fits one
// chunk, then (for a streamable peek) through a stream. Only the peek's
// goroutine uses it.
type peerOutput struct {
	threshold int                        // chunk size; 0: never stream
	open      func() *runtime.PeekStream // creates the stream and emits the response carrying it
	parts     [][]peek.RowCount          // held, each consolidated and in row order
	held      int                        // bytes held, measured like a walk's
	stream    *runtime.PeekStream        // set once the result outgrew one chunk
}

// add takes one consolidated part (a walk's chunk or a worker's last rows).
// Once the rows held reach the threshold they go out through the stream,
// and so does everything after; Send's backpressure then paces the walk.
func (o *peerOutput) add(ctx context.Context, rows []peek.RowCount) error {
	if len(rows) == 0 {
		return nil
	}
	if o.stream == nil {
		o.parts = append(o.parts, rows)
		for _, r := range rows {
			o.held += len(r.Row) + 8
		}
		if o.threshold <= 0 || o.held < o.threshold {
			return nil
		}
		o.stream = o.open()
		parts := o.parts
		o.parts, o.held = nil, 0
		for _, part := range parts {
			if err := o.stream.Send(ctx, part); err != nil {
				return err
			}
		}
		return nil
	}
	return o.stream.Send(ctx, rows)
}

// rows returns the held result of a peek that did not stream.
func (o *peerOutput) rows() []peek.RowCount {
	if len(o.parts) == 1 {
		return o.parts[0]
	}
	var all []peek.RowCount
	for _, p := range o.parts {
		all = append(all, p...)
	}
	return all
}

// CancelPeek cancels a peer read (answered Canceled) or forwards.
func (x *Interactive) CancelPeek(uuid string) {
	x.mu.Lock()
	cancel, ok := x.peeks[uuid]
	x.mu.Unlock()
	if ok {
		cancel()
		return
	}
	x.inner.CancelPeek(uuid)
}

// readPeer waits until every local worker's published shard is sealed at
// the peek's time, then walks them, handing the rows to out (in chunks of
// out.threshold when it streams). Reader holds keep the publisher from
// compacting past the time while a walk runs; they are released before a
// worker's last rows go out, and on every error.
func (x *Interactive) readPeer(ctx context.Context, p runtime.Peek, inc uint64, maxBytes int, out *peerOutput) error {
	for _, w := range x.workers {
		okRead, errRead, release, err := x.capture(ctx, p, inc, w)
		if err != nil {
			return err
		}
		walk, err := runtime.NewPeekWalk(p, okRead, errRead, maxBytes, out.threshold)
		if err != nil {
			release()
			return err
		}
		for !walk.Step(4096) {
			if ctx.Err() != nil {
				release()
				return ctx.Err()
			}
			if walk.ChunkReady() {
				if err := out.add(ctx, walk.TakeChunk()); err != nil {
					release()
					return err
				}
			}
		}
		rows, err := walk.Result()
		release()
		if err != nil {
			return err
		}
		if err := out.add(ctx, rows); err != nil {
			return err
		}
	}
	return nil
}

// capture waits for worker w's ok and error points to be sealed at the
// peek's time and returns reads of both with a release func for the holds.
func (x *Interactive) capture(ctx context.Context, p runtime.Peek, inc uint64, w int) (ok, errs trace.Read, release func(), err error) {
	var reads [2]trace.Read
	var holds []*sharing.ReaderHold
	release = func() {
		for _, h := range holds {
			_ = h.Release()
		}
	}
	for i, e := range []bool{false, true} {
		im := x.reg.Import(x.key(p.Target, inc, w, e))
		h, herr := im.Hold(p.Timestamp)
		if herr != nil {
			release()
			return ok, errs, nil, fmt.Errorf("peek %s at %d on index %s: %w", p.UUID, p.Timestamp, p.Target, trace.ErrCompacted)
		}
		holds = append(holds, h)
		s, werr := im.Wait(ctx, p.Timestamp)
		if werr != nil {
			release()
			if errors.Is(werr, sharing.ErrCompacted) {
				werr = fmt.Errorf("peek %s: %w", p.UUID, trace.ErrCompacted)
			}
			return ok, errs, nil, werr
		}
		reads[i] = trace.Read{Batches: s.Batches, Time: p.Timestamp, Since: s.Since, Upper: s.Upper}
	}
	return reads[0], reads[1], release, nil
}

// Sealed reports whether peer index id is published and sealed at t on
// every worker of this process: the positive hint of RouteSealedHint. It
// only loads published snapshots, never waits.
func (x *Interactive) Sealed(id plan.GlobalID, t frontier.Time) bool {
	if x == nil {
		return false
	}
	x.mu.Lock()
	inc, peer := x.peers[id]
	x.mu.Unlock()
	if !peer {
		return false
	}
	for _, w := range x.workers {
		for _, e := range []bool{false, true} {
			if !x.reg.Import(x.key(id, inc, w, e)).Snapshot().Sealed(t) {
				return false
			}
		}
	}
	return true
}

// Has implements render.SharedImports: id is a maintenance index this
// runtime may import.
func (x *Interactive) Has(id plan.GlobalID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := x.peers[id]
	return ok
}

// Import implements render.SharedImports with the registry points of the
// peer index's current incarnation on the given global worker.
func (x *Interactive) Import(id plan.GlobalID, worker int) (ok, errs render.SharedArrangement, found bool) {
	x.mu.Lock()
	inc, peer := x.peers[id]
	x.mu.Unlock()
	if !peer {
		return nil, nil, false
	}
	return sharedPoint{x.reg.Import(x.key(id, inc, worker, false))}, sharedPoint{x.reg.Import(x.key(id, inc, worker, true))}, true
}

// sharedPoint adapts a registry import to render.SharedArrangement.
type sharedPoint struct{ im *sharing.Import }

func (s sharedPoint) Snapshot() ([]*batch.Batch, frontier.Frontier, bool, bool) {
	sn := s.im.Snapshot()
	return sn.Batches, sn.Upper, sn.Published, sn.Dropped
}

func (s sharedPoint) OnChange(fn func()) func() { return s.im.OnChange(fn) }

// Since implements render.LiveShared.
func (s sharedPoint) Since() frontier.Frontier { return s.im.Snapshot().Since }

// Follow implements render.LiveShared with a registry follower: a reader
// hold at the live import's cursor, which it advances as it reads on.
func (s sharedPoint) Follow(t frontier.Time) (render.SharedFollower, error) {
	f, err := s.im.Follow(t)
	if err != nil {
		return nil, err
	}
	return f, nil
}
