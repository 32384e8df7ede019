package pgwire

import (
	"errors"
	"io"
	"sync"
)

// readAheadBytes bounds how much client input clientReader holds that
// the connection loop has not consumed yet. A client that pipelines more
// than this while a statement runs is read no further until the loop
// catches up (TCP flow control then holds it back), so its close is
// noticed only then.
const readAheadBytes = 256 << 10

// readChunkBytes is the size of one read from the client connection.
const readChunkBytes = 32 << 10

// errClientGone is the cause of a connection's context when the client's
// side of the connection ended (EOF, reset, keepalive timeout).
var errClientGone = errors.New("client connection closed")

// clientReader is the connection's Backend's source of bytes. Until
// watch is called it reads the client directly: startup and
// authentication are strictly request-response and run on the
// connection's goroutine. After watch a goroutine reads ahead into a
// bounded buffer, so that a client that closes or loses its connection
// is noticed while a statement runs and the connection loop reads
// nothing (a quiet SUBSCRIBE over COPY would otherwise run until its
// next write failed). Reading ahead loses and reorders nothing: the
// Backend gets every byte the client sent, in order, and sees the read
// error only after the last of them, so messages pipelined behind the
// running one (pgx's Sync after Execute) are each processed once, later.
type clientReader struct {
	src io.Reader

	mu   sync.Mutex
	cond sync.Cond
	// data[off:] are the bytes read ahead and not yet consumed.
	data []byte
	off  int
	// err ends the input once data is consumed.
	err      error
	watching bool
	stopped  bool
	done     chan struct{} // closed when the read-ahead goroutine ends
}

func newClientReader(src io.Reader) *clientReader {
	r := &clientReader{src: src}
	r.cond.L = &r.mu
	return r
}

// watch starts reading ahead; gone is called once, from the reading
// goroutine, with the error that ended the client's input (io.EOF for a
// close). The caller must call stop after closing the connection.
func (r *clientReader) watch(gone func(error)) {
	r.mu.Lock()
	r.watching = true
	r.done = make(chan struct{})
	r.mu.Unlock()
	go r.readAhead(gone)
}

func (r *clientReader) readAhead(gone func(error)) {
	defer close(r.done)
	chunk := make([]byte, readChunkBytes)
	for {
		r.mu.Lock()
		for len(r.data)-r.off >= readAheadBytes && !r.stopped {
			r.cond.Wait()
		}
		stopped := r.stopped
		r.mu.Unlock()
		if stopped {
			return
		}
		n, err := r.src.Read(chunk)
		r.mu.Lock()
		r.appendLocked(chunk[:n])
		if err != nil {
			r.err = err
		}
		r.cond.Broadcast()
		r.mu.Unlock()
		if err != nil {
			gone(err)
			return
		}
	}
}

// appendLocked adds b to the unread bytes, first moving them to the
// front of data once the consumed prefix is at least half of it: a
// consumer that never quite catches up must not make data grow without
// bound.
func (r *clientReader) appendLocked(b []byte) {
	if r.off > 0 && r.off >= len(r.data)/2 {
		n := copy(r.data, r.data[r.off:])
		r.data, r.off = r.data[:n], 0
	}
	r.data = append(r.data, b...)
}

// stop ends the read-ahead goroutine and waits for it; the connection
// must be closed first so that a read in progress returns.
func (r *clientReader) stop() {
	r.mu.Lock()
	r.stopped = true
	if r.err == nil {
		r.err = io.EOF
	}
	r.cond.Broadcast()
	done := r.done
	r.mu.Unlock()
	if done != nil {
		<-done
	}
}

// Read implements io.Reader for the Backend.
func (r *clientReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	if !r.watching {
		r.mu.Unlock()
		return r.src.Read(p)
	}
	defer r.mu.Unlock()
	for r.off == len(r.data) && r.err == nil {
		r.cond.Wait()
	}
	if r.off < len(r.data) {
		n := copy(p, r.data[r.off:])
		r.off += n
		r.cond.Broadcast()
		return n, nil
	}
	return 0, r.err
}
