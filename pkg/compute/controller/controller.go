package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// Sentinel errors callers act on.
var (
	ErrUnknownCollection = errors.New("unknown collection")
	ErrUnknownCluster    = errors.New("unknown cluster")
	ErrExists            = errors.New("already exists")
	// ErrNotReadable is returned for a read or hold before a collection's
	// since.
	ErrNotReadable = errors.New("time not readable")
)

// Storage is what the controller needs of table storage. Storage names a
// shard by its collection's printed GlobalId ("u12"); the controller
// prints the id at this edge and nowhere else.
type Storage interface {
	// Frontiers returns a shard's since and upper.
	Frontiers(id string) (since frontier.Time, upper frontier.Frontier, err error)
	// AllowCompaction lets a shard compact up to since.
	AllowCompaction(id string, since frontier.Time) error
}

// Oracle is the timestamp oracle's read side (storage.Oracle).
type Oracle interface {
	// ReadTS is the linearized read timestamp: the largest time of a
	// completed write or strict serializable read.
	ReadTS() frontier.Time
	// ApplyRead records a strict serializable read at t: later ones are
	// at t or after, later writes after t.
	ApplyRead(t frontier.Time)
}

// Config configures a Controller.
type Config struct {
	Log logr.Logger
	// Orchestrator provisions replicas and reports their addresses.
	Orchestrator orchestrator.Orchestrator
	// Dialer connects to replica processes; default gRPC.
	Dialer Dialer
	// LaneDialer opens peek lanes to replica processes that offer one
	// (lane.go); default PeekLaneDialer with a GRPCDialer's TLS, none
	// with another Dialer.
	LaneDialer LaneDialer
	// Storage holds tables; nil when the controller has no tables.
	Storage Storage
	// Oracle serves strict serializable reads; default the wall clock.
	Oracle Oracle
	// Now is the wall clock (load generators tick by it); default
	// time.Now.
	Now func() time.Time
	// ReadPolicyLag is how far since trails the write frontier (default 1s).
	ReadPolicyLag time.Duration
	// TickInterval is how often storage frontiers are polled (default 100ms).
	TickInterval time.Duration
	// ReconnectBackoff bounds the delay between connection attempts
	// (default 50ms doubling to 2s).
	MinReconnectBackoff, MaxReconnectBackoff time.Duration
	// Parameters are the initial system parameters sent to replicas.
	Parameters map[string]string
	// Metrics receives counters and gauges; nil disables them.
	Metrics *Metrics
	// RolloutLogInterval is how often a replica rollout waiting for a
	// replica to reconnect and hydrate logs that it still waits (default
	// 30s).
	RolloutLogInterval time.Duration
	// MaxPeekRestarts is how many times the replicas a read was sent to
	// may lose their connection (crash, be killed for memory) while the
	// read is pending before it fails instead of being re-sent once more:
	// a read whose dataflow or answer kills its replica would otherwise
	// crash-loop it forever (default 2; negative: never give up).
	MaxPeekRestarts int
	// MemoryReportTimeout bounds how long a connection to a replica of
	// several processes waits for every process's first memory report
	// before the controller replays the history (memory.go); a process
	// silent that long fails the connection, which is retried (default
	// 10s).
	MemoryReportTimeout time.Duration
}

// DefaultMaxPeekRestarts is Config.MaxPeekRestarts' default.
const DefaultMaxPeekRestarts = 2

