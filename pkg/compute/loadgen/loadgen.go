package loadgen

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Tick numbers a generator step; tick i happens at Clock.TimeOf(i).
type Tick uint64

// Clock maps ticks to times.
type Clock struct {
	Start  frontier.Time
	TickMS uint64
}

// TimeOf returns the time of tick i.
func (c Clock) TimeOf(i Tick) frontier.Time { return c.Start + frontier.Time(uint64(i)*c.TickMS) }

// TickAt returns the last tick at or before t (0 before the first tick).
func (c Clock) TickAt(t frontier.Time) Tick {
	if t < c.Start || c.TickMS == 0 {
		return 0
	}
	return Tick(uint64(t-c.Start) / c.TickMS)
}

// Shard is worker Index out of Count; it owns the keys hashing to it.
type Shard struct {
	Index, Count int
}

// Validate reports an impossible shard.
func (s Shard) Validate() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("load generator shard %d of %d: invalid", s.Index, s.Count)
	}
	return nil
}

// Owns reports whether the shard produces the row with encoded key key.
func (s Shard) Owns(key []byte) bool {
	return s.Count == 1 || row.Hash(key)%uint64(s.Count) == uint64(s.Index)
}

// Output is one relation a generator produces. Key lists the columns whose
// encoding decides the owning shard; they form a unique key of the relation.
type Output struct {
	Name string
	Desc row.RelationDesc
	Key  []int
}

// Emit receives one update of output out. r is only valid during the call.
type Emit func(out int, r row.Row, t frontier.Time, diff int64)

// Generator produces a deterministic collection per output.
type Generator interface {
	// Outputs lists the generator's relations; Emit's out indexes it.
	Outputs() []Output
	// Clock maps ticks to times.
	Clock() Clock
	// Generate emits the updates of ticks (from, to] owned by shard.
	Generate(from, to Tick, shard Shard, emit Emit) error
	// GenerateChunk emits the updates of at most maxItems items (units of
	// work: one key, one auction, ...) from pos on, stopping after tick to,
	// and returns the position to continue from; the ticks are done when
	// the returned position's Tick is beyond to. Successive chunks emit
	// exactly what Generate(pos.Tick-1, to) emits, in the same order, so a
	// source can spread a snapshot of tens of millions of rows over steps.
	GenerateChunk(pos Position, to Tick, maxItems uint64, shard Shard, emit Emit) (Position, error)
}

// Position is a point in a generator's sequence: the next item of Tick.
type Position struct {
	Tick Tick
	Item uint64
}

// Start returns the position of the first item after tick from.
func Start(from Tick) Position { return Position{Tick: from + 1} }

// itemizer is how each generator is written: tick i consists of items(i)
// items, and item j of tick i emits a pure function of (options, i, j,
// shard). Generate and GenerateChunk are derived from it.
type itemizer interface {
	items(i Tick) uint64
	generateItems(i Tick, lo, hi uint64, shard Shard, emit Emit)
}

func generate(it itemizer, from, to Tick, shard Shard, emit Emit) error {
	if err := checkRange(from, to, shard); err != nil {
		return err
	}
	for i := from + 1; i <= to && i > from; i++ {
		it.generateItems(i, 0, it.items(i), shard, emit)
	}
	return nil
}

func generateChunk(it itemizer, pos Position, to Tick, maxItems uint64, shard Shard, emit Emit) (Position, error) {
	if err := shard.Validate(); err != nil {
		return pos, err
	}
	if pos.Tick == 0 {
		return pos, fmt.Errorf("load generator chunk at tick 0: ticks start at 1")
	}
	budget := maxItems
	for budget > 0 && pos.Tick <= to {
		n := it.items(pos.Tick)
		if pos.Item > n {
			return pos, fmt.Errorf("load generator chunk at item %d of tick %d: it has %d items", pos.Item, pos.Tick, n)
		}
		take := min(n-pos.Item, budget)
		it.generateItems(pos.Tick, pos.Item, pos.Item+take, shard, emit)
		pos.Item += take
		// A tick costs at least one unit, so runs of empty ticks are bounded too.
		budget -= max(take, 1)
		if pos.Item == n {
			pos = Position{Tick: pos.Tick + 1}
		}
	}
	return pos, nil
}

// New returns the generator opts describe.
func New(opts Options) (Generator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	switch opts.Kind {
	case KindCounter:
		return &counter{opts: opts}, nil
	case KindKeyValue:
		return newKeyValue(opts), nil
	case KindAuction:
		return &auction{opts: opts}, nil
	}
	return nil, fmt.Errorf("load generator %q: unknown generator", opts.Kind)
}

func checkRange(from, to Tick, shard Shard) error {
	if from > to {
		return fmt.Errorf("load generator ticks (%d, %d]: from after to", from, to)
	}
	return shard.Validate()
}

// Update is a copied update, as Collect returns it.
type Update struct {
	Output int
	Row    row.Row
	Time   frontier.Time
	Diff   int64
}

// Collect runs g over ticks (from, to] for shard and returns copies of the
// updates, for tests and small sources.
func Collect(g Generator, from, to Tick, shard Shard) ([]Update, error) {
	var out []Update
	err := g.Generate(from, to, shard, func(o int, r row.Row, t frontier.Time, d int64) {
		out = append(out, Update{Output: o, Row: slices.Clone(r), Time: t, Diff: d})
	})
	return out, err
}

// mix is a stateless 64-bit mixer (splitmix64's finaliser): the source of
// every pseudo-random choice, so choices depend only on their inputs.
func mix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// pick returns a deterministic choice in [0, n) from the inputs.
func pick(n uint64, inputs ...uint64) uint64 {
	h := uint64(0x2545F4914F6CDD1D)
	for _, x := range inputs {
		h = mix(h ^ x)
	}
	hi, _ := bits.Mul64(h, n)
	return hi
}

// TimeOfFrontier returns the frontier {TimeOf(i)}.
func (c Clock) TimeOfFrontier(i Tick) frontier.Frontier { return frontier.At(c.TimeOf(i)) }
