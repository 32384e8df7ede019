package server

import (
	"fmt"
	"runtime/metrics"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
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
//
// With Report set (replicas of several processes) the process instead
// reports its memory to the controller (a MemoryStatus response): first
// on every connection, also without a limit (limit_bytes 0, never near
// it), since the controller sends no dataflow before every process
// reported; then, with a limit, whenever its side of the threshold
// changes, sampled every Interval (DefaultMemoryInterval when zero). The
// controller, which sends the same commands to every process, then sends
// no new dataflow to a replica one of whose processes is near its limit
// and answers the dataflow's reads with 53200, so all processes agree.
type MemoryGuard struct {
	Limit     uint64
	Fraction  float64
	Used      func() uint64
	Dataflows bool
	Report    bool
	Interval  time.Duration
}

// DefaultMemoryInterval is how often a reporting guard samples memory.
const DefaultMemoryInterval = 250 * time.Millisecond

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
	if n, near := g.sample(); near {
		return coded(CodeOutOfMemory, "replica is near its memory limit (%d of %d bytes in use); refusing a new %s: retry later or use a larger replica", n, g.Limit, what)
	}
	return nil
}

// sample returns the bytes in use and whether they are above the
// threshold.
func (g *MemoryGuard) sample() (uint64, bool) {
	used := g.Used
	if used == nil {
		used = goMemoryInUse
	}
	frac := g.Fraction
	if frac <= 0 || frac > 1 {
		frac = DefaultMemoryFraction
	}
	n := used()
	return n, g.Limit > 0 && float64(n) > frac*float64(g.Limit)
}

// reports reports whether the guard sends a MemoryStatus on every
// connection.
func (g *MemoryGuard) reports() bool { return g != nil && g.Report }

// samples reports whether the guard samples memory periodically and
// reports crossings of its threshold.
func (g *MemoryGuard) samples() bool { return g.reports() && g.Limit > 0 }

// interval is how often a reporting guard samples.
func (g *MemoryGuard) interval() time.Duration {
	if g.Interval > 0 {
		return g.Interval
	}
	return DefaultMemoryInterval
}

// reportMemory sends the current connection a MemoryStatus when force is
// set or the process crossed its threshold since the last report.
func (s *Server) reportMemory(force bool) {
	c := s.st.conn
	if c == nil || !s.memory.reports() {
		return
	}
	n, near := s.memory.sample()
	if !force && c.memoryReported && near == c.memoryNear {
		return
	}
	c.memoryReported, c.memoryNear = true, near
	if near {
		s.log.Info("Memory near the limit: the controller is told to send no new dataflow", "used", n, "limit", s.memory.Limit)
	} else if !force {
		s.log.Info("Memory below the limit again: new dataflows are admitted", "used", n, "limit", s.memory.Limit)
	}
	c.respond(&computepb.Response{Kind: &computepb.Response_MemoryStatus{MemoryStatus: &computepb.MemoryStatus{
		UsedBytes: n, LimitBytes: s.memory.Limit, NearLimit: near}}})
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
	if g.Report {
		return fmt.Sprintf("%d bytes (reads; dataflows through the controller)", g.Limit)
	}
	return fmt.Sprintf("%d bytes (reads)", g.Limit)
}
