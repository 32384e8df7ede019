package placement

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/logging"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

// Multiplexer fronts the maintenance and interactive runtimes of one
// process with a single command/response interface. Safe for concurrent
// use; commands must be issued from one goroutine (the controller stream)
// so that both runtimes see them in the same order.
type Multiplexer struct {
	rts     map[runtime.Role]runtime.Commands // runtime.Maintenance and runtime.Interactive
	respond func(runtime.Response)

	mu      sync.Mutex
	owner   map[plan.GlobalID]runtime.Role // renderer of each export
	peeks   map[string]routedPeek          // pending peek uuid -> serving runtime
	peekLog PeekLog                        // nil: interactive peeks are not logged
	now     func() time.Time
	policy  Policy
	sealed  SealedFunc
	counts  map[runtime.Role]uint64 // peeks routed per runtime, for the routing note
	dropped uint64                  // responses suppressed (non-owner frontiers, duplicates)
	// unfiltered disables response filtering; only tests set it, to show
	// that the invariant tests fail without the filter.
	unfiltered bool
}

// Runtimes are the two runtimes a Multiplexer fronts.
type Runtimes struct {
	Maintenance, Interactive runtime.Commands
	// Sealed is RouteSealedHint's hint, normally the Interactive wrapper's
	// Sealed; nil: never sealed (RouteSealedHint then routes like
	// RouteMaintenance).
	Sealed SealedFunc
}

// NewMultiplexer returns a multiplexer over the two runtimes build
// returns; respond gets the merged responses. Each runtime needs its
// Respond callback before it exists, so the multiplexer exists first and
// build gets respondFor (ResponderFor) to give each runtime the callback
// of its role. If the maintenance runtime is a PeekLog, the interactive
// runtime's peeks are logged there. The runtimes must not answer before
// NewMultiplexer returns (they are not started yet).
func NewMultiplexer(respond func(runtime.Response), policy Policy, build func(respondFor func(runtime.Role) func(runtime.Response)) (Runtimes, error)) (*Multiplexer, error) {
	m := &Multiplexer{
		respond: respond,
		owner:   map[plan.GlobalID]runtime.Role{},
		counts:  map[runtime.Role]uint64{},
		peeks:   map[string]routedPeek{},
		now:     time.Now,
		policy:  policy,
	}
	rts, err := build(m.ResponderFor)
	if err != nil {
		return nil, err
	}
	m.rts = map[runtime.Role]runtime.Commands{runtime.Maintenance: rts.Maintenance, runtime.Interactive: rts.Interactive}
	m.sealed = rts.Sealed
	if pl, ok := rts.Maintenance.(PeekLog); ok {
		m.peekLog = pl
	}
	return m, nil
}

// PeekLog is where the interactive runtime's peeks are logged: the
// interactive runtime keeps no logging of its own, so the maintenance
// runtime's introspection (active peeks, peek durations) records them for
// the process (*runtime.Runtime implements it, and Maintenance forwards it).
type PeekLog interface {
	ForeignPeekStarted(p runtime.Peek)
	ForeignPeekFinished(uuid string, d time.Duration)
}

type routedPeek struct {
	rt    runtime.Role
	start time.Time
}

// SetPolicy changes peek routing at once (a system parameter).
func (m *Multiplexer) SetPolicy(p Policy) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.policy = p
}

// Routed returns how many peeks each runtime was given.
func (m *Multiplexer) Routed() (maintenance, interactive uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[runtime.Maintenance], m.counts[runtime.Interactive]
}

// CreateDataflow records which runtime renders the dataflow's exports and
// forwards it to both runtimes, maintenance first. The runtime that does not
// render it records its exports as peers. An error from either is returned
// (both are attempted, so their peer bookkeeping stays aligned).
func (m *Multiplexer) CreateDataflow(desc plan.DataflowDescription) error {
	owner := runtime.Maintenance
	if Renders(runtime.Interactive, desc.Class) {
		owner = runtime.Interactive
	}
	m.mu.Lock()
	for _, e := range desc.IndexExports {
		m.owner[e.ID] = owner
	}
	for _, s := range desc.SubscribeSinks {
		m.owner[s.ID] = owner
	}
	m.mu.Unlock()
	return errors.Join(m.rts[runtime.Maintenance].CreateDataflow(desc), m.rts[runtime.Interactive].CreateDataflow(desc))
}

// AllowCompaction goes to both runtimes: the renderer applies it, the other
// advances its standing hold (I1c).
func (m *Multiplexer) AllowCompaction(id plan.GlobalID, f frontier.Frontier) error {
	// The owner entry stays until the closed frontier report passes admit.
	return errors.Join(m.rts[runtime.Maintenance].AllowCompaction(id, f), m.rts[runtime.Interactive].AllowCompaction(id, f))
}

