package loadgen

import (
	"encoding/binary"
	"unsafe"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// keyValue maintains Keys rows (key, partition, value). Key k's value is a
// pure function of (seed, k, version); its version after tick i is known in
// closed form, so any tick range is generated without replaying history:
// the snapshot leaves every key at version SnapshotRounds-1, and rewrite
// number g (g = 0, 1, ... over ticks 2, 3, ...) moves key g % Keys to the
// next version.
type keyValue struct {
	opts Options
}

// kvScratch holds one Generate call's reused buffers.
type kvScratch struct {
	opts  *Options
	key   row.Row // encoded key column
	value []byte  // value bytes
	out   row.Row // encoded row
}

var keyValueOutputs = []Output{{
	Name: "key_value",
	Desc: row.NewRelationDesc(
		[]string{"key", "partition", "value"},
		[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}}),
	Key: []int{0},
}}

func newKeyValue(opts Options) *keyValue { return &keyValue{opts: opts} }

func (g *keyValue) Outputs() []Output { return keyValueOutputs }

func (g *keyValue) Clock() Clock { return Clock{Start: g.opts.Start, TickMS: g.opts.TickMS} }

// encode sets g.key and g.out to key k at version v. The value datum aliases
// g.value only for the duration of AppendDatum, which copies it.
func (g *kvScratch) encode(k, v uint64) {
	g.key = row.AppendDatum(g.key[:0], row.Int64(int64(k)))
	n := int(g.opts.ValueSize)
	if cap(g.value) < n+8 {
		g.value = make([]byte, n+8)
	}
	val := g.value[:n+8]
	seed := mix(g.opts.Seed ^ mix(k) ^ mix(v+0x51))
	for i := 0; i < n; i += 8 {
		seed = mix(seed)
		binary.LittleEndian.PutUint64(val[i:], seed)
	}
	val = val[:n]
	var vs string
	if n > 0 {
		vs = unsafe.String(&val[0], n)
	}
	g.out = append(g.out[:0], g.key...)
	g.out = row.AppendDatum(g.out, row.Int64(int64(k%g.opts.Partitions)))
	g.out = row.AppendDatum(g.out, row.BytesString(vs))
}

// Generate implements Generator.
func (kv *keyValue) Generate(from, to Tick, shard Shard, emit Emit) error {
	return generate(kv, from, to, shard, emit)
}

// GenerateChunk implements Generator.
func (kv *keyValue) GenerateChunk(pos Position, to Tick, maxItems uint64, shard Shard, emit Emit) (Position, error) {
	return generateChunk(kv, pos, to, maxItems, shard, emit)
}

// Tick 1's items are the keys (all snapshot rounds of one key); later
// ticks' items are their rewrites.
func (kv *keyValue) items(i Tick) uint64 {
	if i == 1 {
		return kv.opts.Keys
	}
	return kv.opts.UpdatesPerTick
}

func (kv *keyValue) generateItems(i Tick, lo, hi uint64, shard Shard, emit Emit) {
	t := kv.Clock().TimeOf(i)
	g := &kvScratch{opts: &kv.opts}
	keys, rounds, per := kv.opts.Keys, kv.opts.SnapshotRounds, kv.opts.UpdatesPerTick
	if i == 1 {
		for k := lo; k < hi; k++ {
			g.key = row.AppendDatum(g.key[:0], row.Int64(int64(k)))
			if !shard.Owns(g.key) {
				continue
			}
			for v := range rounds {
				if v > 0 {
					g.encode(k, v-1)
					emit(0, g.out, t, -1)
				}
				g.encode(k, v)
				emit(0, g.out, t, 1)
			}
		}
		return
	}
	// Rewrite number g0 (counting from tick 2) moves key g0 % Keys on.
	for g0 := uint64(i-2)*per + lo; g0 < uint64(i-2)*per+hi; g0++ {
		k := g0 % keys
		g.key = row.AppendDatum(g.key[:0], row.Int64(int64(k)))
		if !shard.Owns(g.key) {
			continue
		}
		v := rounds - 1 + g0/keys + 1 // the version rewrite g0 writes
		g.encode(k, v-1)
		emit(0, g.out, t, -1)
		g.encode(k, v)
		emit(0, g.out, t, 1)
	}
}

// Version returns key k's version after tick i, for tests and checks.
func (g *keyValue) version(k uint64, i Tick) uint64 {
	if i < 1 {
		return 0
	}
	total := uint64(i-1) * g.opts.UpdatesPerTick
	v := g.opts.SnapshotRounds - 1 + total/g.opts.Keys
	if k < total%g.opts.Keys {
		v++
	}
	return v
}
