package server

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// RowStream is a peek result delivered in pieces, for results too large to
// materialise (the runtime's walks hand over rows in bounded chunks and
// wait while the sender is behind). The server pulls from it without
// blocking, at the pace the connection drains.
type RowStream interface {
	// TryNext returns the next rows without blocking. ok=false with a nil
	// error means none is ready yet: the stream calls the function set by
	// Notify when that changes. io.EOF ends the stream; any other error
	// fails the peek.
	TryNext() (rows []row.RowCount, ok bool, err error)
	// Notify sets the function the stream calls, from any goroutine, when
	// TryNext may have something new.
	Notify(wake func())
	// Close releases the stream and stops what produces it; idempotent.
	Close()
}

// rowSource is what a stash job cuts into chunks: a materialised result
// or a RowStream.
type rowSource interface {
	// next is RowStream.TryNext.
	next() (rows []row.RowCount, ok bool, err error)
	notify(wake func())
	close()
}

// sliceSource serves a materialised result in one piece.
type sliceSource struct{ rows []row.RowCount }

func (s *sliceSource) next() ([]row.RowCount, bool, error) {
	if s.rows == nil {
		return nil, false, io.EOF
	}
	rows := s.rows
	s.rows = nil
	return rows, true, nil
}
func (*sliceSource) notify(func()) {}
func (s *sliceSource) close()      { s.rows = nil }

// streamSource adapts a RowStream.
type streamSource struct{ s RowStream }

func (s streamSource) next() ([]row.RowCount, bool, error) { return s.s.TryNext() }
func (s streamSource) notify(wake func())                  { s.s.Notify(wake) }
func (s streamSource) close()                              { s.s.Close() }

// stashJob streams one large peek result as chunks of at most chunkSize
// bytes of encoded rows (and at least one row each), numbered from 0, the
// last marked final. It holds at most what its source handed over and has
// not been sent: one source piece plus the chunk being cut. A CancelPeek
// that arrives while it runs ends the sequence with canceled; a source
// error or a result above maxSize ends it with an error; either way there
// is exactly one terminal response. Only the connection's sender calls
// step; canceled may be set by the loop.
type stashJob struct {
	uuid      string
	src       rowSource
	chunkSize uint64
	maxSize   uint64 // 0: unbounded
	canceled  atomic.Bool
	done      func(result string) // told once, by the sender, how the job ended

	buf     []row.RowCount // received, not yet sent
	bufSize uint64
	eof     bool
	seq     uint64
	sent    uint64 // bytes sent so far
}

// step sends at most one response of the job. It reports whether it sent
// one and whether the job has ended (its terminal response sent).
func (j *stashJob) step(send func(*computepb.Response) error) (sent, finished bool, err error) {
	terminal := func(r *computepb.PeekResponse, result string) (bool, bool, error) {
		j.src.close()
		j.buf = nil
		j.done(result)
		return true, true, send(peekResponse(j.uuid, r))
	}
	if j.canceled.Load() {
		return terminal(&computepb.PeekResponse{Result: &computepb.PeekResponse_Canceled{Canceled: &computepb.PeekCanceled{}}}, resultCanceled)
	}
	// Pull until a full chunk is buffered, the source has nothing ready,
	// or it ended. Knowing that more follows (or not) decides final.
	for !j.eof && j.bufSize <= j.chunkSize {
		rows, ok, err := j.src.next()
		if errors.Is(err, io.EOF) {
			j.eof = true
			break
		}
		if err != nil {
			return terminal(&computepb.PeekResponse{Result: &computepb.PeekResponse_Error{Error: &computepb.PeekError{
				Sqlstate: sqlstate(err), Message: err.Error(),
			}}}, resultError)
		}
		if !ok {
			break
		}
		for _, r := range rows {
			j.bufSize += uint64(len(r.Row))
		}
		j.buf = append(j.buf, rows...)
	}
	n, size := 0, uint64(0)
	for n < len(j.buf) && (n == 0 || size+uint64(len(j.buf[n].Row)) <= j.chunkSize) {
		size += uint64(len(j.buf[n].Row))
		n++
	}
	final := j.eof && n == len(j.buf)
	if n == len(j.buf) && !final {
		// The rest fits one chunk and more may follow (the source had
		// nothing ready): wait for it, to know whether this one is final.
		return false, false, nil
	}
	if j.maxSize > 0 && j.sent+size > j.maxSize {
		err := coded(CodeResultTooLarge, "result exceeds max size of %d bytes", j.maxSize)
		return terminal(&computepb.PeekResponse{Result: &computepb.PeekResponse_Error{Error: &computepb.PeekError{
			Sqlstate: sqlstate(err), Message: err.Error(),
		}}}, resultError)
	}
	chunk := &computepb.StashedChunk{Sequence: j.seq, Rows: rowCountsToProto(j.buf[:n]), Final: final}
	clear(j.buf[:n])
	j.buf = j.buf[n:]
	if len(j.buf) == 0 {
		j.buf = nil // let the sent piece's backing array go
	}
	j.bufSize -= size
	j.sent += size
	j.seq++
	if final {
		j.src.close()
		j.done(resultStashed)
	}
	return true, final, send(peekResponse(j.uuid, &computepb.PeekResponse{Result: &computepb.PeekResponse_Stashed{Stashed: chunk}}))
}
