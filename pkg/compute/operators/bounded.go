package operators

import (
	"bytes"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Progress is where a bounded step (JoinBounded, ReduceGroupsBounded)
// stopped; the next call with the same inputs and the same Progress goes on
// from there. The zero value starts a step at its beginning. A step's keys
// are independent (a key's output depends only on that key's updates), so
// stopping between keys and seeking to the next one on the next call gives
// exactly the output of one unbounded call, in slices. A join may also stop
// within a key, between two of its pairs (within).
type Progress struct {
	phase int    // the join's pass (0: ΔL ⋈ R(old), 1: (L(old)+ΔL) ⋈ ΔR)
	key   []byte // the next key of the phase; nil: its first
	// within is how many of key's pairs a join already emitted when it
	// stopped inside key (0: key starts afresh).
	within int
	// group is the reduction's group in progress when a resumable step
	// stopped inside one (ReduceGroupsResumable).
	group *groupRun
}

// seek moves every cursor forward to the first key >= key.
func (w *batchWalk) seek(key []byte) {
	for i := range w.cs {
		if c := &w.cs[i]; c.KeyValid() && bytes.Compare(c.Key(), key) < 0 {
			c.SeekKey(key)
		}
	}
}

// walkKeys calls fn for each key of w from p's key on (fn consumes the key
// from w and reports whether it finished it), and stops after the first key
// at which the work done, updates *emitted plus one per key walked (so a
// walk over keys that emit nothing is bounded too), has reached limit
// (limit <= 0: never), recording the next key in p; when fn stops inside a
// key (having set p.within), it records that key. It reports whether the
// walk is finished.
func walkKeys(w *batchWalk, p *Progress, limit int, emitted *int, fn func(key []byte) bool) bool {
	if p.key != nil {
		w.seek(p.key)
	}
	keys := 0
	for key, ok := w.nextKey(); ok; key, ok = w.nextKey() {
		if !fn(key) {
			p.key = append(p.key[:0], key...)
			return false
		}
		p.within = 0
		keys++
		if limit > 0 && *emitted+keys >= limit {
			next, ok := w.nextKey()
			if !ok {
				return true
			}
			p.key = append(p.key[:0], next...)
			return false
		}
	}
	return true
}

// counting wraps emit so that every update it passes on is counted.
func counting(emit Emit, n *int) Emit {
	return func(r []byte, t frontier.Time, d int64) {
		*n++
		emit(r, t, d)
	}
}

// JoinBounded is Join in slices: it emits the step's output key by key and
// returns false once its work (updates emitted, plus one per key walked)
// has reached limit (limit <= 0: no limit), having recorded in p where the
// next call goes on. It returns true when the step is complete. A key's
// pairs (the product of its updates on both sides, unbounded for a skewed
// key) are split too: a call stops between two pairs once it has emitted
// limit updates, so no call emits more than limit (at least one pair).
func JoinBounded(in JoinInput, emit Emit, limit int, p *Progress) (done bool) {
	done, _ = joinBounded(in, emit, limit, p)
	return done
}

// joinBounded is JoinBounded, also returning how many keys it walked.
func joinBounded(in JoinInput, emit Emit, limit int, p *Progress) (done bool, walked int) {
	var emitted int
	j := joiner{emit: emit}
	if limit > 0 {
		j.emit = counting(emit, &emitted)
	}
	if p.phase == 0 {
		// ΔL ⋈ R(old)
		if !j.term(in.LeftFresh, in.RightOld, limit, &emitted, p) {
			return false, j.walked
		}
		p.phase, p.key, p.within = 1, nil, 0
	}
	// (L(old) + ΔL) ⋈ ΔR
	left := make([]*batch.Batch, 0, len(in.LeftOld)+len(in.LeftFresh))
	done = j.term(append(append(left, in.LeftOld...), in.LeftFresh...), in.RightFresh, limit, &emitted, p)
	return done, j.walked
}

// ReduceGroupsBounded is ReduceGroups in slices: it returns false once its
// work (updates and errors emitted, plus one per key walked) has reached
// limit (limit <= 0: no limit) at the end of a key, having recorded in p
// where the next call goes on, and true when the step is complete. A single
// key (group) is never split: its output is a function of the whole group
// (a min, a string_agg's order, a top-k's cut, a fixpoint), computed at
// once from its accumulated values, so a call may exceed limit by one
// group's output, which is at most the group's distinct values plus its
// previous output.
func ReduceGroupsBounded(old, fresh []*batch.Batch, logic GroupLogic, emit Emit, emitErr EmitErr, limit int, p *Progress) (done bool) {
	newWalk, oldWalk := newBatchWalk(fresh), newBatchWalk(old)
	if p.key != nil {
		oldWalk.seek(p.key)
	}
	g := groupStepper{logic: logic}
	var (
		state   []ValDiff
		upds    []TimedVal
		emitted int
	)
	countedErr := emitErr
	if limit > 0 {
		emit = counting(emit, &emitted)
		countedErr = func(err error, t frontier.Time, d int64) {
			emitted++
			emitErr(err, t, d)
		}
	}
	return walkKeys(&newWalk, p, limit, &emitted, func(key []byte) bool {
		upds = newWalk.collectTimed(key, upds[:0])
		state = oldWalk.collectAccumulated(key, state[:0])
		g.step(key, state, upds, emit, countedErr)
		return true
	})
}
