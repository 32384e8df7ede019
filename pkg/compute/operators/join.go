package operators

import (
	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// JoinInput is the state of the two inputs of an equi-join for one step,
// each an arrangement keyed by the join key (value = the whole input row)
// split into the batches an earlier step already consumed (*Old) and the
// batches this step consumes (*Fresh). The two inputs may be cut at
// different frontiers (each at its own trace's upper, say): every pair of
// updates is still joined exactly once, in the step that consumes the later
// of the two.
type JoinInput struct {
	LeftOld, LeftFresh   []*batch.Batch
	RightOld, RightFresh []*batch.Batch
}

// Join emits the change of the inner equi-join of two arrangements over
// one step:
//
//	ΔL ⋈ R(old)  +  (L(old) + ΔL) ⋈ ΔR
//
// where each matched pair (l, tl, dl), (r, tr, dr) with equal keys yields
// the row l ++ r (rows are self-delimiting, so byte concatenation is the
// concatenated tuple) at time max(tl, tr) with diff dl*dr. Old updates keep
// their times: with inputs cut at different frontiers an old update may be
// later than a fresh one, so its time matters. Logical compaction of either
// input's old batches is safe up to the meet of the two inputs' cuts (the
// join's input frontier at the step's start): every fresh update on the
// other side is at or after it, so max(tl, tr) is unchanged. Diff products
// wrap on int64 overflow, as sums of diffs do everywhere in the engine.
//
// Each of the two terms walks the keys of the side with fewer keys and seeks
// the other side's cursors forward to them, so a term costs
// O(min(|x|, |y|) × log max(|x|, |y|)) key visits, not |x| + |y|: a small
// change, or a small relation joined with a large index, does not walk the
// large side, and a term with an empty side costs nothing.
func Join(in JoinInput, emit Emit) {
	JoinBounded(in, emit, 0, &Progress{})
}

// joiner concatenates pairs into one reused buffer.
type joiner struct {
	buf           []byte
	emit          Emit
	driven, other []TimedVal // one key's updates on each side
	walked        int        // keys walked
}

// term emits, from p's key on, every pair of updates with equal keys of
// left and right, driving the walk from the side with fewer keys; it stops
// as walkKeys does and reports whether the term is finished. The driving
// side depends only on the inputs, so a resumed call drives the same side.
func (j *joiner) term(left, right []*batch.Batch, limit int, emitted *int, p *Progress) bool {
	lw, rw := newBatchWalk(left), newBatchWalk(right)
	if len(lw.cs) == 0 || len(rw.cs) == 0 {
		return true
	}
	leftDrives := keyCount(left) <= keyCount(right)
	drive, other := &lw, &rw
	if !leftDrives {
		drive, other = &rw, &lw
	}
	if p.key != nil {
		other.seek(p.key)
	}
	return walkKeys(drive, p, limit, emitted, func(key []byte) bool {
		j.walked++
		j.driven = drive.collectTimed(key, j.driven[:0])
		j.other = other.collectTimed(key, j.other[:0])
		return j.pairs(leftDrives, limit, emitted, p)
	})
}

// pairs emits the current key's pairs (driven × other) from p.within on
// and reports whether it emitted them all; it stops between two pairs,
// after the first, once *emitted has reached limit (limit <= 0: never),
// recording in p.within where the next call goes on.
func (j *joiner) pairs(leftDrives bool, limit int, emitted *int, p *Progress) bool {
	no := len(j.other)
	n := len(j.driven) * no
	for i := p.within; i < n; i++ {
		if limit > 0 && *emitted >= limit && i > p.within {
			p.within = i
			return false
		}
		d, o := j.driven[i/no], j.other[i%no]
		if leftDrives {
			j.pair(d.Val, o.Val, max(d.Time, o.Time), d.Diff*o.Diff)
		} else {
			j.pair(o.Val, d.Val, max(d.Time, o.Time), d.Diff*o.Diff)
		}
	}
	return true
}

// keyCount is the number of keys over bs, counting a key once per batch.
func keyCount(bs []*batch.Batch) int {
	n := 0
	for _, b := range bs {
		if b != nil {
			n += b.KeyCount()
		}
	}
	return n
}

func (j *joiner) pair(l, r []byte, t frontier.Time, diff int64) {
	if diff == 0 {
		return
	}
	j.buf = append(append(j.buf[:0], l...), r...)
	j.emit(j.buf, t, diff)
}
