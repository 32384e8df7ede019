package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// summary is the run's result line.
type summary struct {
	seed                  uint64
	faultsByKind          map[string]int
	acked, unknown, reads int64
	// frontierReads and frontiersCompared count the introspection
	// frontier reads and the (collection, worker) reports compared.
	frontierReads, frontiersCompared int64
	violations                       []string
}

// collect copies the load's counters and violations so far.
func (s *summary) collect(l *load) {
	s.acked, s.unknown, s.reads = l.acked.Load(), l.unknown.Load(), l.reads.Load()
	s.frontierReads, s.frontiersCompared = l.frontierReads.Load(), l.frontiers.compared
	l.mu.Lock()
	s.violations = slices.Clone(l.violations)
	l.mu.Unlock()
}

func (s summary) String() string {
	var kinds []string
	total := 0
	for _, k := range slices.Sorted(maps.Keys(s.faultsByKind)) {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, s.faultsByKind[k]))
		total += s.faultsByKind[k]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "chaos summary: seed %d; faults %d (%s); writes acknowledged %d, outcome unknown %d; reads checked %d; frontier reads %d (%d reports compared); violations %d",
		s.seed, total, strings.Join(kinds, ", "), s.acked, s.unknown, s.reads, s.frontierReads, s.frontiersCompared, len(s.violations))
	for _, v := range s.violations {
		fmt.Fprintf(&b, "\n  violation: %s", v)
	}
	return b.String()
}
