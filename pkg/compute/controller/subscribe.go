package controller

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tandemdb/tandem/pkg/compute/consolidate"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// subscribeBuffer bounds the batches waiting for a slow subscriber; past
// it the subscription ends with ErrSubscriberTooSlow rather than letting
// the controller buffer without limit.
const subscribeBuffer = 4096

// ErrSubscriberTooSlow ends a subscription whose client does not keep up.
var ErrSubscriberTooSlow = errors.New("subscriber too slow")

// Update is one (row, time, diff) change.
type Update struct {
	Row  []byte
	Time frontier.Time
	Diff int64
}

// SubscribeBatch carries the consolidated updates with Lower <= time <
// Upper. Batches are contiguous: each Lower is the previous Upper.
type SubscribeBatch struct {
	Lower, Upper frontier.Frontier
	Updates      []Update
}

// Subscription is a running subscribe. Read Batches until it is closed,
// then Err says why; Close drops it.
type Subscription struct {
	ctl     *Controller
	id      plan.GlobalID
	batches chan SubscribeBatch
	once    sync.Once
	mu      sync.Mutex
	err     error
}

// ID returns the subscribe sink's id.
func (s *Subscription) ID() plan.GlobalID { return s.id }

// Batches returns the channel of batches, closed when the subscription
// ends.
func (s *Subscription) Batches() <-chan SubscribeBatch { return s.batches }

// Err returns why the subscription ended (nil while it runs or after a
// clean close).
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close drops the subscribe dataflow. It is idempotent.
func (s *Subscription) Close() {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	if col, ok := s.ctl.collections[s.id]; ok && col.subscribe != nil && col.subscribe.sub == s {
		// The batch channel closes below; the collection may linger until
		// the replicas report it closed, and its responses must then be
		// ignored rather than sent on the closed channel.
		col.subscribe.ended = true
		if !col.dropped {
			s.ctl.dropLocked(col)
		}
	}
	s.endLocked(nil)
}

// endLocked closes the batch channel once (under the controller's mutex,
// which serialises it with deliveries).
func (s *Subscription) endLocked(err error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.batches)
	})
}

// subscription is the controller's side of a subscribe sink.
type subscription struct {
	sub *Subscription
	// upper is what has been delivered: every update before it was sent.
	upper frontier.Frontier
	// replicas buffer each replica's updates until every one of its
	// processes has passed a frontier.
	replicas map[string]*replicaSubscribe
	ended    bool
}

type replicaSubscribe struct {
	epoch  uint64
	uppers []frontier.Frontier
	buf    []Update
}

// Subscribe installs a dataflow with one subscribe sink and streams its
// output. The subscription ends (and the dataflow is dropped) when ctx ends
// or Close is called.
func (c *Controller) Subscribe(ctx context.Context, cluster string, df Dataflow) (*Subscription, error) {
	if len(df.SubscribeSinks) != 1 || len(df.IndexExports) != 0 {
		return nil, fmt.Errorf("subscribe %s: want exactly one subscribe sink and no index exports", df.ID)
	}
	c.mu.Lock()
	cl, err := c.clusterLocked(cluster)
	if err != nil {
		c.mu.Unlock()
		return nil, err
	}
	asOf, err := c.chooseTimeLocked(df.imports(), df.Generators, serializable)
	if err != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("subscribe %s: %w", df.ID, err)
	}
	df.Class = c.subscribeClassLocked(df)
	// A sink's read policy follows what has been delivered (lag 0), so its
	// inputs compact as the subscription progresses.
	if err := c.createDataflowLocked(cl, df, asOf, 0); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	id := df.SubscribeSinks[0]
	s := &Subscription{ctl: c, id: id, batches: make(chan SubscribeBatch, subscribeBuffer)}
	c.collections[id].subscribe = &subscription{sub: s, upper: frontier.At(asOf), replicas: map[string]*replicaSubscribe{}}
	c.mu.Unlock()
	context.AfterFunc(ctx, s.Close)
	return s, nil
}

// subscribeClassLocked tags a subscribe LiveRead while
// enable_compute_interactive_dataflows is on: a two-runtime replica then
// renders it on its interactive runtime, which serves its snapshot from the
// published indexes and follows them live, so neither waits behind a long
// maintenance step. A subscribe to introspection stays Maintained: the
// logging indexes live only in the maintenance runtime and are not
// published.
func (c *Controller) subscribeClassLocked(df Dataflow) computepb.DataflowClass {
	if !c.interactiveLocked() {
		return computepb.DataflowClass_DATAFLOW_CLASS_MAINTAINED
	}
	for _, id := range df.imports() {
		if col, ok := c.collections[id]; ok && col.introspection {
			return computepb.DataflowClass_DATAFLOW_CLASS_MAINTAINED
		}
	}
	return computepb.DataflowClass_DATAFLOW_CLASS_LIVE_READ
}

func (c *Controller) handleSubscribeResponseLocked(r *replica, proc int, resp *computepb.SubscribeResponse) {
	id, err := protocol.GlobalIDFromProto(resp.GetId())
	if err != nil {
		return
	}
	col, ok := c.collections[id]
	if !ok || col.subscribe == nil {
		return
	}
	sub := col.subscribe
	if sub.ended {
		return
	}
	if _, dropped := resp.GetKind().(*computepb.SubscribeResponse_Dropped); dropped {
		return
	}
	name := r.cfg.ID.Replica
	rs, ok := sub.replicas[name]
	if !ok || rs.epoch != r.epoch {
		rs = &replicaSubscribe{epoch: r.epoch, uppers: make([]frontier.Frontier, len(r.conns))}
		sub.replicas[name] = rs
	}
	if proc >= len(rs.uppers) {
		return
	}
	for _, u := range resp.GetUpdates().GetUpdates() {
		rs.buf = append(rs.buf, Update{Row: u.GetRow(), Time: frontier.Time(u.GetTime()), Diff: u.GetDiff()})
	}
	rs.uppers[proc] = frontier.Join(rs.uppers[proc], protocol.FrontierFromProto(resp.GetUpper()))
	merged := frontier.Closed()
	for _, u := range rs.uppers {
		merged = frontier.Meet(merged, u)
	}
	if merged.LessEqual(sub.upper) {
		return
	}
	// This replica is the first past the delivered upper: deliver its
	// updates in [upper, merged), consolidated. Updates below upper were
	// delivered from some replica already.
	var out, keep []Update
	for _, u := range rs.buf {
		switch {
		case merged.LessEqualTime(u.Time):
			keep = append(keep, u)
		case sub.upper.LessEqualTime(u.Time):
			out = append(out, u)
		}
	}
	rs.buf = keep
	batch := SubscribeBatch{Lower: sub.upper, Upper: merged, Updates: consolidateUpdates(out)}
	sub.upper = merged
	select {
	case sub.sub.batches <- batch:
	default:
		sub.ended = true
		sub.sub.endLocked(ErrSubscriberTooSlow)
		if !col.dropped {
			c.dropLocked(col)
		}
		return
	}
	c.advanceWriteLocked(col, merged)
	if merged.IsClosed() {
		sub.ended = true
		sub.sub.endLocked(nil)
	}
}

// consolidateUpdates sums equal (time, row) updates and drops zeros,
// sorted by time then row.
func consolidateUpdates(us []Update) []Update {
	return consolidate.Slice(us, func(a, b Update) int {
		if c := cmp.Compare(a.Time, b.Time); c != 0 {
			return c
		}
		return bytes.Compare(a.Row, b.Row)
	}, func(u *Update) *int64 { return &u.Diff })
}
