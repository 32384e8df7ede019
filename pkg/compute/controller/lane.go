package controller

import (
	"context"
	"crypto/tls"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/peeklane"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// ParamEnablePeekLane turns the peek lanes on (default) or off: off, every
// peek takes the command stream, so both transports can be measured side
// by side in one run (docs/design/read-path.md, "The peek lane").
const ParamEnablePeekLane = "enable_peek_lane"

// Lane is the controller's end of a peek lane to one replica process
// (pkg/compute/peeklane).
type Lane interface {
	// Send queues a Peek or CancelPeek; false once the lane is down.
	Send(*computepb.Command) bool
	// Done is closed once the lane is down.
	Done() <-chan struct{}
	Close()
}

// LaneDialer opens peek lanes.
type LaneDialer interface {
	// DialLane connects to the lane a replica process advertised and
	// attaches it to that process's connection of nonce; responses read
	// from it go to onResponse, in order.
	DialLane(ctx context.Context, advertised, computectl, nonce string, onResponse func(*computepb.Response)) (Lane, error)
}

// PeekLaneDialer dials lanes with pkg/compute/peeklane: over TCP with
// mutual TLS when TLS is set, over a replica's unix socket otherwise.
type PeekLaneDialer struct {
	TLS *tls.Config
}

// DialLane implements LaneDialer.
func (d PeekLaneDialer) DialLane(ctx context.Context, advertised, computectl, nonce string, onResponse func(*computepb.Response)) (Lane, error) {
	network, address, err := peeklane.Resolve(advertised, computectl)
	if err != nil {
		return nil, err
	}
	return peeklane.Dialer{TLS: d.TLS}.Dial(ctx, network, address, nonce, onResponse)
}

// laneAdvertiser is a Stream whose replica may advertise a peek lane.
type laneAdvertiser interface {
	// LaneAddress blocks until the replica accepted the stream and
	// returns the lane it advertised ("" for none).
	LaneAddress() string
}

// LaneAddress implements laneAdvertiser: the replica puts its lane's
// address in the stream's header.
func (s *grpcStream) LaneAddress() string {
	md, err := s.stream.Header()
	if err != nil {
		return ""
	}
	if v := md.Get(peeklane.HeaderKey); len(v) == 1 {
		return v[0]
	}
	return ""
}

// laneSent is a peek sent on a lane and not yet answered, with whether its
// cancel followed it there.
type laneSent struct {
	peek     *computepb.Command
	canceled bool
}

// laneEnabledLocked reports whether peeks may take lanes.
func (c *Controller) laneEnabledLocked() bool {
	return c.cfg.LaneDialer != nil && c.params[ParamEnablePeekLane] != "off"
}

// sendOnLaneLocked sends a Peek or CancelPeek to process p over its lane
// when it is up and may carry it, and reports whether it did. A peek takes
// the lane only once the process reported its target (so the lane cannot
// overtake the create_dataflow on the stream); a cancel follows its peek.
func (r *replica) sendOnLaneLocked(p *processConn, cmd *computepb.Command) bool {
	if p.lane == nil || !r.ctl.laneEnabledLocked() {
		return false
	}
	switch k := cmd.GetKind().(type) {
	case *computepb.Command_Peek:
		id, err := protocol.GlobalIDFromProto(k.Peek.GetTarget())
		if err != nil {
			return false
		}
		rf, ok := r.frontiers[id]
		if !ok || p.index >= len(rf.procs) || !rf.procs[p.index].reported {
			return false
		}
		if !p.lane.Send(cmd) {
			return false
		}
		p.laneSent[k.Peek.GetUuid()] = &laneSent{peek: cmd}
	case *computepb.Command_CancelPeek:
		ls, ok := p.laneSent[k.CancelPeek.GetUuid()]
		if !ok {
			return false // its peek took the stream
		}
		// Also when the cancel itself falls back to the stream: the peek
		// is sent again there when the lane goes down, and this with it.
		ls.canceled = true
		if !p.lane.Send(cmd) {
			return false
		}
	default:
		return false
	}
	r.ctl.cfg.Metrics.laneCommand(protocol.CommandKind(cmd))
	return true
}

// laneAnsweredLocked forgets a lane peek once its process answered it
// (on either transport).
func (r *replica) laneAnsweredLocked(proc int, resp *computepb.PeekResponse) {
	if proc >= len(r.conns) {
		return
	}
	if st := resp.GetStashed(); st != nil && !st.GetFinal() {
		return
	}
	delete(r.conns[proc].laneSent, resp.GetUuid())
}

// laneBackoff bounds the wait between attempts to open a lane.
const (
	minLaneBackoff = 50 * time.Millisecond
	maxLaneBackoff = 5 * time.Second
	// laneSettled is how long a lane must have served for its loss to
	// start the backoff afresh.
	laneSettled = 10 * time.Second
)

// runLane keeps process p's lane of epoch open until ctx ends: it learns
// the lane's address from the stream, dials, and when the lane goes down
// sends what was pending on it again on the stream and dials again.
func (r *replica) runLane(ctx context.Context, epoch uint64, p *processConn) {
	c := r.ctl
	adv, ok := p.stream.(laneAdvertiser)
	if !ok || c.cfg.LaneDialer == nil {
		return
	}
	addr := adv.LaneAddress()
	if addr == "" || ctx.Err() != nil {
		return // the replica offers none: peeks take the stream
	}
	backoff := minLaneBackoff
	for ctx.Err() == nil {
		lane, err := c.cfg.LaneDialer.DialLane(ctx, addr, p.addr, p.nonce,
			func(resp *computepb.Response) { c.handleResponse(r, epoch, p.index, resp) })
		if err == nil {
			c.mu.Lock()
			if r.epoch != epoch {
				c.mu.Unlock()
				lane.Close()
				return
			}
			p.lane = lane
			c.mu.Unlock()
			c.cfg.Metrics.laneUp(1)
			r.log.V(1).Info("Opened peek lane", "process", p.index, "address", addr)
			up := time.Now()
			select {
			case <-ctx.Done():
				lane.Close()
			case <-lane.Done():
			}
			c.cfg.Metrics.laneUp(-1)
			r.laneDown(epoch, p, lane)
			// A lane the replica refuses after the dial (a wrong
			// certificate, a stale nonce) ends at once: back off as for a
			// failed dial, unless it served a while.
			if time.Since(up) > laneSettled {
				backoff = minLaneBackoff
			}
		} else {
			r.log.V(1).Info("Peek lane dial failed; peeks take the command stream", "process", p.index, "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxLaneBackoff)
	}
}

// laneDown sends the peeks pending on a lane that went down again on the
// stream (with their cancels): the replica answers each once, on the
// stream, whether or not the lane had delivered it.
func (r *replica) laneDown(epoch uint64, p *processConn, lane Lane) {
	c := r.ctl
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.lane == lane {
		p.lane = nil
	}
	if r.epoch != epoch || r.conns == nil {
		return // the connection went too: the history re-sends
	}
	for uuid, ls := range p.laneSent {
		p.enqueue(ls.peek)
		if ls.canceled {
			p.enqueue(&computepb.Command{Kind: &computepb.Command_CancelPeek{CancelPeek: &computepb.CancelPeek{Uuid: uuid}}})
		}
		c.cfg.Metrics.laneResent()
	}
	clear(p.laneSent)
}
