package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// replica is one replica of a cluster and its connection. Fields below mu
// of the controller are guarded by it.
type replica struct {
	ctl     *Controller
	cluster *cluster
	cfg     orchestrator.ReplicaConfig
	log     logr.Logger

	cancel context.CancelFunc
	done   chan struct{}

	// epoch counts connections; responses from older epochs are ignored.
	epoch     uint64
	conns     []*processConn // nil while disconnected
	connected time.Time
	lastError string
	// frontiers are this epoch's reports per collection.
	frontiers map[plan.GlobalID]*replicaFrontiers
	// hydrationMs is the replica's own hydration report (introspection).
	status map[plan.GlobalID]*computepb.CollectionStatus
	// refused holds this epoch's refusals of create_dataflow, by export
	// of the refused dataflow (refusal.go).
	refused map[plan.GlobalID]*computepb.PeekError
	// memory is this epoch's last memory report per process (memory.go).
	memory map[int]*computepb.MemoryStatus
	// memoryWait is the connection's wait for every process's first
	// memory report, before the history is replayed; nil otherwise.
	memoryWait *memoryWait
	// admitted are the dataflows sent to this replica (by id), in this
	// connection or an earlier one: a replay sends them whatever the
	// memory reports say (memory.go).
	admitted map[plan.GlobalID]bool
	// importHolds are this replica's holds on its dataflows' storage
	// imports, by dataflow id (see replicaholds.go). They outlive
	// connections and go with the dataflow or the replica.
	importHolds map[plan.GlobalID]dataflowImportHolds
	// roll is a config given by ApplyReplicaConfig whose completion is
	// still to be logged (params.go); nil otherwise.
	roll *rollWatch
}

// replicaFrontiers are one collection's frontiers on one replica: per
// process, and merged by meet.
type replicaFrontiers struct {
	procs                []procFrontiers
	write, input, output frontier.Frontier
}

type procFrontiers struct {
	write, input, output frontier.Frontier
	// reported: the process reported this collection in this epoch, so it
	// has its dataflow (a peek may take the lane, lane.go).
	reported bool
}

func (rf *replicaFrontiers) merge() {
	rf.write, rf.input, rf.output = frontier.Closed(), frontier.Closed(), frontier.Closed()
	for _, p := range rf.procs {
		rf.write = frontier.Meet(rf.write, p.write)
		rf.input = frontier.Meet(rf.input, p.input)
		rf.output = frontier.Meet(rf.output, p.output)
	}
}

// processConn is the connection to one process, with an unbounded send
// queue so that the controller never blocks on a slow replica while holding
// its lock.
type processConn struct {
	index  int
	stream Stream
	addr   string // the process's computectl address
	nonce  string // of this connection's Hello

	// lane, when up, carries peeks (lane.go); laneSent are the peeks sent
	// on it and not answered yet. Both are guarded by the controller's mu.
	lane     Lane
	laneSent map[string]*laneSent

	mu    sync.Mutex
	queue []*computepb.Command
	wake  chan struct{}
}

