package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func (s *Server) handleRequest(ctx context.Context, r request) {
	st := &s.st
	switch {
	case r.lane != nil:
		s.laneRequest(ctx, r)
	case r.connect != nil:
		r.connect <- s.connect(ctx, r.conn)
	case r.closed:
		if st.conn == r.conn {
			s.discardPeeks(ctx, r.conn)
			st.conn = nil
		}
	case r.stashed != nil:
		if p, ok := st.peeks[r.stashed.uuid]; ok && p.stash != nil {
			delete(st.peeks, r.stashed.uuid)
			s.metrics.PeekFinished(r.stashed.result, s.now().Sub(p.started))
		}
	case r.cmd != nil:
		if st.conn != r.conn {
			return // a command of a superseded connection
		}
		st.received = r.received
		s.command(ctx, r.conn, r.cmd)
	}
}

// connect installs c as the current connection, replacing the previous one
// unless it presents the same nonce.
func (s *Server) connect(ctx context.Context, c *conn) error {
	st := &s.st
	if old := st.conn; old != nil {
		if old.nonce == c.nonce {
			return status.Errorf(codes.AlreadyExists, "a connection with nonce %q is already active", c.nonce)
		}
		old.cancel(errSuperseded)
		s.discardPeeks(ctx, old)
	}
	c.reported = map[plan.GlobalID]*reportedFrontiers{}
	c.subscribeUpper = map[plan.GlobalID]frontier.Frontier{}
	st.conn = c
	s.reportMemory(true)
	return nil
}

// discardPeeks forgets the peeks of a connection that is gone: nobody is
// left to answer.
func (s *Server) discardPeeks(ctx context.Context, c *conn) {
	for uuid, p := range s.st.peeks {
		if p.conn != c {
			continue
		}
		if p.stash != nil {
			p.stash.canceled.Store(true)
			c.out.wake()
		}
		// Also for a stashed result: a streamed one still has walks
		// feeding it.
		s.rt.CancelPeek(ctx, uuid)
		delete(s.st.peeks, uuid)
	}
}

// command handles one command of the current connection.
func (s *Server) command(ctx context.Context, c *conn, cmd *computepb.Command) {
	kind := protocol.CommandKind(cmd)
	s.metrics.CommandReceived(kind)
	if err := protocol.Validate(cmd); err != nil {
		s.refuse(c, kind, noID, coded(CodeProtocolViolation, "%w", err))
		return
	}
	switch k := cmd.GetKind().(type) {
	case *computepb.Command_Hello:
		s.refuse(c, kind, noID, coded(CodeProtocolViolation, "hello on an open connection"))
		return
	case *computepb.Command_CreateInstance:
		if c.phase != awaitCreateInstance {
			s.refuse(c, kind, noID, coded(CodeProtocolViolation, "create_instance sent twice"))
			return
		}
		c.cfg = instanceConfig(k.CreateInstance)
		if err := s.rt.CreateInstance(ctx, c.cfg); err != nil {
			s.refuse(c, kind, noID, fmt.Errorf("create instance: %w", err))
		} else {
			s.registerLogging(c.cfg)
		}
		c.phase = initializing
		return
	}
	if c.phase == awaitCreateInstance {
		s.refuse(c, kind, noID, coded(CodeProtocolViolation, "%s before create_instance", kind))
		return
	}
	var df *Dataflow
	if cd := cmd.GetCreateDataflow(); cd != nil {
		var err error
		if df, err = s.codec.Decode(cd.GetDataflow()); err != nil {
			// Name the dataflow when the description did: the controller
			// fails the reads of its exports with this refusal. XX000: a
			// plan the controller built and the replica cannot run is an
			// internal error, not the user's.
			var id plan.GlobalID
			var ie *InvalidDataflowError
			if errors.As(err, &ie) {
				id = ie.ID
			}
			s.refuse(c, kind, id, coded(CodeInvalidPlan, "invalid dataflow: %w", err))
			return
		}
	}
	if c.phase == initializing {
		if cmd.GetInitializationComplete() != nil {
			s.reconcile(ctx, c)
			return
		}
		c.buffered = append(c.buffered, buffered{cmd: cmd, df: df})
		return
	}
	s.apply(ctx, c, cmd, df)
}

