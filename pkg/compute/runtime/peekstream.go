package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/tandemdb/tandem/pkg/compute/peek"
)

// peekStreamChunksPerWorker bounds a PeekStream's buffer: this many chunks
// per worker may wait for the consumer before the walks producing them
// park. With the chunk size at the stash threshold, a streamed peek holds
// at most about (2 per worker + 1 per walk) chunks in this process.
const peekStreamChunksPerWorker = 2

// PeekStream is a peek result too large to materialise: the workers' walks
// put consolidated chunks in as they go (each chunk is consolidated and in
// row order, but a row may repeat across chunks), and the consumer takes
// them out. The buffer is bounded: a walk that finds it full parks, holding
// no goroutine, until the consumer takes a chunk; a producer on a goroutine
// of its own (NewPeekStream, the interactive runtime's peer peeks) blocks
// in Send instead. Safe for concurrent use.
type PeekStream struct {
	mu       sync.Mutex
	chunks   [][]peek.RowCount
	capacity int
	parked   []func()
	ended    bool  // every worker finished
	err      error // the peek failed
	closed   bool  // the consumer gave up
	wake     func()
	stop     func() // cancels the peek's walks
}

func newPeekStream(capacity int, stop func()) *PeekStream {
	return &PeekStream{capacity: max(1, capacity), stop: stop}
}

// ErrStreamClosed is what Send returns once the consumer closed the stream:
// nobody reads what follows, so the producer should stop.
var ErrStreamClosed = errors.New("peek stream closed by its consumer")

// NewPeekStream returns a stream for a producer that runs on its own
// goroutine (a walk outside the runtime's offload pool): it hands chunks
// over with Send, which blocks while capacity chunks wait for the consumer,
// and ends the stream with Finish. stop is called when the consumer closes
// the stream; it should cancel the producer's context.
func NewPeekStream(capacity int, stop func()) *PeekStream {
	return newPeekStream(capacity, stop)
}

// Send adds a chunk (consolidated and in row order, like a walk's) and
// returns once the buffer has room for the next one. It blocks while the
// buffer is full, until the consumer takes a chunk, ctx is done (ctx's
// error), or the consumer closes the stream (ErrStreamClosed, the chunk is
// dropped). A stream already failed returns its error.
func (s *PeekStream) Send(ctx context.Context, rows []peek.RowCount) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	closed, err := s.closed, s.err
	s.mu.Unlock()
	switch {
	case closed:
		return ErrStreamClosed
	case err != nil:
		return fmt.Errorf("peek stream already failed: %w", err)
	}
	room := make(chan struct{})
	var once sync.Once
	if s.put(rows, func() { once.Do(func() { close(room) }) }) {
		return nil
	}
	select {
	case <-room:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	closed = s.closed
	s.mu.Unlock()
	if closed {
		return ErrStreamClosed
	}
	return nil
}

// Finish ends the stream of a Send producer: complete when err is nil,
// failed with err otherwise. Call it exactly once, after the last Send.
func (s *PeekStream) Finish(err error) { s.end(err) }

// put adds a chunk from a walk; false means the buffer is full and resume
// will be called when there is room (or the stream was closed).
func (s *PeekStream) put(rows []peek.RowCount, resume func()) bool {
	s.mu.Lock()
	if s.closed || s.err != nil {
		s.mu.Unlock()
		return true // nobody reads it: the walk's canceled context stops it
	}
	s.chunks = append(s.chunks, rows)
	full := len(s.chunks) >= s.capacity
	if full {
		s.parked = append(s.parked, resume)
	}
	wake := s.wake
	s.mu.Unlock()
	if wake != nil {
		wake()
	}
	return !full
}

// finishPart adds a worker's last rows without backpressure (they are at
// most one chunk, and the worker is done).
func (s *PeekStream) finishPart(rows []peek.RowCount) {
	if len(rows) == 0 {
		return
	}
	s.mu.Lock()
	if !s.closed && s.err == nil {
		s.chunks = append(s.chunks, rows)
	}
	wake := s.wake
	s.mu.Unlock()
	if wake != nil {
		wake()
	}
}

// end marks the stream complete (every worker answered) or failed.
func (s *PeekStream) end(err error) {
	s.mu.Lock()
	s.ended = true
	if err != nil && s.err == nil {
		s.err = err
		s.chunks = nil
	}
	parked := s.parked
	s.parked = nil
	wake := s.wake
	s.mu.Unlock()
	for _, resume := range parked {
		resume()
	}
	if wake != nil {
		wake()
	}
}

// TryNext returns the next chunk without blocking: ok=false with a nil
// error when none is ready (the Notify function is called when one is),
// io.EOF once every chunk was taken, or the peek's error.
func (s *PeekStream) TryNext() (rows []peek.RowCount, ok bool, err error) {
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return nil, false, err
	}
	if len(s.chunks) == 0 {
		ended := s.ended
		s.mu.Unlock()
		if ended {
			return nil, false, io.EOF
		}
		return nil, false, nil
	}
	rows = s.chunks[0]
	s.chunks[0] = nil
	s.chunks = s.chunks[1:]
	var resume []func()
	if len(s.chunks) < s.capacity {
		resume, s.parked = s.parked, nil
	}
	s.mu.Unlock()
	for _, r := range resume {
		r()
	}
	return rows, true, nil
}

// Len reports how many chunks wait for the consumer.
func (s *PeekStream) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.chunks)
}

// Notify sets the function called when TryNext may return something new.
func (s *PeekStream) Notify(wake func()) {
	s.mu.Lock()
	s.wake = wake
	s.mu.Unlock()
}

// Close gives up on the stream: the peek's walks stop and buffered chunks
// are dropped. Idempotent.
func (s *PeekStream) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.chunks = nil
	parked := s.parked
	s.parked = nil
	s.mu.Unlock()
	s.stop()
	for _, resume := range parked {
		resume()
	}
}