func (p *processConn) enqueue(cmd *computepb.Command) {
	p.mu.Lock()
	p.queue = append(p.queue, cmd)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *processConn) sendLoop(ctx context.Context) error {
	for {
		p.mu.Lock()
		q := p.queue
		p.queue = nil
		p.mu.Unlock()
		for _, cmd := range q {
			if err := p.stream.Send(cmd); err != nil {
				return fmt.Errorf("send %s to process %d: %w", protocol.CommandKind(cmd), p.index, err)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.wake:
		}
	}
}

// sendLocked queues cmd to every process of a connected replica; a
// disconnected replica gets the reduced history when it reconnects.
func (r *replica) sendLocked(cmd *computepb.Command) {
	if r.conns == nil {
		return
	}
	for _, p := range r.conns {
		if !r.sendOnLaneLocked(p, cmd) {
			p.enqueue(cmd)
		}
	}
	r.ctl.cfg.Metrics.command(protocol.CommandKind(cmd), len(r.conns))
}

// reportsOpenLocked reports whether the replica is connected and has not
// reported collection id closed.
func (r *replica) reportsOpenLocked(id plan.GlobalID) bool {
	if r.conns == nil {
		return false
	}
	rf, ok := r.frontiers[id]
	return ok && !rf.write.IsClosed()
}

// hydratedLocked reports whether the replica's output frontier for col
// passed its as_of.
func (r *replica) hydratedLocked(col *collection) bool {
	if r.conns == nil {
		return false
	}
	rf, ok := r.frontiers[col.id]
	return ok && !rf.output.LessEqualTime(col.asOf)
}

// run keeps the replica connected until ctx ends.
func (r *replica) run(ctx context.Context) {
	defer close(r.done)
	backoff := r.ctl.cfg.MinReconnectBackoff
	for ctx.Err() == nil {
		start := time.Now()
		err := r.connectOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > 10*time.Second {
			backoff = r.ctl.cfg.MinReconnectBackoff
		}
		r.ctl.mu.Lock()
		r.lastError = err.Error()
		r.ctl.mu.Unlock()
		r.log.V(1).Info("Replica connection ended; reconnecting", "error", err.Error(), "backoff", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, r.ctl.cfg.MaxReconnectBackoff)
	}
}

// connectOnce connects to every process, waits for their memory reports,
// replays the history, and serves responses until a connection fails.
func (r *replica) connectOnce(ctx context.Context) error {
	conns, err := r.dial(ctx)
	if err != nil {
		return err
	}
	closeAll := func() {
		for _, p := range conns {
			p.stream.Close()
		}
	}
	c := r.ctl
	c.mu.Lock()
	r.epoch++
	epoch := r.epoch
	reported := r.awaitMemoryLocked(len(conns))
	c.mu.Unlock()
	for _, p := range conns {
		p.enqueue(&computepb.Command{Kind: &computepb.Command_Hello{Hello: &computepb.Hello{Nonce: p.nonce}}})
	}
	c.cfg.Metrics.command(protocol.KindHello, len(conns))

	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 2*len(conns))
	var wg sync.WaitGroup
	for _, p := range conns {
		wg.Add(2)
		go func() { defer wg.Done(); errc <- p.sendLoop(cctx) }()
		go func() {
			defer wg.Done()
			for {
				resp, err := p.stream.Recv()
				if err != nil {
					errc <- fmt.Errorf("receive from process %d: %w", p.index, err)
					return
				}
				c.handleResponse(r, epoch, p.index, resp)
			}
		}()
	}
	err = r.waitMemory(ctx, reported, errc)
	replayed := err == nil
	if replayed {
		r.replay(epoch, conns)
		for _, p := range conns {
			wg.Add(1)
			go func() { defer wg.Done(); r.runLane(cctx, epoch, p) }()
		}
		select {
		case err = <-errc:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	cancel()
	closeAll()
	wg.Wait()

	c.mu.Lock()
	if r.epoch == epoch {
		r.conns = nil
		r.memoryWait = nil
		r.frontiers = map[plan.GlobalID]*replicaFrontiers{}
		c.replicaDisconnectedLocked(r)
		if replayed && ctx.Err() == nil {
			// Lost, not dropped or closed by us: charge the reads it
			// was answering.
			c.chargePeeksLocked(r)
		}
	}
	c.mu.Unlock()
	if err == nil {
		err = errors.New("connection closed")
	}
	return err
}

// dial connects to every process of the replica.
func (r *replica) dial(ctx context.Context) ([]*processConn, error) {
	r.ctl.mu.Lock()
	cfg := r.cfg
	r.ctl.mu.Unlock()
	st, err := r.ctl.cfg.Orchestrator.Status(ctx, cfg.ID)
	if err != nil {
		return nil, err
	}
	addrs := st.ComputeCtlAddrs()
	if len(addrs) != cfg.Processes {
		return nil, fmt.Errorf("orchestrator reports %d processes, want %d", len(addrs), cfg.Processes)
	}
	dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
	defer dcancel()
	var conns []*processConn
	for i, addr := range addrs {
		var s Stream
		if addr == "" {
			err = fmt.Errorf("process %d has no address yet", i)
		} else {
			s, err = r.ctl.cfg.Dialer.Dial(dctx, addr)
		}
		if err != nil {
			for _, c := range conns {
				c.stream.Close()
			}
			return nil, err
		}
		conns = append(conns, &processConn{index: i, stream: s, addr: addr, nonce: newUUID(),
			laneSent: map[string]*laneSent{}, wake: make(chan struct{}, 1)})
	}
	return conns, nil
}

// replay makes conns the replica's connection of epoch and queues them
// the history, judged against the memory the processes reported.
func (r *replica) replay(epoch uint64, conns []*processConn) {
	c := r.ctl
	c.mu.Lock()
	defer c.mu.Unlock()
	r.conns = conns
	r.connected = time.Now()
	r.lastError = ""
	r.frontiers = map[plan.GlobalID]*replicaFrontiers{}
	r.status = map[plan.GlobalID]*computepb.CollectionStatus{}
	r.refused = map[plan.GlobalID]*computepb.PeekError{}
	history := c.replicaHistoryLocked(r)
	c.holdHistoryImportsLocked(r)
	for _, p := range conns {
		for _, cmd := range history {
			p.enqueue(cmd)
		}
		p.enqueue(&computepb.Command{Kind: &computepb.Command_InitializationComplete{InitializationComplete: &computepb.InitializationComplete{}}})
	}
	for _, cmd := range history {
		c.cfg.Metrics.command(protocol.CommandKind(cmd), len(conns))
	}
	c.cfg.Metrics.command(protocol.KindInitializationComplete, len(conns))
	c.cfg.Metrics.historySize(len(history))
	c.logRolledLocked(r)
	r.log.Info("Connected to replica", "epoch", epoch, "processes", len(conns), "history", len(history), "memoryNearLimit", r.nearLimitLocked())
}

// handleResponse applies one response from process proc of r's epoch.
func (c *Controller) handleResponse(r *replica, epoch uint64, proc int, resp *computepb.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kind := responseKind(resp)
	if r.epoch != epoch || (r.conns == nil && !r.awaitsMemoryReportLocked(resp)) {
		c.cfg.Metrics.response(kind, "stale")
		return
	}
	c.cfg.Metrics.response(kind, "applied")
	switch k := resp.GetKind().(type) {
	case *computepb.Response_Frontiers:
		c.handleFrontiersLocked(r, proc, k.Frontiers)
	case *computepb.Response_PeekResponse:
		r.laneAnsweredLocked(proc, k.PeekResponse)
		c.handlePeekResponseLocked(r, proc, k.PeekResponse)
	case *computepb.Response_SubscribeResponse:
		c.handleSubscribeResponseLocked(r, proc, k.SubscribeResponse)
	case *computepb.Response_Status:
		for _, s := range k.Status.GetCollections() {
			if id, err := protocol.GlobalIDFromProto(s.GetId()); err == nil {
				r.status[id] = s
			}
		}
	case *computepb.Response_CommandError:
		c.handleCommandErrorLocked(r, proc, k.CommandError)
	case *computepb.Response_MemoryStatus:
		c.handleMemoryStatusLocked(r, proc, k.MemoryStatus)
	}
}

func responseKind(resp *computepb.Response) string {
	switch resp.GetKind().(type) {
	case *computepb.Response_Frontiers:
		return "frontiers"
	case *computepb.Response_PeekResponse:
		return "peek_response"
	case *computepb.Response_SubscribeResponse:
		return "subscribe_response"
	case *computepb.Response_Status:
		return "status"
	case *computepb.Response_CommandError:
		return "command_error"
	case *computepb.Response_MemoryStatus:
		return "memory_status"
	default:
		return "unknown"
	}
}

func (c *Controller) handleFrontiersLocked(r *replica, proc int, f *computepb.Frontiers) {
	id, err := protocol.GlobalIDFromProto(f.GetId())
	if err != nil {
		return
	}
	rf, ok := r.frontiers[id]
	if !ok {
		rf = &replicaFrontiers{procs: make([]procFrontiers, len(r.conns))}
		r.frontiers[id] = rf
	}
	if proc >= len(rf.procs) {
		return
	}
	col, ok := c.collections[id]
	hydrated := ok && r.hydratedLocked(col)
	p := &rf.procs[proc]
	p.reported = true
	// Frontiers never regress within a connection; an absent field is
	// unchanged.
	if f.Write != nil {
		p.write = frontier.Join(p.write, protocol.FrontierFromProto(f.Write))
	}
	if f.Input != nil {
		p.input = frontier.Join(p.input, protocol.FrontierFromProto(f.Input))
	}
	if f.Output != nil {
		p.output = frontier.Join(p.output, protocol.FrontierFromProto(f.Output))
	}
	rf.merge()
	if !ok || col.kind != kindCompute {
		return
	}
	if !hydrated && r.hydratedLocked(col) {
		c.logRolledLocked(r)
	}
	c.advanceWriteLocked(col, rf.write)
	c.advanceImportHoldsLocked(r, col)
	if rf.write.IsClosed() {
		c.maybeRemoveLocked(col)
	}
}

// replicaDisconnectedLocked forgets what a disconnected replica was doing.
// Its pending peeks stay pending: other replicas may answer, and the
// history re-sends them when it reconnects.
func (c *Controller) replicaDisconnectedLocked(r *replica) {
	for _, p := range r.cluster.peeks {
		delete(p.answers, r.cfg.ID.Replica)
	}
	for _, col := range c.collections {
		if col.subscribe != nil {
			delete(col.subscribe.replicas, r.cfg.ID.Replica)
		}
		// A dropped collection no longer waits for this replica's report.
		c.maybeRemoveLocked(col)
	}
}

// chargePeeksLocked counts a lost connection of r against every read
// pending on it and fails those that reached MaxPeekRestarts: a read that
// kills each replica answering it (a one-shot dataflow or an answer too
// big for the replica's memory) is otherwise re-sent on every reconnect,
// and the replica crash-loops. A read pending during unrelated losses is
// charged too; it needs MaxPeekRestarts of them to fail.
func (c *Controller) chargePeeksLocked(r *replica) {
	if c.cfg.MaxPeekRestarts < 0 {
		return
	}
	name := r.cfg.ID.Replica
	for _, p := range r.cluster.peeks {
		if p.done || !p.sendsTo(name) {
			continue
		}
		p.restarts++
		if p.restarts < c.cfg.MaxPeekRestarts {
			continue
		}
		r.log.Info("Failing a read its replicas kept losing their connection over", "peek", p.uuid, "restarts", p.restarts)
		p.finishLocked(peekResult{err: &PeekError{SQLState: CodeReadKeepsCrashing, Message: fmt.Sprintf(
			"read abandoned: the replicas answering it lost their connection %d times while it ran (a crash, e.g. out of memory); it was not re-sent again",
			p.restarts)}, replica: name})
	}
}

// CodeReadKeepsCrashing is the SQLSTATE of a read failed by
// chargePeeksLocked (internal_error: the cause is the replica's).
const CodeReadKeepsCrashing = "XX000"

// CreateReplica provisions a replica through the orchestrator and keeps it
// connected.
func (c *Controller) CreateReplica(ctx context.Context, cfg orchestrator.ReplicaConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	c.mu.Lock()
	cl, err := c.clusterLocked(cfg.ID.Cluster)
	if err == nil {
		if _, ok := cl.replicas[cfg.ID.Replica]; ok {
			err = fmt.Errorf("create replica %s: %w", cfg.ID, ErrExists)
		}
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if err := c.cfg.Orchestrator.EnsureReplica(ctx, cfg); err != nil {
		return fmt.Errorf("create replica %s: %w", cfg.ID, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := cl.replicas[cfg.ID.Replica]; ok {
		return fmt.Errorf("create replica %s: %w", cfg.ID, ErrExists)
	}
	rctx, cancel := context.WithCancel(c.ctx)
	r := &replica{
		ctl: c, cluster: cl, cfg: cfg, cancel: cancel, done: make(chan struct{}),
		log:         c.log.WithValues("replica", cfg.ID.String()),
		frontiers:   map[plan.GlobalID]*replicaFrontiers{},
		status:      map[plan.GlobalID]*computepb.CollectionStatus{},
		refused:     map[plan.GlobalID]*computepb.PeekError{},
		admitted:    map[plan.GlobalID]bool{},
		importHolds: map[plan.GlobalID]dataflowImportHolds{},
	}
	cl.replicas[cfg.ID.Replica] = r
	c.cfg.Metrics.replicas(c.clusters)
	c.wg.Add(1)
	go func() { defer c.wg.Done(); r.run(rctx) }()
	return nil
}

// DropReplica disconnects a replica and removes it through the
// orchestrator.
func (c *Controller) DropReplica(ctx context.Context, cluster, name string) error {
	c.mu.Lock()
	cl, err := c.clusterLocked(cluster)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	r, ok := cl.replicas[name]
	if !ok {
		c.mu.Unlock()
		return fmt.Errorf("drop replica %s.%s: not found", cluster, name)
	}
	delete(cl.replicas, name)
	c.cfg.Metrics.replicas(c.clusters)
	c.mu.Unlock()
	r.cancel()
	<-r.done
	c.mu.Lock()
	c.replicaDisconnectedLocked(r)
	// Its dataflows no longer read storage.
	c.releaseAllImportHoldsLocked(r)
	// Reads addressed to this replica alone can no longer be answered.
	for _, p := range cl.peeks {
		if p.replica == name {
			p.finishLocked(peekResult{err: fmt.Errorf("replica %s.%s was dropped: %w", cluster, name, ErrUnknownReplica), replica: name})
		}
	}
	c.mu.Unlock()
	if err := c.cfg.Orchestrator.RemoveReplica(ctx, r.cfg.ID); err != nil {
		return fmt.Errorf("drop replica %s: %w", r.cfg.ID, err)
	}
	return nil
}
