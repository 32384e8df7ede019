package loadgen

import (
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// counter inserts the row (i) at tick i, and retracts (i - MaxCardinality)
// when MaxCardinality is set.
type counter struct {
	opts Options
}

var counterOutputs = []Output{{
	Name: "counter",
	Desc: row.NewRelationDesc([]string{"counter"}, []row.ColumnType{{Type: row.TypeInt64}}),
	Key:  []int{0},
}}

func (c *counter) Outputs() []Output { return counterOutputs }

func (c *counter) Clock() Clock { return Clock{Start: c.opts.Start, TickMS: c.opts.TickMS} }

func (c *counter) Generate(from, to Tick, shard Shard, emit Emit) error {
	return generate(c, from, to, shard, emit)
}

func (c *counter) GenerateChunk(pos Position, to Tick, maxItems uint64, shard Shard, emit Emit) (Position, error) {
	return generateChunk(c, pos, to, maxItems, shard, emit)
}

// Each tick is one item: insert i, retract i-MaxCardinality.
func (c *counter) items(Tick) uint64 { return 1 }

func (c *counter) generateItems(i Tick, lo, hi uint64, shard Shard, emit Emit) {
	if lo >= hi {
		return
	}
	t := c.Clock().TimeOf(i)
	var buf [16]byte
	r := row.AppendDatum(row.Row(buf[:0]), row.Int64(int64(i)))
	if shard.Owns(r) {
		emit(0, r, t, 1)
	}
	if m := Tick(c.opts.MaxCardinality); m > 0 && i > m {
		r = row.AppendDatum(r[:0], row.Int64(int64(i-m)))
		if shard.Owns(r) {
			emit(0, r, t, -1)
		}
	}
}
