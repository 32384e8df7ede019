package server

import (
	"context"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func (s *Server) peek(ctx context.Context, c *conn, p *computepb.Peek) {
	uuid := p.GetUuid()
	if old, ok := s.st.peeks[uuid]; ok {
		if old.viaLane || s.st.fromLane != nil {
			// The controller sends a peek again on the stream when the
			// lane it took broke: one pending peek answers both, on the
			// stream, which outlives the lane.
			old.lane = nil
			return
		}
		// Not a PeekResponse: the pending peek of that uuid still gets its
		// own, and only one.
		s.refusePeek(c, uuid, coded(CodeDuplicateObject, "peek %s is already pending", uuid))
		return
	}
	pending := &pendingPeek{conn: c, started: s.now(), lane: s.st.fromLane, viaLane: s.st.fromLane != nil}
	s.st.peeks[uuid] = pending
	dp, err := decodePeek(p)
	if err != nil {
		s.finishPeek(c, uuid, nil, coded(CodeProtocolViolation, "%w", err))
		return
	}
	col, ok := s.st.collections[dp.Target]
	switch {
	case !ok || col.subscribe:
		s.finishPeek(c, uuid, nil, coded(CodeUndefinedObject, "peek %s: unknown index %s", uuid, dp.Target))
		return
	case !col.since.LessEqualTime(frontier.Time(p.GetTimestamp())):
		s.finishPeek(c, uuid, nil, coded(CodeReadOutOfRange,
			"peek %s: timestamp %d is before the since %s of index %s", uuid, p.GetTimestamp(), col.since, col.id))
		return
	case col.until.LessEqualTime(frontier.Time(p.GetTimestamp())):
		s.finishPeek(c, uuid, nil, coded(CodeReadOutOfRange,
			"peek %s: timestamp %d is at or after the until %s of index %s", uuid, p.GetTimestamp(), col.until, col.id))
		return
	}
	if err := s.memory.Check(); err != nil {
		// Refused before any work: the one-shot dataflow behind a slow-path
		// read is dropped by the controller when the read fails.
		s.finishPeek(c, uuid, nil, err)
		return
	}
	pending.dispatched = s.now()
	if !s.st.received.IsZero() {
		s.readStage(stageCommand, pending.dispatched.Sub(s.st.received))
	}
	if err := s.rt.Peek(ctx, dp); err != nil {
		s.finishPeek(c, uuid, nil, fmt.Errorf("peek %s: %w", uuid, err))
	}
}

func (s *Server) cancelPeek(ctx context.Context, c *conn, uuid string) {
	p, ok := s.st.peeks[uuid]
	if !ok || p.conn != c {
		return // already answered: nothing to cancel
	}
	if p.stash != nil {
		// The sender owns the terminal response now; it ends with canceled
		// unless the final chunk already went out. The runtime stops the
		// walks still feeding a streamed result.
		p.stash.canceled.Store(true)
		c.out.wake()
		s.rt.CancelPeek(ctx, uuid)
		return
	}
	s.rt.CancelPeek(ctx, uuid)
	delete(s.st.peeks, uuid)
	s.metrics.PeekFinished(resultCanceled, s.now().Sub(p.started))
	s.respondPeek(p, c, peekResponse(uuid, &computepb.PeekResponse{Result: &computepb.PeekResponse_Canceled{Canceled: &computepb.PeekCanceled{}}}))
}

// peekResult delivers a runtime's answer, unless the peek was canceled or
// belongs to a connection that is gone.
func (s *Server) peekResult(r *PeekResult) {
	p, ok := s.st.peeks[r.UUID]
	if !ok || p.stash != nil || p.conn != s.st.conn {
		if r.Stream != nil {
			r.Stream.Close() // nobody will read it: stop its producers
		}
		return
	}
	if !p.dispatched.IsZero() {
		s.readStage(stageRuntime, s.now().Sub(p.dispatched))
	}
	if r.Stream != nil && r.Err == nil {
		s.stash(p, p.conn, r.UUID, streamSource{r.Stream})
		return
	}
	s.finishPeek(p.conn, r.UUID, r.Rows, r.Err)
}

// stash hands a result to the connection's sender as a stash job.
func (s *Server) stash(p *pendingPeek, c *conn, uuid string, src rowSource) {
	chunk := c.cfg.PeekStashChunkSize
	if chunk == 0 {
		chunk = s.chunk
	}
	p.stash = &stashJob{uuid: uuid, src: src, chunkSize: chunk, maxSize: c.cfg.MaxResultSize, done: func(result string) {
		s.send(c.ctx, request{conn: c, stashed: &stashFinished{uuid: uuid, result: result}})
	}}
	c.out.pushJob(p.stash)
}

// finishPeek sends the terminal response of a pending peek: an error, the
// rows in one message, or a stash job for the sender.
func (s *Server) finishPeek(c *conn, uuid string, rows []row.RowCount, err error) {
	p := s.st.peeks[uuid]
	var size uint64
	for _, r := range rows {
		size += uint64(len(r.Row))
	}
	if err == nil && c.cfg.MaxResultSize > 0 && size > c.cfg.MaxResultSize {
		err = coded(CodeResultTooLarge, "result exceeds max size of %d bytes", c.cfg.MaxResultSize)
	}
	switch {
	case err != nil:
		delete(s.st.peeks, uuid)
		s.metrics.PeekFinished(resultError, s.now().Sub(p.started))
		s.respondPeek(p, c, peekResponse(uuid, &computepb.PeekResponse{Result: &computepb.PeekResponse_Error{Error: &computepb.PeekError{
			Sqlstate: sqlstate(err), Message: err.Error(),
		}}}))
	case c.cfg.PeekStashThreshold > 0 && size > c.cfg.PeekStashThreshold:
		s.stash(p, c, uuid, &sliceSource{rows: rows})
	default:
		delete(s.st.peeks, uuid)
		s.metrics.PeekFinished(resultRows, s.now().Sub(p.started))
		s.respondPeek(p, c, peekResponse(uuid, &computepb.PeekResponse{Result: &computepb.PeekResponse_Rows{Rows: &computepb.PeekRows{Rows: rowCountsToProto(rows)}}}))
	}
}
