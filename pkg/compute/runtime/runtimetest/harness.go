package runtimetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// Options size a harness.
type Options struct {
	Workers   int // per process; default 1
	Processes int // default 1
	// MaxResultBytes bounds peek results (0: unbounded).
	MaxResultBytes int
	// Timeout bounds every wait; default 10s.
	Timeout time.Duration
	// Sources adds source factories by kind; SourceTable imports are served
	// by the harness's memory tables unless overridden here.
	Sources render.SourceKinds
	// Metrics, if set, receives every runtime's measurements.
	Metrics runtime.Metrics
	// RespondInline is runtime.Config's: responses of peeks answered
	// within Peek may be recorded on StartPeek's goroutine.
	RespondInline bool
}

// Harness is a set of runtimes forming one compute runtime.
type Harness struct {
	t       testing.TB
	opts    Options
	RTs     []*runtime.Runtime
	tables  render.MemorySources
	nextID  atomic.Uint64
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every response
	peeks   map[string][]*runtime.PeekResponse
	fronts  map[plan.GlobalID][]runtime.Frontiers // per process: latest
	subs    map[plan.GlobalID][]*runtime.SubscribeResponse
	subUp   map[plan.GlobalID][]frontier.Frontier // per process
	fatal   []error
}

// New starts the runtimes; they stop at test cleanup.
func New(t testing.TB, opts Options) *Harness {
	t.Helper()
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	if opts.Processes <= 0 {
		opts.Processes = 1
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	h := &Harness{
		t: t, opts: opts, tables: render.MemorySources{},
		changed: make(chan struct{}),
		peeks:   map[string][]*runtime.PeekResponse{},
		fronts:  map[plan.GlobalID][]runtime.Frontiers{},
		subs:    map[plan.GlobalID][]*runtime.SubscribeResponse{},
		subUp:   map[plan.GlobalID][]frontier.Frontier{},
	}
	fabrics := dataflow.NewLocalFabrics(opts.Processes)
	ctx, cancel := context.WithCancel(context.Background())
	for p := 0; p < opts.Processes; p++ {
		cfg := runtime.Config{
			Workers: opts.Workers, Processes: opts.Processes, Process: p,
			Sources: h.sources(), MaxResultBytes: opts.MaxResultBytes, Metrics: opts.Metrics,
			Respond:       func(resp runtime.Response) { h.record(p, resp) },
			RespondInline: opts.RespondInline,
			OnFatal:       func(err error) { h.mu.Lock(); h.fatal = append(h.fatal, err); h.mu.Unlock() },
		}
		if opts.Processes > 1 {
			cfg.Fabric = fabrics[p]
		}
		rt, err := runtime.New(cfg)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		h.RTs = append(h.RTs, rt)
	}
	for _, rt := range h.RTs {
		rt.Start(ctx)
	}
	t.Cleanup(func() {
		cancel()
		for _, rt := range h.RTs {
			rt.Stop()
		}
		if errs := h.Fatal(); len(errs) > 0 {
			t.Errorf("runtime fatal errors: %v", errs)
		}
	})
	return h
}

func (h *Harness) sources() render.SourceFactory {
	kinds := render.SourceKinds{plan.SourceTable: lockedTables{h}}
	for k, f := range h.opts.Sources {
		kinds[k] = f
	}
	return kinds
}

// lockedTables serves memory tables under the harness lock (tables may be
// added while runtimes run).
type lockedTables struct{ h *Harness }

func (l lockedTables) OpenSource(imp plan.SourceImport, ctx render.SourceContext) (render.Source, error) {
	l.h.mu.Lock()
	t := l.h.tables[imp.ID]
	l.h.mu.Unlock()
	if t == nil {
		return nil, fmt.Errorf("runtimetest: no table for source %s (call Table before CreateDataflow)", imp.ID)
	}
	return t.Open(ctx)
}

func (h *Harness) record(p int, resp runtime.Response) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch r := resp.(type) {
	case *runtime.PeekResponse:
		h.peeks[r.UUID] = append(h.peeks[r.UUID], r)
	case *runtime.Frontiers:
		fs := h.fronts[r.ID]
		if fs == nil {
			fs = make([]runtime.Frontiers, h.opts.Processes)
			for i := range fs {
				fs[i] = runtime.Frontiers{ID: r.ID}
			}
			h.fronts[r.ID] = fs
		}
		prev := fs[p]
		// After a closed report the id may be reused by a new dataflow,
		// whose frontiers start afresh.
		if !prev.Write.IsClosed() && (!prev.Write.LessEqual(r.Write) || !prev.Input.LessEqual(r.Input)) {
			h.fatal = append(h.fatal, fmt.Errorf("process %d: frontiers of %s regressed from %+v to %+v", p, r.ID, prev, *r))
		}
		fs[p] = *r
	case *runtime.SubscribeResponse:
		h.subs[r.ID] = append(h.subs[r.ID], r)
		if h.subUp[r.ID] == nil {
			h.subUp[r.ID] = make([]frontier.Frontier, h.opts.Processes)
		}
		h.subUp[r.ID][p] = r.Upper
	}
	close(h.changed)
	h.changed = make(chan struct{})
}

