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
	if err := checkRange(from, to, shard); err != nil {
		return err
	}
	clock := c.Clock()
	var buf row.Row
	for i := from + 1; i <= to; i++ {
		t := clock.TimeOf(i)
		buf = row.AppendDatum(buf[:0], row.Int64(int64(i)))
		if shard.Owns(buf) {
			emit(0, buf, t, 1)
		}
		if m := Tick(c.opts.MaxCardinality); m > 0 && i > m {
			buf = row.AppendDatum(buf[:0], row.Int64(int64(i-m)))
			if shard.Owns(buf) {
				emit(0, buf, t, -1)
			}
		}
	}
	return nil
}
