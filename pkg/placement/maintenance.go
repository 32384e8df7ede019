package placement

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/trace"
	"github.com/tandemdb/tandem/pkg/sharing"
)

// Maintenance wraps the maintenance runtime of a two-runtime process: it
// renders every dataflow that is not OneShotRead, and publishes the index
// exports it builds into the registry (it is the runtime's Publisher).
type Maintenance struct {
	inner runtime.Commands
	reg   *sharing.Registry
	incs  Incarnations

	mu sync.Mutex // guards current and peers
	// current is the incarnation the workers publish under, read when a
	// worker builds the export.
	current map[plan.GlobalID]uint64
	peers   map[plan.GlobalID]bool
}

// NewMaintenance returns the wrapper around the runtime newInner
// builds. The runtime publishes through the wrapper (its Publisher), so
// the wrapper exists first and hands itself to newInner; the runtime must
// not publish before NewMaintenance returns (it is not started yet).
func NewMaintenance(reg *sharing.Registry, newInner func(pub runtime.Publisher) (runtime.Commands, error)) (*Maintenance, error) {
	x := &Maintenance{reg: reg, current: map[plan.GlobalID]uint64{}, peers: map[plan.GlobalID]bool{}}
	inner, err := newInner(x)
	if err != nil {
		return nil, err
	}
	x.inner = inner
	return x, nil
}

// CreateDataflow renders Maintained dataflows; OneShotRead and LiveRead
// exports and sinks are recorded as peers (the interactive runtime renders
// them).
func (x *Maintenance) CreateDataflow(desc plan.DataflowDescription) error {
	if !Renders(runtime.Maintenance, desc.Class) {
		x.mu.Lock()
		for _, e := range desc.IndexExports {
			x.peers[e.ID] = true
		}
		for _, s := range desc.SubscribeSinks {
			x.peers[s.ID] = true
		}
		x.mu.Unlock()
		return nil
	}
	for _, e := range desc.IndexExports {
		inc := x.incs.Next(e.ID)
		x.mu.Lock()
		x.current[e.ID] = inc
		x.mu.Unlock()
	}
	return x.inner.CreateDataflow(desc)
}

// AllowCompaction forwards compaction of what this runtime renders and
// forgets dropped peers.
func (x *Maintenance) AllowCompaction(id plan.GlobalID, f frontier.Frontier) error {
	x.mu.Lock()
	peer := x.peers[id]
	if peer && f.IsClosed() {
		delete(x.peers, id)
	}
	x.mu.Unlock()
	if peer {
		return nil
	}
	return x.inner.AllowCompaction(id, f)
}

// UpdateConfiguration forwards.
func (x *Maintenance) UpdateConfiguration(params map[string]string) error {
	return x.inner.UpdateConfiguration(params)
}

// Peek forwards.
func (x *Maintenance) Peek(p runtime.Peek) { x.inner.Peek(p) }

// CancelPeek forwards.
func (x *Maintenance) CancelPeek(uuid string) { x.inner.CancelPeek(uuid) }

// ForeignPeekStarted implements PeekLog by forwarding to the runtime, if it
// logs peeks.
func (x *Maintenance) ForeignPeekStarted(p runtime.Peek) {
	if pl, ok := x.inner.(PeekLog); ok {
		pl.ForeignPeekStarted(p)
	}
}

// ForeignPeekFinished implements PeekLog like ForeignPeekStarted.
func (x *Maintenance) ForeignPeekFinished(uuid string, d time.Duration) {
	if pl, ok := x.inner.(PeekLog); ok {
		pl.ForeignPeekFinished(uuid, d)
	}
}

// Publish implements runtime.Publisher: worker (a global worker index)
// built its shard of index export id.
func (x *Maintenance) Publish(id plan.GlobalID, worker int, ok, errs *trace.Trace) (runtime.Publication, error) {
	x.mu.Lock()
	inc := x.current[id]
	x.mu.Unlock()
	key := sharing.Key{ID: id.String(), Worker: worker, Incarnation: inc}
	okPub, err := x.reg.Publish(key, runtime.Maintenance.String(), ok)
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", key, err)
	}
	key.Errors = true
	errPub, err := x.reg.Publish(key, runtime.Maintenance.String(), errs)
	if err != nil {
		okPub.Close()
		return nil, fmt.Errorf("publish %s: %w", key, err)
	}
	return &publication{pubs: [2]*sharing.Publication{okPub, errPub}}, nil
}

// publication publishes an index's ok and error arrangements together.
type publication struct{ pubs [2]*sharing.Publication }

func (p *publication) Refresh() error {
	return errors.Join(p.pubs[0].Refresh(), p.pubs[1].Refresh())
}

func (p *publication) Compact(f frontier.Frontier) error {
	return errors.Join(p.pubs[0].Compact(f), p.pubs[1].Compact(f))
}

func (p *publication) Close() {
	p.pubs[0].Close()
	p.pubs[1].Close()
}
