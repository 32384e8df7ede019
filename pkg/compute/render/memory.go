package render

import (
	"fmt"
	"sync"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// MemoryTable is an in-memory collection that tests append to and advance;
// sources opened on it shard its rows across workers by row hash, so every
// update is produced by exactly one worker of the (possibly multi-process)
// runtime. It is safe for concurrent use and may be shared by several
// runtimes in one test process.
type MemoryTable struct {
	mu        sync.Mutex
	log       []dataflow.Update
	upper     frontier.Frontier
	listeners map[*memorySource]struct{}
}

// NewMemoryTable returns an empty table with upper [0].
func NewMemoryTable() *MemoryTable {
	return &MemoryTable{upper: frontier.Minimum(), listeners: map[*memorySource]struct{}{}}
}

// Append adds updates (rows with times at or beyond the current upper) and
// then advances the upper to `upper` (which may not regress).
func (m *MemoryTable) Append(ups []dataflow.Update, upper frontier.Frontier) error {
	m.mu.Lock()
	for _, u := range ups {
		if !m.upper.LessEqualTime(u.Time) {
			m.mu.Unlock()
			return fmt.Errorf("memory table: update at %d is before the upper %v", u.Time, m.upper)
		}
	}
	if !m.upper.LessEqual(upper) {
		m.mu.Unlock()
		return fmt.Errorf("memory table: upper %v would regress from %v", upper, m.upper)
	}
	for _, u := range ups {
		m.log = append(m.log, dataflow.Update{Val: append([]byte(nil), u.Val...), Time: u.Time, Diff: u.Diff})
	}
	m.upper = upper
	acts := make([]func(), 0, len(m.listeners))
	for s := range m.listeners {
		acts = append(acts, s.activate)
	}
	m.mu.Unlock()
	for _, a := range acts {
		a()
	}
	return nil
}

// Upper returns the table's upper.
func (m *MemoryTable) Upper() frontier.Frontier {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.upper
}

// Open returns one worker's source over the table.
func (m *MemoryTable) Open(ctx SourceContext) (Source, error) {
	s := &memorySource{table: m, worker: uint64(ctx.Worker), peers: uint64(ctx.Peers), activate: ctx.Activate}
	m.mu.Lock()
	m.listeners[s] = struct{}{}
	m.mu.Unlock()
	return s, nil
}

type memorySource struct {
	table         *MemoryTable
	next          int // index of the first log entry not yet examined
	worker, peers uint64
	activate      func()
	held          []dataflow.Update // examined, at or beyond the last upper
}

// Poll implements Source: it returns the worker's share of the log before
// the table's upper; later-timed updates wait for the upper to pass them.
func (s *memorySource) Poll(dst []dataflow.Update) ([]dataflow.Update, frontier.Frontier, error) {
	m := s.table
	m.mu.Lock()
	upper := m.upper
	fresh := m.log[s.next:]
	s.next = len(m.log)
	m.mu.Unlock()
	for _, u := range fresh {
		if row.Hash(u.Val)%s.peers == s.worker {
			s.held = append(s.held, u)
		}
	}
	keep := s.held[:0]
	for _, u := range s.held {
		if upper.LessEqualTime(u.Time) {
			keep = append(keep, u)
		} else {
			dst = append(dst, u)
		}
	}
	s.held = keep
	return dst, upper, nil
}

func (s *memorySource) Close() {
	s.table.mu.Lock()
	delete(s.table.listeners, s)
	s.table.mu.Unlock()
}

// OpenSources returns the number of sources open on the table (a dropped
// dataflow must close its sources).
func (m *MemoryTable) OpenSources() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.listeners)
}
