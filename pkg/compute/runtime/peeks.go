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
	// stream is set once a walk handed over a chunk: the peek's one
	// response (carrying it) has gone out, and the rest flows through it.
	stream *PeekStream
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
// merged response, or (for a streamed peek) nil after ending the stream,
// with the result for the metrics. The merge runs after the lock is
// released: it is proportional to the result, and every worker step and
// every new peek takes this lock.
func (a *peekAggregator) finish(uuid string, rows []peek.RowCount, err error, maxBytes int) (*PeekResponse, string, time.Duration, bool) {
	a.mu.Lock()
	st := a.pending[uuid]
	if st == nil {
		a.mu.Unlock()
		return nil, "", 0, false
	}
	if err != nil && st.err == nil {
		st.err = err
	}
	if err == nil {
		if st.stream != nil {
			st.stream.finishPart(rows)
		} else {
			st.parts = append(st.parts, rows)
		}
	}
	st.remaining--
	if st.remaining > 0 && (st.stream == nil || st.err == nil) {
		a.mu.Unlock()
		return nil, "", 0, false
	}
	// Done: every worker answered, or a streamed peek failed (its one
	// response is out; the other walks stop with the context).
	st.stop()
	delete(a.pending, uuid)
	a.mu.Unlock()
	result := "rows"
	if st.err != nil {
		result = "error"
	}
	if st.stream != nil {
		st.stream.end(st.err)
		return nil, result, time.Since(st.start), true
	}
	resp := &PeekResponse{UUID: uuid, Error: st.err}
	if st.err == nil {
		merged, err := peek.Merge(maxBytes, st.parts...)
		resp.Rows, resp.Error = merged, err
		if resp.Rows == nil && err == nil {
			resp.Rows = []peek.RowCount{}
		}
		if err != nil {
			result = "error"
		}
	}
	return resp, result, time.Since(st.start), true
}

// chunkSink is a peek's offload.Sink: the first chunk any walk hands over
// turns the peek into a streamed one (emit sends the response carrying the
// stream, with what earlier-finished workers answered already in it).
type chunkSink struct {
	a        *peekAggregator
	uuid     string
	capacity int
	emit     func(*PeekResponse)
}

// Put implements offload.Sink.
func (c chunkSink) Put(rows []peek.RowCount, resume func()) bool {
	a := c.a
	a.mu.Lock()
	st := a.pending[c.uuid]
	if st == nil {
		a.mu.Unlock()
		return true // answered or canceled: the walk's context stops it
	}
	created := st.stream == nil
	if created {
		st.stream = newPeekStream(c.capacity, st.stop)
		for _, p := range st.parts {
			st.stream.finishPart(p)
		}
		st.parts = nil
	}
	stream := st.stream
	a.mu.Unlock()
	if created {
		c.emit(&PeekResponse{UUID: c.uuid, Stream: stream})
	}
	return stream.put(rows, resume)
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
	if st.stream != nil {
		// Its one response (the stream) is out: the consumer answers the
		// cancellation; the stream just stops.
		st.stream.end(context.Canceled)
		return nil, time.Since(st.start), true
	}
	return &PeekResponse{UUID: uuid, Canceled: true}, time.Since(st.start), true
}

// drain forgets every pending peek (runtime shutdown).
func (a *peekAggregator) drain() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, st := range a.pending {
		st.stop()
		if st.stream != nil {
			st.stream.end(ErrStopped)
		}
	}
	clear(a.pending)
}
