package server

import (
	"fmt"
	"runtime/metrics"
)

// CodeOutOfMemory is the SQLSTATE of a read refused because the replica is
// near its memory limit (out_of_memory).
const CodeOutOfMemory = "53200"

// MemoryGuard refuses new reads while the process uses more than Fraction
// of Limit bytes, so a replica near its memory limit answers a clear error
// instead of starting work that gets it killed for memory and then
// crash-loops on the same work. Used reports the bytes in use; nil means
// what the Go runtime has mapped and not released (what GOMEMLIMIT
// counts).
//
// With Dataflows set it refuses new dataflows too (create_dataflow, also
// when a reconnection replays them), so a replica near its limit builds
// no new index or one-shot read: their reads fail with the refusal. Only
// a replica of one process may set it: each process judges its own
// memory, and processes that disagreed would number their dataflows
// differently and exchange data between unrelated ones.
type MemoryGuard struct {
	Limit     uint64
	Fraction  float64
	Used      func() uint64
	Dataflows bool
}

// DefaultMemoryFraction is the share of the limit above which new reads
// are refused: the rest is headroom for the work already running.
const DefaultMemoryFraction = 0.9

// Check returns a 53200 error when the process is above its threshold.
func (g *MemoryGuard) Check() error { return g.check("read") }

// CheckDataflow is Check for a new dataflow: nil unless g.Dataflows.
func (g *MemoryGuard) CheckDataflow() error {
	if g == nil || !g.Dataflows {
		return nil
	}
	return g.check("dataflow")
}

func (g *MemoryGuard) check(what string) error {
	if g == nil || g.Limit == 0 {
		return nil
	}
	used := g.Used
	if used == nil {
		used = goMemoryInUse
	}
	frac := g.Fraction
	if frac <= 0 || frac > 1 {
		frac = DefaultMemoryFraction
	}
	if n := used(); float64(n) > frac*float64(g.Limit) {
		return coded(CodeOutOfMemory, "replica is near its memory limit (%d of %d bytes in use); refusing a new %s: retry later or use a larger replica", n, g.Limit, what)
	}
	return nil
}

// goMemoryInUse is the Go runtime's memory, minus heap returned to the
// operating system: the quantity its memory limit bounds.
func goMemoryInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	total, released := s[0].Value.Uint64(), s[1].Value.Uint64()
	if released > total {
		return 0
	}
	return total - released
}

// String describes the guard for logs.
func (g *MemoryGuard) String() string {
	if g == nil || g.Limit == 0 {
		return "off"
	}
	if g.Dataflows {
		return fmt.Sprintf("%d bytes (reads and dataflows)", g.Limit)
	}
	return fmt.Sprintf("%d bytes (reads)", g.Limit)
}