// UpdateConfiguration goes to both runtimes.
func (m *Multiplexer) UpdateConfiguration(params map[string]string) error {
	if v, ok := params["peek_routing"]; ok {
		p, err := ParsePolicy(v)
		if err != nil {
			return err
		}
		m.SetPolicy(p)
	}
	return errors.Join(m.rts[runtime.Maintenance].UpdateConfiguration(params), m.rts[runtime.Interactive].UpdateConfiguration(params))
}

// Peek sends the peek to exactly one runtime: the renderer of a one-shot
// index, or the routing policy's pick for a maintained index.
func (m *Multiplexer) Peek(p runtime.Peek) {
	m.mu.Lock()
	rt, ok := m.owner[p.Target]
	if !ok || rt == runtime.Maintenance {
		rt = Route(m.policy, p.Target, p.Timestamp, m.sealed)
	}
	if _, dup := m.peeks[p.UUID]; dup {
		m.mu.Unlock()
		m.respond(&runtime.PeekResponse{UUID: p.UUID, Error: fmt.Errorf("peek %s: duplicate uuid", p.UUID)})
		return
	}
	m.peeks[p.UUID] = routedPeek{rt: rt, start: m.now()}
	m.counts[rt]++
	log := m.peekLog
	m.mu.Unlock()
	if rt == runtime.Interactive && log != nil {
		// Logged before the runtime sees the peek, so that its finish
		// (which may come at once) always follows its start.
		log.ForeignPeekStarted(p)
	}
	m.rts[rt].Peek(p)
}

// CancelPeek goes to the runtime serving the peek.
func (m *Multiplexer) CancelPeek(uuid string) {
	m.mu.Lock()
	rp, ok := m.peeks[uuid]
	m.mu.Unlock()
	if ok {
		m.rts[rp.rt].CancelPeek(uuid)
	}
}

// ResponderFor returns the Respond callback for the runtime rt.
func (m *Multiplexer) ResponderFor(rt runtime.Role) func(runtime.Response) {
	return func(resp runtime.Response) {
		ok, finished := m.admit(rt, resp)
		if finished != nil {
			finished()
		}
		if ok {
			m.respond(resp)
		}
	}
}

// admit decides whether a response from rt leaves the process; finished,
// if not nil, logs the end of an interactive peek (called outside the
// lock).
func (m *Multiplexer) admit(rt runtime.Role, resp runtime.Response) (admitted bool, finished func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ok bool
	switch r := resp.(type) {
	case *runtime.Frontiers:
		ok = m.ownerLocked(r.ID) == rt
		if ok && r.Write.IsClosed() && r.Output.IsClosed() {
			delete(m.owner, r.ID)
		}
	case *runtime.SubscribeResponse:
		ok = m.ownerLocked(r.ID) == rt
	case *runtime.PeekResponse:
		serving, pending := m.peeks[r.UUID]
		ok = pending && serving.rt == rt
		if ok {
			delete(m.peeks, r.UUID)
			if log := m.peekLog; log != nil && rt == runtime.Interactive {
				uuid, d := r.UUID, m.now().Sub(serving.start)
				finished = func() { log.ForeignPeekFinished(uuid, d) }
			}
		}
	default:
		ok = rt == runtime.Maintenance
	}
	if !ok {
		m.dropped++
	}
	return ok || m.unfiltered, finished
}

// ownerLocked returns the renderer of id; ids no dataflow exported (the
// introspection collections of CreateInstance) belong to maintenance.
func (m *Multiplexer) ownerLocked(id plan.GlobalID) runtime.Role {
	if rt, ok := m.owner[id]; ok {
		return rt
	}
	return runtime.Maintenance
}

// EnableIntrospection builds the introspection dataflows through the
// multiplexer like any Maintained dataflow: maintenance renders and
// publishes them, the interactive runtime records them as peers, so
// introspection reads are served from maintenance's published copies and
// never wait behind a maintenance step. The interactive runtime keeps no
// logging of its own.
func (m *Multiplexer) EnableIntrospection(ids map[logging.Relation]plan.GlobalID, interval time.Duration, asOf frontier.Frontier) error {
	descs, err := logging.Dataflows(ids, interval, asOf)
	if err != nil {
		return err
	}
	var errs []error
	for _, desc := range descs {
		desc.Class = plan.ClassMaintained
		errs = append(errs, m.CreateDataflow(desc))
	}
	return errors.Join(errs...)
}
