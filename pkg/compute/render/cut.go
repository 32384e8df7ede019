package render

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// inputCut reads one input trace of a stateful operator as (old, fresh)
// for a step [f0, f1): old accumulates to the input's state just before
// f0, fresh holds exactly the updates with times in [f0, f1).
//
// Why it is needed: a trace's batch boundaries are where its own frontier
// advanced, but the operator steps at the meet of all its inputs' frontiers.
// When inputs progress at different rates (or one is closed, like a
// constant: one batch [as_of, closed)), a batch of one trace can straddle
// f0 or f1. Such a batch is split by copying, and the part at or beyond f1
// (the remainder) is carried to the next step and split again, so no update
// is processed twice or early. Carried pieces are this operator's own
// copies; old pieces of one batch are merged once there are several, so
// the old list stays short. The operator's handle holds the physical
// frontier at f0, so the trace never merges a batch that is still carried.
type inputCut struct {
	carry map[*batch.Batch]*carried
}

type carried struct {
	old []*batch.Batch // pieces of the batch before the current f0
	rem *batch.Batch   // the rest, starting at the current f0
}

// maxOldPieces bounds the old pieces kept per carried batch before they
// are merged into one.
const maxOldPieces = 4

// cut returns the old and fresh batches of bs (a trace's whole batch list,
// in order) for the step [f0, f1).
func (c *inputCut) cut(bs []*batch.Batch, f0, f1 frontier.Frontier) (old, fresh []*batch.Batch, err error) {
	var seen map[*batch.Batch]bool // allocated only when something straddles
	for _, b := range bs {
		switch {
		case b.Upper().LessEqual(f0):
			old = append(old, b)
			continue
		case f1.LessEqual(b.Lower()):
			continue // entirely at or beyond f1: a later step's
		case f0.LessEqual(b.Lower()) && b.Upper().LessEqual(f1):
			fresh = append(fresh, b)
			continue
		}
		if c.carry == nil {
			c.carry = map[*batch.Batch]*carried{}
		}
		st := c.carry[b]
		if st == nil {
			st = &carried{rem: b}
			c.carry[b] = st
		}
		if seen == nil {
			seen = map[*batch.Batch]bool{}
		}
		seen[b] = true
		if st.rem.Lower().Less(f0) {
			lo, hi, err := splitBatch(st.rem, f0)
			if err != nil {
				return nil, nil, err
			}
			st.old = append(st.old, lo)
			st.rem = hi
		}
		if st.old, err = compactPieces(st.old); err != nil {
			return nil, nil, err
		}
		old = append(old, st.old...)
		if st.rem.Upper().LessEqual(f1) {
			fresh = append(fresh, st.rem)
			st.old = append(st.old, st.rem)
			st.rem = batch.Empty(batch.Description{Lower: st.rem.Upper(), Upper: st.rem.Upper(), Since: frontier.Minimum()})
			continue
		}
		lo, hi, err := splitBatch(st.rem, f1)
		if err != nil {
			return nil, nil, err
		}
		fresh = append(fresh, lo)
		st.old = append(st.old, lo)
		st.rem = hi
	}
	for b := range c.carry {
		if !seen[b] {
			delete(c.carry, b)
		}
	}
	return old, fresh, nil
}

// splitBatch copies b's updates into the part before f and the part at or
// beyond f.
func splitBatch(b *batch.Batch, f frontier.Frontier) (lo, hi *batch.Batch, err error) {
	var lb, hb batch.Builder
	c := b.Cursor()
	for ; c.KeyValid(); c.StepKey() {
		for ; c.ValValid(); c.StepVal() {
			k, v := c.Key(), c.Val()
			c.ForEachUpdate(func(t frontier.Time, d int64) {
				if f.LessEqualTime(t) {
					hb.Push(k, v, t, d)
				} else {
					lb.Push(k, v, t, d)
				}
			})
		}
	}
	desc := b.Description()
	// Times below since were advanced to since when b was built, so the
	// pieces keep b's since: reads at or beyond it stay exact.
	lo, err = lb.Build(batch.Description{Lower: desc.Lower, Upper: f, Since: desc.Since})
	if err == nil {
		hi, err = hb.Build(batch.Description{Lower: f, Upper: desc.Upper, Since: desc.Since})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("split batch %v at %v: %w", desc, f, err)
	}
	return lo, hi, nil
}

// compactPieces merges adjacent old pieces once there are too many.
func compactPieces(ps []*batch.Batch) ([]*batch.Batch, error) {
	for len(ps) > maxOldPieces {
		m, err := batch.NewMerger(ps[0], ps[1], frontier.Minimum())
		if err != nil {
			return nil, fmt.Errorf("merge carried pieces: %w", err)
		}
		for fuel := 1 << 30; !m.Work(&fuel); fuel = 1 << 30 {
		}
		ps = append([]*batch.Batch{m.Result()}, ps[2:]...)
	}
	return ps, nil
}