// apply executes a command on a running connection.
func (s *Server) apply(ctx context.Context, c *conn, cmd *computepb.Command, df *Dataflow) {
	kind := protocol.CommandKind(cmd)
	switch k := cmd.GetKind().(type) {
	case *computepb.Command_InitializationComplete:
		s.refuse(c, kind, noID, coded(CodeProtocolViolation, "initialization_complete sent twice"))
	case *computepb.Command_UpdateConfiguration:
		if err := s.rt.UpdateConfiguration(ctx, k.UpdateConfiguration.GetParameters()); err != nil {
			s.refuse(c, kind, noID, fmt.Errorf("update configuration: %w", err))
		}
	case *computepb.Command_CreateDataflow:
		if err := s.createDataflow(ctx, df); err != nil {
			s.refuse(c, kind, df.ID, err)
		}
	case *computepb.Command_Schedule:
		id, err := protocol.GlobalIDFromProto(k.Schedule.GetId())
		if err != nil {
			// Validate already refused it; never reached.
			s.refuse(c, kind, noID, coded(CodeProtocolViolation, "schedule: %w", protocol.InField("id", err)))
			return
		}
		if _, ok := s.st.collections[id]; !ok {
			s.refuse(c, kind, id, coded(CodeUndefinedObject, "unknown collection %s", id))
			return
		}
		if err := s.rt.Schedule(ctx, id); err != nil {
			s.refuse(c, kind, id, fmt.Errorf("schedule %s: %w", id, err))
		}
	case *computepb.Command_AllowCompaction:
		s.allowCompaction(ctx, c, k.AllowCompaction)
	case *computepb.Command_Peek:
		s.peek(ctx, c, k.Peek)
	case *computepb.Command_CancelPeek:
		s.cancelPeek(ctx, c, k.CancelPeek.GetUuid())
	}
}

// noID is refuse's id for a command that names no collection.
var noID plan.GlobalID

// refuse answers a command with a CommandError naming collection id (the
// zero id: none) and logs it.
func (s *Server) refuse(c *conn, kind string, id plan.GlobalID, err error) {
	e := &computepb.CommandError{Command: kind, Sqlstate: sqlstate(err), Message: err.Error()}
	if !id.IsZero() {
		e.Collection = protocol.GlobalIDToProto(id)
	}
	s.sendRefusal(c, e, err)
}

// refusePeek answers a peek command with a CommandError naming its uuid.
func (s *Server) refusePeek(c *conn, uuid string, err error) {
	s.sendRefusal(c, &computepb.CommandError{Command: protocol.KindPeek, PeekUuid: uuid, Sqlstate: sqlstate(err), Message: err.Error()}, err)
}

func (s *Server) sendRefusal(c *conn, e *computepb.CommandError, err error) {
	s.log.Info("Refused command", "command", e.GetCommand(), "collection", e.GetCollection().String(), "peek", e.GetPeekUuid(), "error", err.Error())
	c.respond(&computepb.Response{Kind: &computepb.Response_CommandError{CommandError: e}})
}

func (s *Server) createDataflow(ctx context.Context, df *Dataflow) error {
	if err := s.memory.CheckDataflow(); err != nil {
		// Refused before any work; the controller fails the reads of
		// its exports with this refusal.
		return fmt.Errorf("create dataflow %s: %w", df.ID, err)
	}
	seen := map[plan.GlobalID]bool{}
	for _, id := range df.Exports() {
		if _, ok := s.st.collections[id]; ok || seen[id] {
			return coded(CodeDuplicateObject, "dataflow %s: export %s already exists", df.ID, id)
		}
		seen[id] = true
	}
	if err := s.rt.CreateDataflow(ctx, df); err != nil {
		return fmt.Errorf("create dataflow %s: %w", df.ID, err)
	}
	s.install(df)
	return nil
}

// install records a dataflow the runtime now runs.
func (s *Server) install(df *Dataflow) *dataflowState {
	ds := &dataflowState{df: df}
	now := s.now()
	s.st.dataflows[ds] = struct{}{}
	for _, id := range df.Indexes {
		s.st.collections[id] = &collection{id: id, df: ds, asOf: df.AsOf, until: df.Until, since: df.AsOf, created: now}
	}
	for _, id := range df.Subscribes {
		s.st.collections[id] = &collection{id: id, df: ds, subscribe: true, asOf: df.AsOf, until: df.Until, since: df.AsOf, created: now}
	}
	s.reportCollections()
	return ds
}

func (s *Server) allowCompaction(ctx context.Context, c *conn, ac *computepb.AllowCompaction) {
	id, err := protocol.GlobalIDFromProto(ac.GetId())
	if err != nil {
		// Validate already refused it; never reached.
		s.refuse(c, protocol.KindAllowCompaction, noID, coded(CodeProtocolViolation, "allow compaction: %w", protocol.InField("id", err)))
		return
	}
	col, ok := s.st.collections[id]
	if !ok {
		s.refuse(c, protocol.KindAllowCompaction, id, coded(CodeUndefinedObject, "unknown collection %s", id))
		return
	}
	f := protocol.FrontierFromProto(ac.GetFrontier())
	if err := s.rt.AllowCompaction(ctx, id, f); err != nil {
		s.refuse(c, protocol.KindAllowCompaction, id, fmt.Errorf("allow compaction %s: %w", id, err))
		return
	}
	col.since = frontier.Join(col.since, f)
	if f.IsClosed() {
		s.dropCollection(c, col)
	}
}

