package sharing

import (
	"context"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Import is a reader's side of a point: a dataflow or peek on the reading
// runtime that reads the publisher's arrangement.
type Import struct {
	p *Point
}

// Import returns the point for k, creating an empty placeholder when the
// publisher has not published it yet.
func (r *Registry) Import(k Key) *Import { return &Import{p: r.point(k)} }

// Point returns the imported point.
func (im *Import) Point() *Point { return im.p }

// Snapshot returns the current published state, lock-free.
func (im *Import) Snapshot() *Snapshot { return im.p.Snapshot() }

// OnChange registers fn to run after every publication (typically: activate
// the reading worker). It returns a function that unregisters it.
func (im *Import) OnChange(fn func()) (cancel func()) {
	p := im.p
	p.mu.Lock()
	defer p.mu.Unlock()
	id := p.nextID
	p.nextID++
	p.listeners[id] = fn
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.listeners, id)
	}
}

// ReaderHold is a logical hold a reader keeps on a published arrangement.
// It must be released.
type ReaderHold struct {
	p        *Point
	at       frontier.Time
	released bool
}

// Hold registers a reader hold at t. It fails with ErrCompacted when t is
// below the floor the point has already let the publisher compact to.
func (im *Import) Hold(t frontier.Time) (*ReaderHold, error) {
	p := im.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.applied.LessEqualTime(t) {
		return nil, fmt.Errorf("hold %s at %d (floor %v): %w", p.key, t, p.applied, ErrCompacted)
	}
	if err := p.readers.Update(t, 1); err != nil {
		return nil, err
	}
	return &ReaderHold{p: p, at: t}, nil
}

// Release drops the hold; the publisher may then compact past it. It is
// idempotent.
func (h *ReaderHold) Release() error {
	p := h.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if h.released {
		return nil
	}
	h.released = true
	if err := p.readers.Update(h.at, -1); err != nil {
		return err
	}
	return p.applyLocked()
}

// Wait blocks until the point is published and sealed at t, then returns that
// snapshot. It fails with ErrDropped if the publisher closes, ErrCompacted if
// the published since passed t, or the context's error. It never polls: it
// sleeps on the point's change channel.
func (im *Import) Wait(ctx context.Context, t frontier.Time) (*Snapshot, error) {
	p := im.p
	for {
		p.mu.Lock()
		ch := p.changed
		p.mu.Unlock()
		s := p.snap.Load()
		switch {
		case s.Dropped:
			return nil, fmt.Errorf("read %s at %d: %w", p.key, t, ErrDropped)
		case s.Published && !s.Since.LessEqualTime(t):
			return nil, fmt.Errorf("read %s at %d (since %v): %w", p.key, t, s.Since, ErrCompacted)
		case s.Sealed(t):
			return s, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("read %s at %d: %w", p.key, t, ctx.Err())
		}
	}
}

// Follower is a live reader's hold on a published arrangement at its
// cursor. It keeps the publisher's since at or below the cursor, so every
// update at or beyond it keeps its time, and (the shared handle's physical
// frontier follows its logical one) a batch boundary at the cursor, so the
// batches published after it can be read on their own, without walking
// merged batches that mix what the reader already read with what it has
// not. It advances as the reader moves on and must be released.
type Follower struct {
	p        *Point
	at       frontier.Time
	released bool
}

// Follow registers a live reader at t. It fails with ErrCompacted when t is
// below the floor the point has already let the publisher compact to.
func (im *Import) Follow(t frontier.Time) (*Follower, error) {
	p := im.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.applied.LessEqualTime(t) {
		return nil, fmt.Errorf("follow %s from %d (floor %v): %w", p.key, t, p.applied, ErrCompacted)
	}
	if err := p.readers.Update(t, 1); err != nil {
		return nil, err
	}
	return &Follower{p: p, at: t}, nil
}

// At returns the follower's cursor.
func (f *Follower) At() frontier.Time { return f.at }

// Advance moves the follower's holds forward to t (never back); a closed
// frontier releases them. The publisher may then compact and merge up to
// the new cursor.
func (f *Follower) Advance(to frontier.Frontier) error {
	t, ok := to.Time()
	if !ok {
		return f.Release()
	}
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.released || t <= f.at {
		return nil
	}
	if err := p.readers.Update(t, 1); err != nil {
		return err
	}
	if err := p.readers.Update(f.at, -1); err != nil {
		return err
	}
	f.at = t
	return p.applyLocked()
}

// Release drops the follower's holds. It is idempotent.
func (f *Follower) Release() error {
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.released {
		return nil
	}
	f.released = true
	if err := p.readers.Update(f.at, -1); err != nil {
		return err
	}
	return p.applyLocked()
}