func (c *Config) defaults() {
	if c.Dialer == nil {
		c.Dialer = GRPCDialer{}
	}
	if g, ok := c.Dialer.(GRPCDialer); ok && c.LaneDialer == nil {
		c.LaneDialer = PeekLaneDialer{TLS: g.TLS}
	}
	if c.Oracle == nil {
		c.Oracle = wallClock{}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ReadPolicyLag <= 0 {
		c.ReadPolicyLag = time.Second
	}
	if c.TickInterval <= 0 {
		c.TickInterval = 100 * time.Millisecond
	}
	if c.MinReconnectBackoff <= 0 {
		c.MinReconnectBackoff = 50 * time.Millisecond
	}
	if c.MaxReconnectBackoff <= 0 {
		c.MaxReconnectBackoff = 2 * time.Second
	}
	if c.RolloutLogInterval <= 0 {
		c.RolloutLogInterval = 30 * time.Second
	}
	if c.MaxPeekRestarts == 0 {
		c.MaxPeekRestarts = DefaultMaxPeekRestarts
	}
	if c.MemoryReportTimeout <= 0 {
		c.MemoryReportTimeout = 10 * time.Second
	}
}

type wallClock struct{}

func (wallClock) ReadTS() frontier.Time   { return frontier.Time(time.Now().UnixMilli()) }
func (wallClock) ApplyRead(frontier.Time) {}

// now is the wall clock in milliseconds.
func (c *Controller) now() frontier.Time { return frontier.Time(c.cfg.Now().UnixMilli()) }

// Controller is the compute controller of every cluster of an environment.
type Controller struct {
	cfg Config
	log logr.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu          sync.Mutex
	clusters    map[string]*cluster
	collections map[plan.GlobalID]*collection
	params      map[string]string
	// outstanding counts read holds handed out and not yet released.
	outstanding   int
	seq           uint64
	nextTransient uint64
	// compactions are table sinces waiting to be applied to storage.
	compactions map[plan.GlobalID]frontier.Time
	compactWake chan struct{}
	// rollCancel stops a replica rollout in progress.
	rollCancel context.CancelFunc
	// policiesPaused keeps read policies where they are while the
	// environment recovers (see PauseReadPolicies).
	policiesPaused bool
	// hooks are test-only sabotage switches; always zero in production.
	hooks testHooks
	// admit bounds the reads running and queued per cluster (admission.go).
	admit *admission
}

// testHooks lets tests remove one mechanism to show a test catches it.
type testHooks struct {
	skipPeekHoldRelease bool
	// skipReplicaImportHolds leaves out the per-replica holds on
	// dataflows' storage imports (replicaholds.go).
	skipReplicaImportHolds bool
}

// cluster is one compute cluster: replicas that all run the same dataflows.
type cluster struct {
	name      string
	replicas  map[string]*replica
	dataflows map[plan.GlobalID]*dataflow // by dataflow id
	peeks     map[string]*peek            // pending, by uuid
	// logging is the introspection configuration; nil when off.
	logging *loggingConfig
}

// New returns a controller. Run its background work with Start.
func New(cfg Config) *Controller {
	cfg.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	params := map[string]string{}
	for k, v := range cfg.Parameters {
		params[k] = v
	}
	return &Controller{
		cfg: cfg, log: cfg.Log, ctx: ctx, cancel: cancel,
		clusters:      map[string]*cluster{},
		collections:   map[plan.GlobalID]*collection{},
		params:        params,
		nextTransient: 1,
		compactions:   map[plan.GlobalID]frontier.Time{},
		compactWake:   make(chan struct{}, 1),
		admit:         newAdmission(params, cfg.Metrics),
	}
}

// Start runs the storage frontier poller and the table compactor until
// Close.
func (c *Controller) Start() {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			select {
			case <-c.ctx.Done():
				return
			case <-c.compactWake:
			}
			c.mu.Lock()
			todo := c.compactions
			c.compactions = map[plan.GlobalID]frontier.Time{}
			c.mu.Unlock()
			for id, t := range todo {
				if err := c.cfg.Storage.AllowCompaction(id.String(), t); err != nil {
					c.log.Error(err, "Failed to compact table", "collection", id)
				}
			}
		}
	}()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		t := time.NewTicker(c.cfg.TickInterval)
		defer t.Stop()
		for {
			select {
			case <-c.ctx.Done():
				return
			case <-t.C:
				c.tick()
			}
		}
	}()
}

// Close disconnects every replica and stops background work. It does not
// remove replicas from the orchestrator.
func (c *Controller) Close() {
	c.cancel()
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.clusters {
		for _, p := range cl.peeks {
			p.finishLocked(peekResult{err: errors.New("controller closed")})
		}
	}
}

