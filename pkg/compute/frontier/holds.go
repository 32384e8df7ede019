package frontier

import (
	"fmt"
	"slices"
)

// Holds is a counted multiset of times; its frontier is the least time with a
// positive count, or closed when empty. It is not safe for concurrent use.
//
// Every operation is O(log distinct times) amortized, independent of how
// many holds are outstanding: the times held are kept in a min-heap beside
// their counts, and a time whose count fell to zero stays in the heap
// (stale) until it reaches the top or the heap is rebuilt, which happens
// once stale entries outnumber live ones.
type Holds struct {
	counts map[Time]int64
	// times holds every time with a positive count, and stale ones.
	times timeHeap
	// total is the sum of counts.
	total int64
	// ops counts heap steps (pushes, pops, rebuilt entries), for tests
	// of the cost per update.
	ops int64
}

// NewHolds returns an empty multiset (frontier closed).
func NewHolds() *Holds { return &Holds{counts: map[Time]int64{}} }

// Update adds delta to the count of t. Counts may not go negative.
func (h *Holds) Update(t Time, delta int64) error {
	if delta == 0 {
		return nil
	}
	if h.counts == nil {
		h.counts = map[Time]int64{}
	}
	old := h.counts[t]
	c := old + delta
	if c < 0 {
		return fmt.Errorf("holds: count of time %d would go negative (%d)", t, c)
	}
	h.total += delta
	switch {
	case c == 0:
		delete(h.counts, t)
		h.popStale()
		if len(h.times) > 2*len(h.counts)+8 {
			h.rebuild()
		}
	case old == 0:
		h.counts[t] = c
		h.times.push(t)
		h.ops++
	default:
		h.counts[t] = c
	}
	return nil
}

// popStale drops times with no holds from the heap's top, so that its top
// is the least time held.
func (h *Holds) popStale() {
	for len(h.times) > 0 && h.counts[h.times[0]] == 0 {
		h.times.pop()
		h.ops++
	}
}

// rebuild makes the heap hold exactly the times held.
func (h *Holds) rebuild() {
	h.times = h.times[:0]
	for t := range h.counts {
		h.times = append(h.times, t)
	}
	slices.Sort(h.times) // a sorted slice is a heap
	h.ops += int64(len(h.times))
}

// Frontier returns the least time held, or closed when nothing is held.
func (h *Holds) Frontier() Frontier {
	if len(h.times) == 0 {
		return Closed()
	}
	return At(h.times[0])
}

// Len returns the number of holds (sum of counts).
func (h *Holds) Len() int64 { return h.total }

// Ops returns how many heap steps the updates so far took.
func (h *Holds) Ops() int64 { return h.ops }

// Times returns the held times in ascending order, for debugging and tests.
func (h *Holds) Times() []Time {
	ts := make([]Time, 0, len(h.counts))
	for t := range h.counts {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// timeHeap is a binary min-heap of times.
type timeHeap []Time

func (th *timeHeap) push(t Time) {
	*th = append(*th, t)
	a := *th
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p] <= a[i] {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (th *timeHeap) pop() {
	a := *th
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		l, least := 2*i+1, i
		if l < n && a[l] < a[least] {
			least = l
		}
		if r := l + 1; r < n && a[r] < a[least] {
			least = r
		}
		if least == i {
			break
		}
		a[i], a[least] = a[least], a[i]
		i = least
	}
	*th = a
}
