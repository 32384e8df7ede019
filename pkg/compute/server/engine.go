package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/logging"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/trace"
	"github.com/tandemdb/tandem/pkg/sharing"
)

// Engine adapts the process's runtimes (a *runtime.Runtime, or the
// placement multiplexer over two) to the server's Backend interface, and
// their responses to Events. It
// applies a peek's finishing to the process's shard of the result, exactly
// as the controller sends it (the controller re-applies it after merging).
//
// Wiring: NewEngine gets the server's Deliver (NewWithBackend) and builds
// the runtimes with the engine's Respond as their Respond callback.
type Engine struct {
	deliver func(Event)
	log     logr.Logger
	rt      runtime.Commands // a *runtime.Runtime (Solo) or the placement multiplexer

	mu        sync.Mutex
	finishing map[string]*plan.Finishing // by peek uuid, until answered
	// logging is set once introspection is enabled: a process enables it
	// once, whatever reconnects follow.
	logging bool
}

// introspector is implemented by runtimes (and the multiplexer) that can
// maintain the introspection relations.
type introspector interface {
	EnableIntrospection(ids map[logging.Relation]plan.GlobalID, interval time.Duration, asOf frontier.Frontier) error
}

// NewEngine returns an engine that delivers events to deliver and drives
// the runtimes newCommands builds. The runtimes answer through the
// engine's Respond, so the engine exists first and hands newCommands its
// Respond; they must not answer before NewEngine returns (they are not
// started yet).
func NewEngine(deliver func(Event), log logr.Logger, newCommands func(respond func(runtime.Response)) (runtime.Commands, error)) (*Engine, error) {
	e := &Engine{deliver: deliver, log: log, finishing: map[string]*plan.Finishing{}}
	rt, err := newCommands(e.Respond)
	if err != nil {
		return nil, err
	}
	e.rt = rt
	return e, nil
}

// CreateInstance implements Backend. The logging configuration is accepted
// and recorded; the result size limit is enforced by the server and the
// runtime both.
func (e *Engine) CreateInstance(_ context.Context, cfg InstanceConfig) error {
	if err := e.enableLogging(cfg); err != nil {
		return err
	}
	params := map[string]string{
		"max_result_size":      strconv.FormatUint(cfg.MaxResultSize, 10),
		"peek_stash_threshold": strconv.FormatUint(cfg.PeekStashThreshold, 10),
	}
	for k, v := range cfg.Parameters {
		params[k] = v
	}
	return e.rt.UpdateConfiguration(params)
}

// CreateDataflow implements Backend; df must come from PlanCodec.
func (e *Engine) CreateDataflow(_ context.Context, df *Dataflow) error {
	d, ok := df.Description.(*plan.DataflowDescription)
	if !ok {
		return coded(CodeInvalidPlan, "dataflow %s: not a plan description", df.ID)
	}
	return translate(e.rt.CreateDataflow(*d))
}

// Schedule implements Backend: the runtime runs dataflows as soon as they
// are built, so there is nothing to do.
func (e *Engine) Schedule(context.Context, plan.GlobalID) error { return nil }

// AllowCompaction implements Backend.
func (e *Engine) AllowCompaction(_ context.Context, id plan.GlobalID, f frontier.Frontier) error {
	return translate(e.rt.AllowCompaction(id, f))
}

// Peek implements Backend.
func (e *Engine) Peek(_ context.Context, p *Peek) error {
	rp := runtime.Peek{UUID: p.UUID, Target: p.Target, Timestamp: p.Timestamp, MFP: p.MFP}
	for _, k := range p.LiteralKeys {
		rp.Keys = append(rp.Keys, k)
	}
	f := p.Finishing
	// Without an order (and without offset or projection, which the
	// controller applies itself), a result may stream in chunks; a limit
	// is applied to the stream as it passes.
	rp.Streamable = f == nil || (len(f.Order) == 0 && f.Offset == 0 && len(f.Project) == 0)
	if f != nil && len(f.Order) > 0 && f.Limit != nil {
		// Ordered with a limit: each walk keeps only the rows that can
		// make the cut, so memory is bounded by the limit, not the shard.
		limit := *f.Limit
		if f.Offset > math.MaxInt64-limit {
			limit = math.MaxInt64
		} else {
			limit += f.Offset
		}
		rp.TopK = &peek.TopK{Limit: limit, Order: f.Order}
	}
	if f != nil {
		e.mu.Lock()
		e.finishing[p.UUID] = f
		e.mu.Unlock()
	}
	e.rt.Peek(rp)
	return nil
}

