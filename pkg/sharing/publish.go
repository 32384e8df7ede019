package sharing

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// Publication is the publisher's side of a point. It is used by the one
// worker goroutine that owns the trace.
type Publication struct {
	reg *Registry
	p   *Point
}

// Publish makes tr the arrangement behind k, adopting a placeholder if a
// reader imported k first. role tags the publisher for HoldGaps. The point
// takes a shared handle on tr, seeded at the standing hold if one was
// recorded, else at tr's since: the controller offers no as_of below a
// collection's since, so no reader can need less.
func (r *Registry) Publish(k Key, role string, tr *trace.Trace) (*Publication, error) {
	p := r.point(k)
	p.mu.Lock()
	fns, err := p.adoptLocked(role, tr)
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	runAll(fns)
	return &Publication{reg: r, p: p}, nil
}

func (p *Point) adoptLocked(role string, tr *trace.Trace) ([]func(), error) {
	if p.tr != nil {
		return nil, fmt.Errorf("publish %s: %w", p.key, ErrAlreadyPublished)
	}
	since := tr.Since()
	seed := frontier.Join(since, frontier.Meet(p.standing, p.readers.Frontier()))
	if seed.IsClosed() {
		seed = since
	}
	h := tr.NewHandle("sharing " + p.key.String())
	if err := h.SetLogical(seed); err != nil {
		h.Release()
		return nil, fmt.Errorf("publish %s: seed shared hold: %w", p.key, err)
	}
	p.tr, p.shared, p.role = tr, h, role
	p.applied, p.requested = seed, seed
	_, p.appliedPhysical = h.Frontiers()
	if p.standing.Less(seed) {
		p.standing = seed
	}
	if err := p.applyPhysicalLocked(); err != nil {
		h.Release()
		p.tr, p.shared, p.role = nil, nil, ""
		return nil, fmt.Errorf("publish %s: %w", p.key, err)
	}
	return p.notifyLocked(p.snapshotLocked()), nil
}

func (p *Point) snapshotLocked() *Snapshot {
	s := p.tr.Snapshot()
	return &Snapshot{Batches: s.Batches, Since: s.Since, Upper: s.Upper, Published: true}
}

// Point returns the publication's point.
func (pub *Publication) Point() *Point { return pub.p }

// Compact records the since the publisher's own handles ask for (the
// AllowCompaction frontier it applied) and advances the shared hold as far
// as the readers and the standing hold allow. The publisher's own handle is
// advanced by the caller; the trace compacts to the meet of both.
func (pub *Publication) Compact(requested frontier.Frontier) error {
	p := pub.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.requested.Less(requested) {
		p.requested = requested
	}
	return p.applyLocked()
}

// Refresh publishes the trace's current chain, since and upper. The
// publisher calls it after every change (insert, merge, compaction). It
// returns an error if the trace's since passed the standing hold, which
// would break I1c.
func (pub *Publication) Refresh() error {
	p := pub.p
	p.mu.Lock()
	if err := p.applyLocked(); err != nil {
		p.mu.Unlock()
		return err
	}
	s := p.snapshotLocked()
	var err error
	if p.standing.Less(s.Since) {
		err = fmt.Errorf("sharing: I1c violated on %s: since %v passed standing hold %v", p.key, s.Since, p.standing)
	}
	fns := p.notifyLocked(s)
	p.mu.Unlock()
	runAll(fns)
	return err
}

// Close marks the index dropped, releases the shared hold and wakes every
// waiter, which then fails with ErrDropped.
func (pub *Publication) Close() {
	p := pub.p
	p.mu.Lock()
	if p.shared != nil {
		p.shared.Release()
		p.shared = nil
	}
	prev := p.snap.Load()
	fns := p.notifyLocked(&Snapshot{Batches: prev.Batches, Since: prev.Since, Upper: prev.Upper, Published: true, Dropped: true})
	p.mu.Unlock()
	runAll(fns)
}
