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
func Join(in JoinInput, emit Emit) {
	JoinBounded(in, emit, 0, &Progress{})
}

// joiner concatenates pairs into one reused buffer.
type joiner struct {
	buf  []byte
	emit Emit
}

func (j *joiner) pair(l, r []byte, t frontier.Time, diff int64) {
	if diff == 0 {
		return
	}
	j.buf = append(append(j.buf[:0], l...), r...)
	j.emit(j.buf, t, diff)
}
