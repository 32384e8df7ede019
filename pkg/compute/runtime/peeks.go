package runtime

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/peek"
)

// peekAggregator merges the per-worker answers of each peek into the one
// response this process sends, and makes that response unique: the first
// of "all workers answered" and "canceled" wins, later events are ignored.
type peekAggregator struct {
	mu      sync.Mutex
	workers int
	pending map[string]*peekState
}

type peekState struct {
	// ctx is canceled when the peek is answered or canceled, stopping any
	// walk of it still running on the offload pool.
	ctx       context.Context
	stop      context.CancelFunc
	remaining int
	parts     [][]peek.RowCount
	err       error
	start     time.Time
}

func newPeekAggregator(workers int) *peekAggregator {
	return &peekAggregator{workers: workers, pending: map[string]*peekState{}}
}

// add registers a peek; a UUID already pending is refused.
func (a *peekAggregator) add(uuid string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.pending[uuid]; ok {
		return fmt.Errorf("peek %s: uuid already pending", uuid)
	}
	ctx, stop := context.WithCancel(context.Background())
	a.pending[uuid] = &peekState{ctx: ctx, stop: stop, remaining: a.workers, start: time.Now()}
	return nil
}

// context returns the peek's context (already canceled if it is no longer
// pending).
func (a *peekAggregator) context(uuid string) context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	if st := a.pending[uuid]; st != nil {
		return st.ctx
	}
	ctx, stop := context.WithCancel(context.Background())
	stop()
	return ctx
}

// active reports whether uuid still awaits an answer.
func (a *peekAggregator) active(uuid string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.pending[uuid]
	return ok
}

// finish records one worker's answer; when it is the last, it returns the
// merged response.
func (a *peekAggregator) finish(uuid string, rows []peek.RowCount, err error, maxBytes int) (*PeekResponse, time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.pending[uuid]
	if st == nil {
		return nil, 0, false
	}
	if err != nil && st.err == nil {
		st.err = err
	}
	if err == nil {
		st.parts = append(st.parts, rows)
	}
	st.remaining--
	if st.remaining > 0 {
		return nil, 0, false
	}
	st.stop()
	delete(a.pending, uuid)
	resp := &PeekResponse{UUID: uuid, Error: st.err}
	if st.err == nil {
		merged, err := peek.Merge(maxBytes, st.parts...)
		resp.Rows, resp.Error = merged, err
		if resp.Rows == nil && err == nil {
			resp.Rows = []peek.RowCount{}
		}
	}
	return resp, time.Since(st.start), true
}

// cancel ends a pending peek and returns its Canceled response.
func (a *peekAggregator) cancel(uuid string) (*PeekResponse, time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.pending[uuid]
	if st == nil {
		return nil, 0, false
	}
	st.stop()
	delete(a.pending, uuid)
	return &PeekResponse{UUID: uuid, Canceled: true}, time.Since(st.start), true
}

// drain forgets every pending peek (runtime shutdown).
func (a *peekAggregator) drain() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, st := range a.pending {
		st.stop()
	}
	clear(a.pending)
}
