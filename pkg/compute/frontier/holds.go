package frontier

import (
	"fmt"
	"sort"
)

// Holds is a counted multiset of times; its frontier is the least time with a
// positive count, or closed when empty. It is not safe for concurrent use.
type Holds struct {
	counts map[Time]int64
	// min caches the least time with a positive count; valid when !dirty.
	min   Frontier
	dirty bool
}

// NewHolds returns an empty multiset (frontier closed).
func NewHolds() *Holds { return &Holds{counts: map[Time]int64{}, min: Closed()} }

// Update adds delta to the count of t. Counts may not go negative.
func (h *Holds) Update(t Time, delta int64) error {
	if delta == 0 {
		return nil
	}
	if h.counts == nil {
		h.counts = map[Time]int64{}
	}
	c := h.counts[t] + delta
	if c < 0 {
		return fmt.Errorf("holds: count of time %d would go negative (%d)", t, c)
	}
	if c == 0 {
		delete(h.counts, t)
	} else {
		h.counts[t] = c
	}
	h.dirty = true
	return nil
}

// Frontier returns the least time held, or closed when nothing is held.
func (h *Holds) Frontier() Frontier {
	if !h.dirty && h.counts != nil {
		return h.min
	}
	f := Closed()
	for t := range h.counts {
		if f.LessEqualTime(t) {
			continue
		}
		f = At(t)
	}
	h.min, h.dirty = f, false
	return f
}

// Len returns the number of holds (sum of counts).
func (h *Holds) Len() int64 {
	var n int64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// Times returns the held times in ascending order, for debugging and tests.
func (h *Holds) Times() []Time {
	ts := make([]Time, 0, len(h.counts))
	for t := range h.counts {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts
}
