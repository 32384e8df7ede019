package render

import (
	"encoding/binary"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// Consolidation in KeyBy. A KeyBy feeds an arrangement, which sums the
// multiplicities of equal (key, value, time) updates anyway. Where a chunk
// of input keys to few distinct updates, as the rows of a join keyed for a
// reduction do (count(*), sum(partition) over a million joined rows is a
// few dozen (group, argument) pairs), summing them in the KeyBy, before
// they are exchanged, built into batches and merged, saves all of that
// work, and builds each distinct pair once instead of allocating every
// row's key and value. Updates are summed only within one chunk, at their
// own times, so what the arrangement receives accumulates to the same
// collection at every time. A KeyBy whose chunks barely shrink (distinct
// rows, a join's input keyed by a unique column) stops trying after a few
// chunks and keys each row as before.

const (
	// consolidateMinChunk is the smallest chunk whose shrinkage counts
	// towards giving up (a tick's few updates say nothing).
	consolidateMinChunk = 256
	// consolidateGiveUp is the consecutive chunks that shrank by less than
	// a quarter after which a KeyBy stops consolidating.
	consolidateGiveUp = 4
	// consolidateProbe is how far into a chunk a KeyBy decides whether the
	// chunk shrinks: if its first consolidateProbe updates do not shrink by
	// a quarter, the rest of the chunk is keyed row by row (a snapshot's
	// million distinct rows cost no million-entry map).
	consolidateProbe = 1024
	// consolidateKeep is the most distinct updates whose map and buffer a
	// KeyBy keeps for its next chunk.
	consolidateKeep = 4096
)

type keyConsolidator struct {
	index   map[string]int32 // (key, value, time) -> its update in out
	out     []dataflow.Update
	scratch []byte
	poor    int
	off     bool
}

// add sums one keyed update into the chunk's output. key and val may
// alias the caller's buffers: they are copied when the triple is new.
func (c *keyConsolidator) add(key, val []byte, t frontier.Time, d int64) {
	s := binary.AppendUvarint(c.scratch[:0], uint64(len(key)))
	s = append(s, key...)
	s = append(s, val...)
	s = binary.BigEndian.AppendUint64(s, uint64(t))
	c.scratch = s
	if i, ok := c.index[string(s)]; ok {
		c.out[i].Diff += d
		return
	}
	if c.index == nil {
		c.index = map[string]int32{}
	}
	c.index[string(s)] = int32(len(c.out))
	kv := make([]byte, len(key)+len(val))
	copy(kv, key)
	copy(kv[len(key):], val)
	u := dataflow.Update{Key: kv[:len(key):len(key)], Time: t, Diff: d}
	if val != nil {
		u.Val = kv[len(key):]
	}
	c.out = append(c.out, u)
}

// take returns the chunk's summed updates (those whose multiplicities
// cancelled left out), with room for more updates, and notes how much a
// chunk of n updates shrank.
func (c *keyConsolidator) take(n, more int) []dataflow.Update {
	out := make([]dataflow.Update, 0, len(c.out)+more)
	for _, u := range c.out {
		if u.Diff != 0 {
			out = append(out, u)
		}
	}
	if n >= consolidateMinChunk {
		if 4*len(c.out) > 3*n {
			c.poor++
		} else {
			c.poor = 0
		}
		c.off = c.poor >= consolidateGiveUp
	}
	if c.off || len(c.out) > consolidateKeep {
		// A map keeps its buckets when cleared: a large one would stay
		// for the operator's life.
		c.index, c.out = nil, nil
	} else {
		clear(c.index)
		clear(c.out)
		c.out = c.out[:0]
	}
	return out
}

// keyChunkConsolidated keys one chunk of updates, summing equal ones; it
// returns the keyed updates and the evaluation errors.
func (lg *keyLogic) keyChunkConsolidated(in []dataflow.Update) (ok, errs []dataflow.Update) {
	for i, u := range in {
		if i == consolidateProbe && 4*len(lg.cons.out) > 3*i {
			ok = lg.cons.take(i, len(in)-i)
			return lg.keyChunk(in[i:], ok, errs)
		}
		key, val, err := lg.keyRow(u.Val, false)
		if err != nil {
			errs = append(errs, dataflow.Update{Val: ErrorRow(err), Time: u.Time, Diff: u.Diff})
			continue
		}
		lg.cons.add(key, val, u.Time, u.Diff)
	}
	return lg.cons.take(len(in), 0), errs
}
