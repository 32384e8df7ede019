package server

import (
	"context"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

func (s *Server) handleEvent(_ context.Context, ev Event) {
	c := s.st.conn
	if c != nil && c.phase != running {
		// Until reconciliation the connection has no view of the state;
		// it then gets every frontier afresh.
		c = nil
	}
	switch ev := ev.(type) {
	case *FrontiersEvent:
		col, ok := s.st.collections[ev.ID]
		if !ok {
			return // dropped, or never ours
		}
		col.write = joinInto(col.write, ev.Write)
		col.input = joinInto(col.input, ev.Input)
		col.output = joinInto(col.output, ev.Output)
		if c != nil {
			s.reportFrontiers(c, col, ev)
		}
		// A collection is hydrated once its write frontier passed its
		// as_of: its contents at the as_of are complete.
		if !col.hydrated && col.write != nil && col.asOf.Less(*col.write) {
			s.hydrated(c, col, s.now().Sub(col.created))
		}
	case *PeekResult:
		s.peekResult(ev)
	case *SubscribeBatch:
		col, ok := s.st.collections[ev.ID]
		if !ok || !col.subscribe || c == nil {
			return
		}
		if prev, ok := c.subscribeUpper[ev.ID]; ok && ev.Upper.LessEqual(prev) {
			return // a batch this connection has already seen
		}
		c.subscribeUpper[ev.ID] = ev.Upper
		updates := make([]*computepb.Update, len(ev.Updates))
		for i, u := range ev.Updates {
			updates[i] = &computepb.Update{Row: u.Row, Time: uint64(u.Time), Diff: u.Diff}
		}
		c.respond(&computepb.Response{Kind: &computepb.Response_SubscribeResponse{SubscribeResponse: &computepb.SubscribeResponse{
			Id:    protocol.GlobalIDToProto(ev.ID),
			Lower: protocol.FrontierToProto(ev.Lower),
			Upper: protocol.FrontierToProto(ev.Upper),
			Kind:  &computepb.SubscribeResponse_Updates{Updates: &computepb.SubscribeUpdates{Updates: updates}},
		}}})
	case *HydrationEvent:
		col, ok := s.st.collections[ev.ID]
		if !ok || col.hydrated == ev.Hydrated {
			return
		}
		if ev.Hydrated {
			s.hydrated(c, col, ev.Elapsed)
			return
		}
		col.hydrated = false
		s.reportCollections()
	}
}

// hydrated marks col hydrated and tells c, if any.
func (s *Server) hydrated(c *conn, col *collection, elapsed time.Duration) {
	col.hydrated, col.hydrationTime = true, elapsed
	s.reportCollections()
	if c != nil {
		c.respond(statusResponse(col))
	}
}

func joinInto(cur, next *frontier.Frontier) *frontier.Frontier {
	switch {
	case next == nil:
		return cur
	case cur == nil:
		f := *next
		return &f
	default:
		f := frontier.Join(*cur, *next)
		return &f
	}
}

// reportFrontiers sends the parts of ev that advance what c was told, never
// anything below the collection's as_of.
func (s *Server) reportFrontiers(c *conn, col *collection, ev *FrontiersEvent) {
	rep := c.reported[col.id]
	if rep == nil {
		rep = &reportedFrontiers{}
		c.reported[col.id] = rep
	}
	msg := &computepb.Frontiers{Id: protocol.GlobalIDToProto(col.id)}
	advance := func(last **frontier.Frontier, next *frontier.Frontier) *computepb.Frontier {
		if next == nil || !col.asOf.LessEqual(*next) {
			return nil
		}
		if *last != nil && next.LessEqual(**last) {
			return nil
		}
		f := *next
		*last = &f
		return protocol.FrontierToProto(f)
	}
	msg.Write = advance(&rep.write, ev.Write)
	msg.Input = advance(&rep.input, ev.Input)
	msg.Output = advance(&rep.output, ev.Output)
	if msg.Write == nil && msg.Input == nil && msg.Output == nil {
		return
	}
	c.respond(&computepb.Response{Kind: &computepb.Response_Frontiers{Frontiers: msg}})
}

// reportCollections updates the hydration gauge.
func (s *Server) reportCollections() {
	var hydrated, hydrating int
	for _, col := range s.st.collections {
		if col.hydrated {
			hydrated++
		} else {
			hydrating++
		}
	}
	s.metrics.Collections(hydrated, hydrating)
}

func statusResponse(cols ...*collection) *computepb.Response {
	st := &computepb.Status{}
	for _, col := range cols {
		st.Collections = append(st.Collections, &computepb.CollectionStatus{
			Id: protocol.GlobalIDToProto(col.id), Hydrated: col.hydrated, HydrationMs: uint64(col.hydrationTime.Milliseconds()),
		})
	}
	return &computepb.Response{Kind: &computepb.Response_Status{Status: st}}
}