// Fatal returns the fatal errors reported so far (including frontier
// regressions the harness observed).
func (h *Harness) Fatal() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.fatal...)
}

// wait blocks until cond (called under the lock) holds or the timeout
// passes; woken by responses, not by polling.
func (h *Harness) wait(what string, cond func() bool) error {
	deadline := time.NewTimer(h.opts.Timeout)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		ok := cond()
		ch := h.changed
		h.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("timed out after %v waiting for %s", h.opts.Timeout, what)
		}
	}
}

// Table returns the memory table serving source import id, creating it.
// Create tables before the dataflows that import them.
func (h *Harness) Table(id plan.GlobalID) *render.MemoryTable {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.tables[id]
	if t == nil {
		t = render.NewMemoryTable()
		h.tables[id] = t
	}
	return t
}

// CreateDataflow sends desc to every process; it fails if any refuses.
func (h *Harness) CreateDataflow(desc plan.DataflowDescription) error {
	var errs []error
	for _, rt := range h.RTs {
		if err := rt.CreateDataflow(desc); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// MustCreate is CreateDataflow failing the test on error.
func (h *Harness) MustCreate(desc plan.DataflowDescription) {
	h.t.Helper()
	if err := h.CreateDataflow(desc); err != nil {
		h.t.Fatal(err)
	}
}

// AllowCompaction sends the command to every process.
func (h *Harness) AllowCompaction(id plan.GlobalID, f frontier.Frontier) error {
	var errs []error
	for _, rt := range h.RTs {
		if err := rt.AllowCompaction(id, f); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// PeekRequest is a peek without its UUID.
type PeekRequest struct {
	Keys [][]byte
	MFP  *expr.MFP
	// Streamable lets a large result arrive as a stream (AwaitPeek drains
	// it).
	Streamable bool
	// TopK bounds each walk to the first rows in an order.
	TopK *peek.TopK
}

// StartPeek sends a peek to every process and returns its UUID.
func (h *Harness) StartPeek(target plan.GlobalID, t frontier.Time, req *PeekRequest) string {
	uuid := fmt.Sprintf("peek-%d", h.nextID.Add(1))
	p := runtime.Peek{UUID: uuid, Target: target, Timestamp: t}
	if req != nil {
		p.Keys, p.MFP, p.Streamable, p.TopK = req.Keys, req.MFP, req.Streamable, req.TopK
	}
	for _, rt := range h.RTs {
		rt.Peek(p)
	}
	return uuid
}

// AwaitPeek waits for every process's response to uuid and merges them:
// the first error or cancellation wins, rows are consolidated.
func (h *Harness) AwaitPeek(uuid string) ([]peek.RowCount, error) {
	var resps []*runtime.PeekResponse
	err := h.wait("peek "+uuid, func() bool {
		resps = h.peeks[uuid]
		return len(resps) >= h.opts.Processes
	})
	if err != nil {
		return nil, err
	}
	var parts [][]peek.RowCount
	for _, r := range resps {
		switch {
		case r.Error != nil:
			return nil, r.Error
		case r.Canceled:
			return nil, ErrCanceled
		case r.Stream != nil:
			chunks, err := h.DrainStream(r.Stream)
			if err != nil {
				return nil, err
			}
			parts = append(parts, chunks...)
			continue
		}
		parts = append(parts, r.Rows)
	}
	return peek.Merge(0, parts...)
}

// DrainStream reads a streamed peek result to its end and returns its
// chunks.
func (h *Harness) DrainStream(s *runtime.PeekStream) ([][]peek.RowCount, error) {
	var chunks [][]peek.RowCount
	_, err := h.drain(s, func(rows []peek.RowCount) { chunks = append(chunks, rows) })
	return chunks, err
}

// DrainStreamFunc reads a streamed peek result to its end, telling rows
// the size of each chunk and keeping none (as a sender that writes each
// chunk out would), and returns the number of chunks.
func (h *Harness) DrainStreamFunc(s *runtime.PeekStream, rows func(n int)) (int, error) {
	return h.drain(s, func(c []peek.RowCount) { rows(len(c)) })
}

func (h *Harness) drain(s *runtime.PeekStream, take func([]peek.RowCount)) (int, error) {
	wake := make(chan struct{}, 1)
	s.Notify(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	timeout := time.NewTimer(h.opts.Timeout)
	defer timeout.Stop()
	n := 0
	for {
		rows, ok, err := s.TryNext()
		switch {
		case errors.Is(err, io.EOF):
			return n, nil
		case err != nil:
			return n, err
		case ok:
			take(rows)
			n++
			continue
		}
		select {
		case <-wake:
		case <-timeout.C:
			s.Close()
			return n, fmt.Errorf("runtimetest: stream not finished within %v", h.opts.Timeout)
		}
	}
}

// PeekResponses returns the responses received for uuid so far.
func (h *Harness) PeekResponses(uuid string) []*runtime.PeekResponse {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*runtime.PeekResponse(nil), h.peeks[uuid]...)
}

// ErrCanceled is returned by AwaitPeek for a canceled peek.
var ErrCanceled = errors.New("runtimetest: peek canceled")

// Peek reads target at t and waits for the merged result.
func (h *Harness) Peek(target plan.GlobalID, t frontier.Time, req *PeekRequest) ([]peek.RowCount, error) {
	return h.AwaitPeek(h.StartPeek(target, t, req))
}

// CancelPeek cancels uuid on every process.
func (h *Harness) CancelPeek(uuid string) {
	for _, rt := range h.RTs {
		rt.CancelPeek(uuid)
	}
}

// Frontiers returns the latest reported frontiers of id, per process.
func (h *Harness) Frontiers(id plan.GlobalID) []runtime.Frontiers {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]runtime.Frontiers(nil), h.fronts[id]...)
}

// WaitFrontier waits until every process reported id's write frontier at
// or beyond f.
func (h *Harness) WaitFrontier(id plan.GlobalID, f frontier.Frontier) error {
	return h.wait(fmt.Sprintf("write frontier of %s to reach %v", id, f), func() bool {
		fs := h.fronts[id]
		if len(fs) < h.opts.Processes {
			return false
		}
		for _, x := range fs {
			if !f.LessEqual(x.Write) {
				return false
			}
		}
		return true
	})
}

// WaitSubscribe waits until every process's subscribe output for id reached
// upper f, and returns all responses so far.
func (h *Harness) WaitSubscribe(id plan.GlobalID, f frontier.Frontier) ([]*runtime.SubscribeResponse, error) {
	var out []*runtime.SubscribeResponse
	err := h.wait(fmt.Sprintf("subscribe %s to reach %v", id, f), func() bool {
		out = h.subs[id]
		ups := h.subUp[id]
		if len(ups) < h.opts.Processes {
			return false
		}
		for _, u := range ups {
			if !f.LessEqual(u) {
				return false
			}
		}
		return true
	})
	return append([]*runtime.SubscribeResponse(nil), out...), err
}
