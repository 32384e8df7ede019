package runtime

import (
	"sync"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// collectionFrontiers are one collection's frontiers as a process reports
// them.
type collectionFrontiers struct {
	Write, Input, Output frontier.Frontier
}

// frontierTracker merges the per-worker frontiers of each collection into
// the process's report: the meet over its local workers, never below the
// collection's as_of, and never regressing (a report is produced only when
// some frontier strictly advances).
type frontierTracker[K comparable] struct {
	mu      sync.Mutex
	workers int
	byID    map[K]*trackedCollection
}

type trackedCollection struct {
	asOf     frontier.Frontier
	write    []frontier.Frontier
	input    []frontier.Frontier
	reported collectionFrontiers
	first    bool
}

func newFrontierTracker[K comparable](workers int) *frontierTracker[K] {
	return &frontierTracker[K]{workers: workers, byID: map[K]*trackedCollection{}}
}

// add starts tracking id; its first report will not be below asOf.
func (t *frontierTracker[K]) add(id K, asOf frontier.Frontier) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &trackedCollection{asOf: asOf, first: true,
		write: make([]frontier.Frontier, t.workers), input: make([]frontier.Frontier, t.workers)}
	t.byID[id] = c
}

// update records worker's frontiers for id and returns the process report if
// it advanced, after passing it to emit (if non-nil) while still holding the
// tracker's lock: reports of one collection reach emit in the order they
// were computed, so concurrent workers cannot reorder them. Updates for
// untracked (dropped) ids are ignored.
func (t *frontierTracker[K]) update(id K, worker int, write, input frontier.Frontier, emit func(collectionFrontiers)) (collectionFrontiers, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.byID[id]
	if c == nil || worker < 0 || worker >= t.workers {
		return collectionFrontiers{}, false
	}
	c.write[worker] = frontier.Join(c.write[worker], write)
	c.input[worker] = frontier.Join(c.input[worker], input)
	w, in := frontier.Closed(), frontier.Closed()
	for i := range c.write {
		w = frontier.Meet(w, c.write[i])
		in = frontier.Meet(in, c.input[i])
	}
	next := collectionFrontiers{Write: frontier.Join(w, c.asOf), Input: frontier.Join(in, c.asOf)}
	next.Output = next.Write
	if !c.first && next == c.reported {
		return collectionFrontiers{}, false
	}
	// Join with the last report keeps every component monotone even if the
	// as_of clamp and the meet interact oddly.
	if !c.first {
		next.Write = frontier.Join(next.Write, c.reported.Write)
		next.Input = frontier.Join(next.Input, c.reported.Input)
		next.Output = frontier.Join(next.Output, c.reported.Output)
		if next == c.reported {
			return collectionFrontiers{}, false
		}
	}
	c.first = false
	c.reported = next
	if emit != nil {
		emit(next)
	}
	return next, true
}

// remove stops tracking id and, if it was tracked, passes emit (under the
// lock, after every earlier report) the closed frontiers.
func (t *frontierTracker[K]) remove(id K, emit func(collectionFrontiers)) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.byID[id]
	delete(t.byID, id)
	closed := collectionFrontiers{Write: frontier.Closed(), Input: frontier.Closed(), Output: frontier.Closed()}
	if ok && emit != nil && (c.first || c.reported != closed) {
		emit(closed)
	}
	return ok
}
