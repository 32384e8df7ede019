package server

import (
	"context"
	"sync"

	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// outQueue holds the responses of one connection until its sender writes
// them to the stream. It has two lanes: ordinary responses, unbounded so
// that the server loop, and through it the runtime, never waits for a slow
// controller; and stash jobs, each streaming one large peek result. The
// sender writes every queued ordinary response before each stashed chunk
// and advances the stash jobs one chunk at a time in turn, so a large
// result never holds the stream: a frontier or a point lookup's answer
// waits for at most one chunk per active stash job, not for a whole result
// (the response-path stall docs/benchmarks-replica.md records).
type outQueue struct {
	mu     sync.Mutex
	items  []*computepb.Response
	jobs   []*stashJob
	notify chan struct{} // capacity 1: "something may be ready"
}

func newOutQueue() *outQueue { return &outQueue{notify: make(chan struct{}, 1)} }

func (q *outQueue) push(r *computepb.Response) {
	q.mu.Lock()
	q.items = append(q.items, r)
	q.mu.Unlock()
	q.wake()
}

// pushJob queues a stash job; its source wakes the sender when rows become
// ready.
func (q *outQueue) pushJob(j *stashJob) {
	j.src.notify(q.wake)
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	q.mu.Unlock()
	q.wake()
}

// wake tells the sender to look again; safe from any goroutine.
func (q *outQueue) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

func (q *outQueue) take() ([]*computepb.Response, []*stashJob) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items, jobs := q.items, q.jobs
	q.items, q.jobs = nil, nil
	return items, jobs
}

// drain writes queued responses and stashed chunks with send until ctx ends
// or send fails. Stash jobs still running then are closed (their sources
// released); their peeks are the loop's to forget.
func (q *outQueue) drain(ctx context.Context, send func(*computepb.Response) error) (err error) {
	var active []*stashJob
	defer func() {
		for _, j := range active {
			j.src.close()
		}
		// Jobs queued after the last take are never started: release them.
		_, late := q.take()
		for _, j := range late {
			j.src.close()
		}
	}()
	for {
		items, jobs := q.take()
		active = append(active, jobs...)
		progressed := len(items) > 0
		for _, it := range items {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := send(it); err != nil {
				return err
			}
		}
		keep := active[:0]
		for i, j := range active {
			if err := ctx.Err(); err != nil {
				active = append(keep, active[i:]...)
				return err
			}
			sent, finished, err := j.step(send)
			if err != nil {
				active = append(keep, active[i:]...)
				return err
			}
			progressed = progressed || sent
			if !finished {
				keep = append(keep, j)
			}
		}
		clear(active[len(keep):])
		active = keep
		if progressed {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-q.notify:
		}
	}
}

func peekResponse(uuid string, r *computepb.PeekResponse) *computepb.Response {
	r.Uuid = uuid
	return &computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: r}}
}

func rowCountsToProto(rows []row.RowCount) []*computepb.RowCount {
	out := make([]*computepb.RowCount, len(rows))
	for i, r := range rows {
		out[i] = protocol.RowCountToProto(r)
	}
	return out
}
