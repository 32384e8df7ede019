package server

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// outQueue holds the responses of one connection until its sender writes
// them to the stream. It is unbounded so that the server loop, and through
// it the runtime, never waits for a slow controller; large peek results are
// not copied into it but cut into chunks by the sender (stashJob).
type outQueue struct {
	mu     sync.Mutex
	items  []outItem
	notify chan struct{} // capacity 1: "items may be non-empty"
}

// outItem is a *computepb.Response or a *stashJob.
type outItem any

func newOutQueue() *outQueue { return &outQueue{notify: make(chan struct{}, 1)} }

func (q *outQueue) push(it outItem) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

func (q *outQueue) take() []outItem {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}

// drain writes queued items with send until ctx ends or send fails.
func (q *outQueue) drain(ctx context.Context, send func(*computepb.Response) error) error {
	for {
		for _, it := range q.take() {
			if err := ctx.Err(); err != nil {
				return err
			}
			var err error
			switch it := it.(type) {
			case *computepb.Response:
				err = send(it)
			case *stashJob:
				err = it.run(ctx, send)
			}
			if err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-q.notify:
		}
	}
}

// stashJob streams one large peek result as chunks of at most chunkSize
// bytes of encoded rows (and at least one row each). A CancelPeek that
// arrives while it runs ends the sequence with canceled instead of the
// final chunk, so there is still exactly one terminal response.
type stashJob struct {
	uuid      string
	rows      []RowCount
	chunkSize uint64
	canceled  atomic.Bool
	done      func(result string) // told once, by the sender, how the job ended
}

func (j *stashJob) run(ctx context.Context, send func(*computepb.Response) error) error {
	var seq uint64
	rows := j.rows
	for {
		if j.canceled.Load() {
			j.done(resultCanceled)
			return send(peekResponse(j.uuid, &computepb.PeekResponse{Result: &computepb.PeekResponse_Canceled{Canceled: &computepb.PeekCanceled{}}}))
		}
		n, size := 0, uint64(0)
		for n < len(rows) && (n == 0 || size+uint64(len(rows[n].Row)) <= j.chunkSize) {
			size += uint64(len(rows[n].Row))
			n++
		}
		chunk := &computepb.StashedChunk{Sequence: seq, Rows: rowCountsToProto(rows[:n]), Final: n == len(rows)}
		rows = rows[n:]
		seq++
		if err := send(peekResponse(j.uuid, &computepb.PeekResponse{Result: &computepb.PeekResponse_Stashed{Stashed: chunk}})); err != nil {
			return err
		}
		if chunk.Final {
			j.done(resultStashed)
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

func peekResponse(uuid string, r *computepb.PeekResponse) *computepb.Response {
	r.Uuid = uuid
	return &computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: r}}
}

func rowCountsToProto(rows []RowCount) []*computepb.RowCount {
	out := make([]*computepb.RowCount, len(rows))
	for i, r := range rows {
		out[i] = &computepb.RowCount{Row: r.Row, Count: r.Count}
	}
	return out
}
