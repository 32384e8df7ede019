package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/peeklane"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// lane is a peek lane (pkg/compute/peeklane) attached to the connection
// whose Hello nonce it presented. Its peeks are registered with that
// connection like the stream's; only their single-message answers take the
// lane. closed is owned by the loop.
type lane struct {
	conn   *conn
	nonce  string
	out    laneSender
	closed bool
}

// laneSender is the replica's end of a lane.
type laneSender interface {
	Send(*computepb.Response) bool
	Close()
}

var errNoSuchConnection = errors.New("no controller connection with that nonce")

// AttachLane implements peeklane.Attach: it binds a lane to the current
// connection when nonce is its Hello's.
func (s *Server) AttachLane(nonce string, sl *peeklane.ServerLane) (recv func(*computepb.Command), detach func(), err error) {
	return s.attachLane(nonce, sl)
}

func (s *Server) attachLane(nonce string, out laneSender) (func(*computepb.Command), func(), error) {
	l := &lane{nonce: nonce, out: out}
	answer := make(chan error, 1)
	select {
	case s.requests <- request{lane: l, connect: answer}:
	case <-s.loopDone:
		return nil, nil, errShutdown
	}
	if err := <-answer; err != nil {
		return nil, nil, err
	}
	// The lane lives no longer than its connection.
	stop := context.AfterFunc(l.conn.ctx, out.Close)
	// Commands and the close go through one queue, so the loop sees the
	// close after every command read before it (a peek is answered once).
	recv := func(cmd *computepb.Command) {
		s.lanes.push(request{conn: l.conn, lane: l, cmd: cmd, received: s.now()})
	}
	detach := func() {
		stop()
		s.lanes.push(request{lane: l, closed: true})
	}
	return recv, detach, nil
}

// laneRequest handles a lane's attach, close or command in the loop.
func (s *Server) laneRequest(ctx context.Context, r request) {
	st := &s.st
	l := r.lane
	switch {
	case r.connect != nil:
		if st.conn == nil || st.conn.nonce != l.nonce {
			r.connect <- fmt.Errorf("%w: %q", errNoSuchConnection, l.nonce)
			return
		}
		l.conn = st.conn
		r.connect <- nil
	case r.closed:
		l.closed = true
		// Their answers take the stream now; a peek whose command was
		// lost with the lane is sent again there by the controller.
		for _, p := range st.peeks {
			if p.lane == l {
				p.lane = nil
			}
		}
	case r.cmd != nil:
		if l.closed || st.conn != l.conn {
			return // the lane's connection was superseded
		}
		switch r.cmd.GetKind().(type) {
		case *computepb.Command_Peek, *computepb.Command_CancelPeek:
		default:
			s.refuse(l.conn, protocol.CommandKind(r.cmd), noID,
				coded(CodeProtocolViolation, "%s on a peek lane: a lane carries peeks and their cancels only", protocol.CommandKind(r.cmd)))
			return
		}
		if lm, ok := s.metrics.(LaneMetrics); ok {
			lm.LaneCommand(protocol.CommandKind(r.cmd))
		}
		st.received = r.received
		st.fromLane = l
		s.command(ctx, l.conn, r.cmd)
		st.fromLane = nil
	}
}

// respondPeek sends a peek's single-message answer on its lane when it has
// one that is up, else on the connection's stream.
func (s *Server) respondPeek(p *pendingPeek, c *conn, r *computepb.Response) {
	if p != nil && p.lane != nil && !p.lane.closed && p.lane.out.Send(r) {
		return
	}
	c.respond(r)
}
