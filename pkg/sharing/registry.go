package sharing

import (
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Key names one publication point. ID is the canonical GlobalId string
// ("u12", "s3", "t7").
type Key struct {
	ID          string
	Worker      int
	Incarnation uint64
	// Errors selects the index's error arrangement instead of its rows.
	Errors bool
}

func (k Key) String() string {
	s := fmt.Sprintf("%s/w%d/i%d", k.ID, k.Worker, k.Incarnation)
	if k.Errors {
		s += "/errs"
	}
	return s
}

// Registry is the per-process table of publication points. It is safe for
// concurrent use by every worker of both runtimes.
type Registry struct {
	mu     sync.Mutex
	points map[Key]weak.Pointer[Point]
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{points: map[Key]weak.Pointer[Point]{}}
}

// point returns the live point for k, creating a placeholder if there is none.
func (r *Registry) point(k Key) *Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	if wp, ok := r.points[k]; ok {
		if p := wp.Value(); p != nil {
			return p
		}
	}
	p := newPoint(k)
	r.points[k] = weak.Make(p)
	runtime.AddCleanup(p, r.forget, k)
	return p
}

// forget removes k's slot if its point has been collected. A new point may
// already live under k; then the slot stays.
func (r *Registry) forget(k Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if wp, ok := r.points[k]; ok && wp.Value() == nil {
		delete(r.points, k)
	}
}

// Len returns the number of slots, including ones whose point awaits
// collection. For tests and introspection.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.points)
}

// live returns strong references to every live point, taken under the
// registry lock, so callers can inspect points without holding it.
func (r *Registry) live() []*Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	ps := make([]*Point, 0, len(r.points))
	for _, wp := range r.points {
		if p := wp.Value(); p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// HoldGap summarises how far readers hold back compaction of what one
// publisher role publishes.
type HoldGap struct {
	// MaxGapMillis is the largest (requested since - applied since) over
	// the points, in milliseconds.
	MaxGapMillis uint64
	// Held is the number of points with a non-zero gap.
	Held int
	// Published is the number of live published points of the role.
	Published int
}

// HoldGaps computes the hold gap over the points published by publishers
// tagged role. It takes the registry lock only to list points, then each
// point's lock once to read a consistent (requested, applied) pair.
func (r *Registry) HoldGaps(role string) HoldGap {
	var g HoldGap
	for _, p := range r.live() {
		gap, ok := p.holdGap(role)
		if !ok {
			continue
		}
		g.Published++
		if gap > 0 {
			g.Held++
			g.MaxGapMillis = max(g.MaxGapMillis, gap)
		}
	}
	return g
}

// gapBetween returns requested - applied in milliseconds when requested is
// ahead; closed frontiers (a dropping index) count as no gap.
func gapBetween(requested, applied frontier.Frontier) uint64 {
	rt, rok := requested.Time()
	at, aok := applied.Time()
	if !rok || !aok || rt <= at {
		return 0
	}
	return uint64(rt - at)
}
