package operators

import (
	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// JoinInput is the state of the two inputs of an equi-join for one step,
// each an arrangement keyed by the join key (value = the whole input row)
// split at the step's start f0: *Old holds the batches with upper <= f0,
// *Fresh the batches covering [f0, f1).
type JoinInput struct {
	LeftOld, LeftFresh   []*batch.Batch
	RightOld, RightFresh []*batch.Batch
}

// Join emits the change over [f0, f1) of the inner equi-join of two
// arrangements:
//
//	ΔL ⋈ R(old)  +  (L(old) + ΔL) ⋈ ΔR
//
// where each matched pair (l, tl, dl), (r, tr, dr) with equal keys yields
// the row l ++ r (rows are self-delimiting, so byte concatenation is the
// concatenated tuple) at time max(tl, tr) with diff dl*dr. The two terms
// count each pair of fresh updates once. Old updates are consolidated by
// value first, ignoring their times: every old time is <= f0 <= every
// fresh time (logical compaction only advances old times up to since <=
// f0), so the max is always the fresh time and consolidation cancels pairs
// that would only retract each other. Diff products wrap on int64 overflow,
// as sums of diffs do everywhere in the engine.
func Join(in JoinInput, emit Emit) {
	var (
		j     joiner
		fresh []TimedVal
		other []TimedVal
		state []ValDiff
	)
	j.emit = emit

	// ΔL ⋈ R(old)
	lw, rOld := newBatchWalk(in.LeftFresh), newBatchWalk(in.RightOld)
	for key, ok := lw.nextKey(); ok; key, ok = lw.nextKey() {
		fresh = lw.collectTimed(key, fresh[:0])
		state = rOld.collectAccumulated(key, state[:0])
		for _, l := range fresh {
			for _, r := range state {
				j.pair(l.Val, r.Val, l.Time, l.Diff*r.Diff)
			}
		}
	}

	// (L(old) + ΔL) ⋈ ΔR
	rw := newBatchWalk(in.RightFresh)
	lOld, lFresh := newBatchWalk(in.LeftOld), newBatchWalk(in.LeftFresh)
	for key, ok := rw.nextKey(); ok; key, ok = rw.nextKey() {
		fresh = rw.collectTimed(key, fresh[:0])
		state = lOld.collectAccumulated(key, state[:0])
		other = lFresh.collectTimed(key, other[:0])
		for _, r := range fresh {
			for _, l := range state {
				j.pair(l.Val, r.Val, r.Time, l.Diff*r.Diff)
			}
			for _, l := range other {
				j.pair(l.Val, r.Val, max(l.Time, r.Time), l.Diff*r.Diff)
			}
		}
	}
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