// dropCollection forgets a dropped collection and tells the connection its
// frontiers are closed (and, for a subscribe, that it was dropped).
func (s *Server) dropCollection(c *conn, col *collection) {
	delete(s.st.collections, col.id)
	live := false
	for _, other := range s.st.collections {
		if other.df == col.df {
			live = true
			break
		}
	}
	if !live {
		delete(s.st.dataflows, col.df)
	}
	if c != nil && c.phase == running {
		closed := frontier.Closed()
		s.reportFrontiers(c, col, &FrontiersEvent{ID: col.id, Write: &closed, Input: &closed, Output: &closed})
		if col.subscribe {
			c.respond(&computepb.Response{Kind: &computepb.Response_SubscribeResponse{SubscribeResponse: &computepb.SubscribeResponse{
				Id:    protocol.GlobalIDToProto(col.id),
				Lower: protocol.FrontierToProto(c.subscribeUpperOf(col)),
				Upper: protocol.FrontierToProto(closed),
				Kind:  &computepb.SubscribeResponse_Dropped{Dropped: &computepb.SubscribeDropped{}},
			}}})
		}
		delete(c.reported, col.id)
		delete(c.subscribeUpper, col.id)
	}
	s.reportCollections()
}

func (c *conn) subscribeUpperOf(col *collection) frontier.Frontier {
	if u, ok := c.subscribeUpper[col.id]; ok {
		return u
	}
	return col.asOf
}

func instanceConfig(ci *computepb.CreateInstance) InstanceConfig {
	cfg := InstanceConfig{
		LoggingInterval:    time.Duration(ci.GetLogging().GetIntervalMs()) * time.Millisecond,
		LoggingIndexes:     loggingIndexes(ci.GetLogging()),
		MaxResultSize:      ci.GetMaxResultSize(),
		PeekStashThreshold: ci.GetPeekStashThreshold(),
		PeekStashChunkSize: ci.GetPeekStashChunkSize(),
		Parameters:         ci.GetParameters(),
	}
	if cfg.LoggingInterval == 0 {
		cfg.LoggingInterval = time.Second
	}
	return cfg
}

// loggingIndexes decodes a validated LoggingConfig's indexes.
func loggingIndexes(l *computepb.LoggingConfig) map[string]plan.GlobalID {
	out := make(map[string]plan.GlobalID, len(l.GetIndexes()))
	for name, p := range l.GetIndexes() {
		if id, err := protocol.GlobalIDFromProto(p); err == nil {
			out[name] = id
		}
	}
	return out
}

// decodePeek converts a validated peek once, at the edge: its target
// becomes a plan.GlobalID, its MFP an expr.MFP and its finishing a
// plan.Finishing. A malformed MFP or finishing is a *protocol.DecodeError.
func decodePeek(p *computepb.Peek) (*Peek, error) {
	target, err := protocol.GlobalIDFromProto(p.GetTarget())
	if err != nil {
		return nil, fmt.Errorf("peek %s: %w", p.GetUuid(), protocol.InField("target", err))
	}
	out := &Peek{
		UUID:      p.GetUuid(),
		Target:    target,
		Timestamp: frontier.Time(p.GetTimestamp()),
		Hints:     p.GetHints(),
	}
	for _, k := range p.GetLiteralKeys() {
		out.LiteralKeys = append(out.LiteralKeys, row.Row(k))
	}
	if m := p.GetMfp(); m != nil {
		mfp, err := protocol.MFPFromProto(m)
		if err != nil {
			return nil, fmt.Errorf("peek %s: %w", p.GetUuid(), protocol.InField("mfp", err))
		}
		out.MFP = &mfp
	}
	if out.Finishing, err = protocol.FinishingFromProto(p.GetFinishing()); err != nil {
		return nil, fmt.Errorf("peek %s: %w", p.GetUuid(), protocol.InField("finishing", err))
	}
	return out, nil
}

// registerLogging records the introspection indexes the runtime maintains
// since CreateInstance as collections, so their frontiers are reported and
// peeks on them are served. They belong to no controller dataflow, so
// they are kept out of st.dataflows and reconciliation never drops them.
func (s *Server) registerLogging(cfg InstanceConfig) {
	for _, id := range cfg.LoggingIndexes {
		if _, ok := s.st.collections[id]; ok {
			continue
		}
		ds := &dataflowState{df: &Dataflow{ID: id, Indexes: []plan.GlobalID{id}, AsOf: frontier.Minimum(), Until: frontier.Closed()}}
		s.st.collections[id] = &collection{id: id, df: ds, asOf: frontier.Minimum(), until: frontier.Closed(), since: frontier.Minimum(), created: s.now()}
	}
}
