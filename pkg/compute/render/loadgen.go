package render

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/loadgen"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// SourceKinds dispatches source imports to a factory by connection kind.
type SourceKinds map[plan.SourceKind]SourceFactory

// OpenSource implements SourceFactory.
func (k SourceKinds) OpenSource(imp plan.SourceImport, ctx SourceContext) (Source, error) {
	f, ok := k[imp.Connection.Kind]
	if !ok {
		return nil, fmt.Errorf("source %s: no factory for kind %q", imp.ID, imp.Connection.Kind)
	}
	return f.OpenSource(imp, ctx)
}

// LoadGenerators opens load-generator sources (pkg/compute/loadgen). The
// connection options are the generator's (loadgen.ParseOptions, with
// "generator" naming it) plus "output", the relation of a multi-output
// generator (default: its first). The generator ticks in wall-clock time:
// at time now every tick at or before now has been produced, and the
// source's upper is just past the last produced tick.
type LoadGenerators struct {
	// Now returns the current time in milliseconds since the epoch; nil
	// means the system clock.
	Now func() frontier.Time
}

// OpenSource implements SourceFactory.
func (g LoadGenerators) OpenSource(imp plan.SourceImport, ctx SourceContext) (Source, error) {
	opts := map[string]string{}
	output := ""
	for k, v := range imp.Connection.Options {
		if strings.EqualFold(k, "output") {
			output = v
			continue
		}
		opts[k] = v
	}
	parsed, err := loadgen.ParseOptions(imp.Connection.Options["generator"], opts)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", imp.ID, err)
	}
	gen, err := loadgen.New(parsed)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", imp.ID, err)
	}
	out := 0
	if output != "" {
		out = -1
		for i, o := range gen.Outputs() {
			if strings.EqualFold(o.Name, output) {
				out = i
			}
		}
		if out < 0 {
			return nil, fmt.Errorf("source %s: load generator %s has no output %q", imp.ID, parsed.Kind, output)
		}
	}
	now := g.Now
	if now == nil {
		now = func() frontier.Time { return frontier.Time(time.Now().UnixMilli()) }
	}
	return &loadgenSource{
		gen: gen, out: out, shard: loadgen.Shard{Index: ctx.Worker, Count: ctx.Peers},
		clock: gen.Clock(), now: now, activate: ctx.Activate, chunk: ctx.Chunk,
	}, nil
}

type loadgenSource struct {
	gen      loadgen.Generator
	out      int
	shard    loadgen.Shard
	clock    loadgen.Clock
	now      func() frontier.Time
	activate func()
	chunk    func() int
	done     loadgen.Tick // ticks (0, done] have been produced
	// pos is where the next Poll continues when a tick (the snapshot) was
	// cut short by the chunk bound; its Tick is done+1.
	pos loadgen.Position

	mu     sync.Mutex
	timer  *time.Timer
	closed bool
}

// Poll implements Source. It produces at most a chunk of items (ctx.Chunk)
// and reactivates itself while ticks that already happened remain, so a
// snapshot of millions of rows is spread over many worker steps; the upper
// passes a tick only once all of it was produced.
func (s *loadgenSource) Poll(dst []dataflow.Update) ([]dataflow.Update, frontier.Frontier, error) {
	now := s.now()
	target := s.clock.TickAt(now)
	if target > s.done {
		budget := uint64(math.MaxUint64)
		if s.chunk != nil {
			if n := s.chunk(); n > 0 {
				budget = uint64(n)
			}
		}
		if s.pos.Tick <= s.done {
			s.pos = loadgen.Start(s.done)
		}
		var rows rowArena
		pos, err := s.gen.GenerateChunk(s.pos, target, budget, s.shard, func(o int, r row.Row, t frontier.Time, d int64) {
			if o == s.out {
				if len(dst) == cap(dst) {
					// Doubling: append's 1.25x growth re-copies a
					// 16,384-row chunk four or five times over.
					dst = slices.Grow(dst, max(len(dst), 256))
				}
				dst = append(dst, dataflow.Update{Val: rows.copy(r), Time: t, Diff: d})
			}
		})
		if err != nil {
			return dst, frontier.Frontier{}, err
		}
		s.pos = pos
		s.done = pos.Tick - 1
	}
	// Ticks up to done have happened (tick 0, at Start, produces nothing).
	upper := frontier.At(s.clock.TimeOf(s.done) + 1)
	if now < s.clock.Start {
		upper = frontier.At(s.clock.Start)
	}
	if s.done < target {
		s.activate() // the rest of what already happened, next step
	} else {
		s.wakeAt(s.clock.TimeOf(s.done+1), now)
	}
	return dst, upper, nil
}

// wakeAt arranges an activation when the next tick is due; a timer fires
// once, so an idle source costs nothing between ticks.
func (s *loadgenSource) wakeAt(next, now frontier.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	d := time.Duration(0)
	if next > now {
		d = time.Duration(next-now) * time.Millisecond
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	s.timer = time.AfterFunc(d, s.activate)
}

// Close implements Source.
func (s *loadgenSource) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
}

// rowArenaChunk is the size of a rowArena's chunks: big enough that a
// chunk of generated rows costs a handful of allocations instead of one
// per row, small enough that a row kept downstream pins little else.
const rowArenaChunk = 32 << 10

// rowArena copies rows into shared chunks and hands out read-only,
// capacity-clipped slices of them, so a source step that produces
// thousands of rows allocates a few chunks rather than one object per row
// (each a separate object for the garbage collector to track).
type rowArena struct{ buf []byte }

func (a *rowArena) copy(r []byte) []byte {
	if cap(a.buf)-len(a.buf) < len(r) {
		a.buf = make([]byte, 0, max(rowArenaChunk, len(r)))
	}
	start := len(a.buf)
	a.buf = append(a.buf, r...)
	return a.buf[start:len(a.buf):len(a.buf)]
}