// tick polls storage uppers and applies read policies to tables.
func (c *Controller) tick() {
	if c.cfg.Storage == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, col := range c.collections {
		if col.kind != kindStorage || col.since.IsClosed() {
			continue
		}
		_, upper, err := c.cfg.Storage.Frontiers(col.id.String())
		if err != nil {
			continue
		}
		c.advanceWriteLocked(col, upper)
	}
}

// CreateCluster creates an empty cluster.
func (c *Controller) CreateCluster(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.clusters[name]; ok {
		return fmt.Errorf("create cluster %q: %w", name, ErrExists)
	}
	c.clusters[name] = &cluster{name: name, replicas: map[string]*replica{}, dataflows: map[plan.GlobalID]*dataflow{}, peeks: map[string]*peek{}}
	return nil
}

// DropCluster disconnects and removes a cluster's replicas (through the
// orchestrator) and forgets its dataflows.
func (c *Controller) DropCluster(ctx context.Context, name string) error {
	c.mu.Lock()
	cl, ok := c.clusters[name]
	if !ok {
		c.mu.Unlock()
		return fmt.Errorf("drop cluster %q: %w", name, ErrUnknownCluster)
	}
	var names []string
	for n := range cl.replicas {
		names = append(names, n)
	}
	c.mu.Unlock()
	for _, n := range names {
		if err := c.DropReplica(ctx, name, n); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range cl.peeks {
		p.finishLocked(peekResult{err: fmt.Errorf("cluster %s dropped", name)})
	}
	for _, col := range c.collections {
		if col.introspection && col.cluster == name && !col.dropped {
			c.dropLocked(col)
		}
	}
	delete(c.clusters, name)
	return nil
}

// Clusters lists cluster names, sorted.
func (c *Controller) Clusters() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for n := range c.clusters {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (c *Controller) clusterLocked(name string) (*cluster, error) {
	cl, ok := c.clusters[name]
	if !ok {
		return nil, fmt.Errorf("cluster %q: %w", name, ErrUnknownCluster)
	}
	return cl, nil
}

// --- read holds ---

// AcquireReadHold holds collection id readable from t on.
func (c *Controller) AcquireReadHold(id plan.GlobalID, t frontier.Time) (*ReadHold, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.acquireHoldLocked(id, t)
}

func (c *Controller) acquireHoldLocked(id plan.GlobalID, t frontier.Time) (*ReadHold, error) {
	col, ok := c.collections[id]
	if !ok {
		return nil, fmt.Errorf("hold %s: %w", id, ErrUnknownCollection)
	}
	if !col.readableAt(t) {
		return nil, fmt.Errorf("hold %s at %d (since %v): %w", id, t, col.since, ErrNotReadable)
	}
	if err := col.holds.Update(t, 1); err != nil {
		return nil, fmt.Errorf("hold %s: %w", id, err)
	}
	c.outstanding++
	return &ReadHold{id: id, since: t, owner: c}, nil
}

// OutstandingReadHolds returns how many read holds are held, including
// the controller's own (read policies, dataflow inputs).
func (c *Controller) OutstandingReadHolds() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outstanding
}

func (c *Controller) releaseHold(id plan.GlobalID, since frontier.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releaseHoldLocked(id, since)
}

func (c *Controller) releaseHoldLocked(id plan.GlobalID, since frontier.Time) {
	c.outstanding--
	col, ok := c.collections[id]
	if !ok {
		return
	}
	if err := col.holds.Update(since, -1); err != nil {
		c.log.Error(err, "Released a read hold that was not held", "collection", id)
		return
	}
	c.updateSinceLocked(col)
}

func (c *Controller) downgradeHold(id plan.GlobalID, from, to frontier.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.downgradeHoldLocked(id, from, to)
}

func (c *Controller) downgradeHoldLocked(id plan.GlobalID, from, to frontier.Time) error {
	col, ok := c.collections[id]
	if !ok {
		return fmt.Errorf("downgrade hold on %s: %w", id, ErrUnknownCollection)
	}
	if err := col.holds.Update(to, 1); err != nil {
		return err
	}
	if err := col.holds.Update(from, -1); err != nil {
		return err
	}
	c.updateSinceLocked(col)
	return nil
}

// releaseLocked releases a hold from inside the controller's lock.
func (c *Controller) releaseLocked(h *ReadHold) {
	if h != nil && h.released.CompareAndSwap(false, true) {
		c.releaseHoldLocked(h.id, h.since)
	}
}

// downgradeLocked moves one of the controller's own holds forward.
func (c *Controller) downgradeLocked(h *ReadHold, t frontier.Time) {
	if h == nil || h.released.Load() || t <= h.since {
		return
	}
	if err := c.downgradeHoldLocked(h.id, h.since, t); err != nil {
		c.log.Error(err, "Failed to downgrade a read hold", "collection", h.id)
		return
	}
	h.since = t
}

// updateSinceLocked recomputes since from the holds and applies an advance:
// input holds follow, and the collection's owner is told to compact.
func (c *Controller) updateSinceLocked(col *collection) {
	next := col.holds.Frontier()
	if next.LessEqual(col.since) {
		return
	}
	col.since = next
	for _, in := range col.inputs {
		if t, ok := next.Time(); ok {
			c.downgradeLocked(in, t)
		} else {
			c.releaseLocked(in)
		}
	}
	if next.IsClosed() {
		col.inputs = nil
	}
	switch col.kind {
	case kindStorage:
		// Compaction may rewrite a shard's log: it runs outside the lock,
		// coalesced per shard, in the loop started by Start.
		if t, ok := next.Time(); ok && c.cfg.Storage != nil {
			c.compactions[col.id] = t
			select {
			case c.compactWake <- struct{}{}:
			default:
			}
		}
	case kindCompute:
		cl := c.clusters[col.cluster]
		if cl == nil {
			break
		}
		if next.IsClosed() && col.dataflow != nil {
			c.maybeReleaseDroppedDataflowLocked(cl, col.dataflow)
		}
		cmd := &computepb.Command{Kind: &computepb.Command_AllowCompaction{AllowCompaction: &computepb.AllowCompaction{
			Id: protocol.GlobalIDToProto(col.id), Frontier: protocol.FrontierToProto(next),
		}}}
		for _, r := range cl.replicas {
			r.sendLocked(cmd)
		}
	}
	if next.IsClosed() {
		c.maybeRemoveLocked(col)
	}
}

// advanceWriteLocked joins a reported write frontier into the collection's
// and lets the read policy follow.
func (c *Controller) advanceWriteLocked(col *collection, write frontier.Frontier) {
	if write.LessEqual(col.write) {
		return
	}
	col.write = write
	if col.policy != nil && !c.policiesPaused {
		c.downgradeLocked(col.policy, col.policyTarget())
	}
}

// maybeRemoveLocked forgets a collection once it is dropped, unheld, and
// no connected replica still reports it open.
func (c *Controller) maybeRemoveLocked(col *collection) {
	if !col.dropped || !col.since.IsClosed() {
		return
	}
	if col.kind == kindCompute {
		if cl := c.clusters[col.cluster]; cl != nil {
			for _, r := range cl.replicas {
				if r.reportsOpenLocked(col.id) {
					return
				}
			}
			if df := col.dataflow; df != nil {
				// The dataflow goes once all of its exports are gone.
				gone := true
				for _, e := range df.desc.exports() {
					if o, ok := c.collections[e]; ok && o != col {
						gone = false
					}
				}
				if gone {
					delete(cl.dataflows, df.desc.ID)
					for _, r := range cl.replicas {
						delete(r.admitted, df.desc.ID)
					}
				}
			}
		}
	}
	delete(c.collections, col.id)
	c.forgetRefusalsLocked(col)
	if c.cfg.Metrics != nil {
		c.cfg.Metrics.collections.Set(float64(len(c.collections)))
	}
}
