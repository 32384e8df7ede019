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
type MemoryGuard struct {
	Limit    uint64
	Fraction float64
	Used     func() uint64
}

// DefaultMemoryFraction is the share of the limit above which new reads
// are refused: the rest is headroom for the work already running.
const DefaultMemoryFraction = 0.9

// Check returns a 53200 error when the process is above its threshold.
func (g *MemoryGuard) Check() error {
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
		return coded(CodeOutOfMemory, "replica is near its memory limit (%d of %d bytes in use); refusing a new read: retry later or use a larger replica", n, g.Limit)
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
	return fmt.Sprintf("%d bytes", g.Limit)
}