// CancelPeek implements Backend.
func (e *Engine) CancelPeek(_ context.Context, uuid string) {
	e.mu.Lock()
	delete(e.finishing, uuid)
	e.mu.Unlock()
	e.rt.CancelPeek(uuid)
}

// UpdateConfiguration implements Backend.
func (e *Engine) UpdateConfiguration(_ context.Context, params map[string]string) error {
	return e.rt.UpdateConfiguration(params)
}

// Respond is the runtime's Respond callback.
func (e *Engine) Respond(r runtime.Response) {
	switch r := r.(type) {
	case *runtime.Frontiers:
		w, i, o := r.Write, r.Input, r.Output
		e.deliver(&FrontiersEvent{ID: r.ID, Write: &w, Input: &i, Output: &o})
	case *runtime.PeekResponse:
		e.mu.Lock()
		f := e.finishing[r.UUID]
		delete(e.finishing, r.UUID)
		e.mu.Unlock()
		if r.Canceled {
			return // the server answered the CancelPeek itself
		}
		res := &PeekResult{UUID: r.UUID, Err: translate(r.Error)}
		switch {
		case res.Err != nil:
		case r.Stream != nil:
			res.Stream = newEngineStream(r.Stream, f)
		default:
			res.Rows, res.Err = finish(r.Rows, f)
		}
		e.deliver(res)
	case *runtime.SubscribeResponse:
		if r.Error != nil {
			e.log.Error(r.Error, "Subscribe output has errors", "id", r.ID.String())
		}
		b := &SubscribeBatch{ID: r.ID, Lower: r.Lower, Upper: r.Upper}
		for _, u := range r.Updates {
			b.Updates = append(b.Updates, Update{Row: u.Row, Time: u.Time, Diff: u.Diff})
		}
		e.deliver(b)
	}
}

// translate gives runtime errors their SQLSTATE.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, runtime.ErrUnknownCollection):
		return &CodedError{Code: CodeUndefinedObject, Err: err}
	case errors.Is(err, runtime.ErrDuplicateExport):
		return &CodedError{Code: CodeDuplicateObject, Err: err}
	case errors.Is(err, peek.ErrResultTooLarge):
		return &CodedError{Code: CodeResultTooLarge, Err: err}
	case errors.Is(err, plan.ErrInvalid):
		return &CodedError{Code: CodeInvalidPlan, Err: err}
	case errors.Is(err, trace.ErrCompacted), errors.Is(err, sharing.ErrCompacted), errors.Is(err, render.ErrBeyondUntil):
		// The server refuses peeks outside [since, until) it knows of; a
		// runtime that finds one anyway (a read of a peer's published copy,
		// an import) says the same thing, not an internal error.
		return &CodedError{Code: CodeReadOutOfRange, Err: err}
	case errors.Is(err, sharing.ErrDropped):
		// The index was dropped while a read of it waited.
		return &CodedError{Code: CodeUndefinedObject, Err: err}
	}
	return err
}

// finish applies f (nil: none) to a shard's rows.
func finish(rows []row.RowCount, f *plan.Finishing) ([]row.RowCount, error) {
	if f != nil {
		var err error
		if rows, err = f.Apply(rows); err != nil {
			return nil, coded(CodeInternal, "peek finishing: %w", err)
		}
	}
	out := rows[:0:0]
	for _, r := range rows {
		if r.Count < 0 {
			return nil, coded(CodeInternal, "peek result row %s has negative count %d", r.Row, r.Count)
		}
		if r.Count > 0 {
			out = append(out, r)
		}
	}
	return out, nil
}

var _ Backend = (*Engine)(nil)

// enableLogging builds the introspection dataflows the controller asked for,
// once per process, under the system GlobalIds it assigned.
func (e *Engine) enableLogging(cfg InstanceConfig) error {
	if len(cfg.LoggingIndexes) == 0 {
		return nil
	}
	in, ok := e.rt.(introspector)
	e.mu.Lock()
	done := e.logging
	e.logging = true
	e.mu.Unlock()
	if done {
		return nil
	}
	if !ok {
		e.log.Info("This runtime keeps no introspection relations; ignoring them", "relations", len(cfg.LoggingIndexes))
		return nil
	}
	ids := map[logging.Relation]plan.GlobalID{}
	for name, id := range cfg.LoggingIndexes {
		ids[logging.Relation(name)] = id
	}
	if err := in.EnableIntrospection(ids, cfg.LoggingInterval, frontier.Minimum()); err != nil {
		return fmt.Errorf("create instance: %w", err)
	}
	return nil
}
