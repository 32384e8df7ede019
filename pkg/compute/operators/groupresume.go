package operators

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// ReduceGroupsResumable is ReduceGroupsBounded with the work of one group
// split too: a call stops once its work (values gathered and merged, units
// of evaluation, updates emitted, keys walked) has reached limit, in the
// middle of a group if need be, and keeps the group's partial state in p
// (groupRun); the next call with the same inputs resumes it. A group's
// output change at a time is emitted only once its evaluation at that time
// is complete (then in slices, for a group whose output is large), so no
// update of a half-evaluated group is ever emitted; the caller holds its
// output frontier until the step is done, so readers see the step's output
// whole in any case. The output is exactly ReduceGroups'
// (TestReduceGroupsResumableMatchesWhole).
//
// The phases of one group, each resumable at any value: gather the group's
// old state (a merge of the old batches by value, consolidated on the way,
// so no sort), gather its fresh updates into one value-sorted change list
// per distinct time, evaluate the old state, then for each time in order
// apply its changes, evaluate the new state (eval: AggregateEval folds
// its values in order; a logic that cannot be split runs whole in one
// Step, WholeGroup) and emit the difference. limit <= 0 runs every group
// whole.
func ReduceGroupsResumable(old, fresh []*batch.Batch, eval GroupEval, emit Emit, emitErr EmitErr, limit int, p *Progress) (done bool) {
	done, _ = reduceGroupsResumable(old, fresh, eval, emit, emitErr, limit, p)
	return done
}

// reduceGroupsResumable is ReduceGroupsResumable, also returning the work
// the call did.
func reduceGroupsResumable(old, fresh []*batch.Batch, eval GroupEval, emit Emit, emitErr EmitErr, limit int, p *Progress) (done bool, work int) {
	newWalk, oldWalk := newBatchWalk(fresh), newBatchWalk(old)
	if p.key != nil {
		oldWalk.seek(p.key)
	}
	if p.group == nil {
		p.group = &groupRun{}
	}
	g := p.group
	emit = counting(emit, &work)
	countedErr := func(err error, t frontier.Time, d int64) {
		work++
		emitErr(err, t, d)
	}
	done = walkKeys(&newWalk, p, limit, &work, func(key []byte) bool {
		if !g.active || !bytes.Equal(g.key, key) {
			g.begin(key)
		}
		if !g.run(&oldWalk, &newWalk, eval, emit, countedErr, limit, &work) {
			return false
		}
		newWalk.skipKey(key)
		g.active = false
		return true
	})
	return done, work
}

// groupRun is one group's reduction in progress across calls.
type groupRun struct {
	active bool
	key    []byte
	phase  groupPhase
	// last is the last value gathered in the current gather phase (its
	// resume point); started says whether there is one.
	last    []byte
	started bool

	state, next []ValDiff
	// The fresh changes, one value-sorted list per distinct time (times
	// ascending once gathered).
	times []timeChanges
	// timeIdx finds a time's list once there are more than
	// linearTimes of them (a scan is cheaper below).
	timeIdx map[frontier.Time]int
	ti      int // the time being applied or evaluated
	i, j    int // applySorted's positions in state and changes

	evaluating bool
	// The output and error before the time being applied, and after it
	// (out, emitted from positions pi and oi of prevOut and out).
	prevOut, out    []ValDiff
	prevErr, outErr error
	pi, oi          int
}

// timeChanges is the consolidated change of a group at one time.
type timeChanges struct {
	t       frontier.Time
	changes []ValDiff
}

type groupPhase uint8

const (
	gatherOld groupPhase = iota
	gatherFresh
	evalOld
	applyTime
	evalTime
	emitTime
)

func (g *groupRun) begin(key []byte) {
	g.active, g.key, g.phase = true, append(g.key[:0], key...), gatherOld
	g.last, g.started = nil, false
	g.state, g.next = g.state[:0], g.next[:0]
	for i := range g.times {
		g.times[i].changes = g.times[i].changes[:0]
	}
	g.times, g.ti, g.i, g.j = g.times[:0], 0, 0, 0
	if g.timeIdx != nil {
		clear(g.timeIdx)
	}
	g.evaluating, g.prevOut, g.prevErr, g.out, g.outErr = false, nil, nil, nil, nil
}

// run advances the group until it is complete (true) or the work reaches
// limit (false: call again with the same inputs).
func (g *groupRun) run(oldWalk, newWalk *batchWalk, eval GroupEval, emit Emit, emitErr EmitErr, limit int, work *int) bool {
	for {
		if g.phase == applyTime && g.ti == len(g.times) {
			return true
		}
		if limit > 0 && *work >= limit {
			return false
		}
		switch g.phase {
		case gatherOld:
			if !g.gather(oldWalk, limit, work, g.addOld, g.endOld) {
				return false
			}
			g.phase, g.last, g.started = gatherFresh, nil, false
		case gatherFresh:
			if !g.gather(newWalk, limit, work, g.addFresh, nil) {
				return false
			}
			slices.SortFunc(g.times, func(a, b timeChanges) int { return cmp.Compare(a.t, b.t) })
			g.phase = evalOld
		case evalOld:
			out, err, ok := g.evaluate(eval, g.state, limit, work)
			if !ok {
				return false
			}
			g.prevOut, g.prevErr = out, err
			g.phase, g.ti = applyTime, 0
		case applyTime:
			if !g.apply(g.times[g.ti].changes, limit, work) {
				return false
			}
			g.phase = evalTime
		case evalTime:
			out, err, ok := g.evaluate(eval, g.state, limit, work)
			if !ok {
				return false
			}
			g.out, g.outErr, g.pi, g.oi = out, err, 0, 0
			g.phase = emitTime
		case emitTime:
			if !g.emitChange(g.times[g.ti].t, emit, emitErr, limit, work) {
				return false
			}
			g.prevOut, g.prevErr, g.out, g.outErr = g.out, g.outErr, nil, nil
			g.phase, g.ti = applyTime, g.ti+1
		}
	}
}

// emitChange emits the change of the group's output (prevOut to out) and
// of its error at t, resumable at its positions in both (pi, oi): a large
// group's output (a window's partition, a recursion's fixed point) is
// emitted in slices too. Each output row compared counts one unit, emitted
// or not. It reports whether the change is complete.
func (g *groupRun) emitChange(t frontier.Time, emit Emit, emitErr EmitErr, limit int, work *int) bool {
	prev, out := g.prevOut, g.out
	for g.pi < len(prev) || g.oi < len(out) {
		if limit > 0 && *work >= limit {
			return false
		}
		c := 0
		switch {
		case g.oi == len(out):
			c = -1
		case g.pi == len(prev):
			c = 1
		default:
			c = bytes.Compare(prev[g.pi].Val, out[g.oi].Val)
		}
		switch {
		case c < 0:
			emit(prev[g.pi].Val, t, -prev[g.pi].Diff)
			g.pi++
		case c > 0:
			emit(out[g.oi].Val, t, out[g.oi].Diff)
			g.oi++
		default:
			if d := out[g.oi].Diff - prev[g.pi].Diff; d != 0 {
				emit(out[g.oi].Val, t, d)
			} else {
				*work++
			}
			g.pi++
			g.oi++
		}
	}
	if !sameError(g.prevErr, g.outErr) {
		if g.prevErr != nil {
			emitErr(g.prevErr, t, -1)
		}
		if g.outErr != nil {
			emitErr(g.outErr, t, 1)
		}
	}
	return true
}

// gather merges the group's values across the walk's cursors at g.key in
// ascending order, from after g.last, calling add once per value and
// cursor and end once per value, until every cursor is past the key (true) or the work reaches
// limit (false).
func (g *groupRun) gather(w *batchWalk, limit int, work *int, add func(val []byte, ts []frontier.Time, ds []int64), end func()) bool {
	cs := w.atKey(g.key)
	if g.started {
		for _, c := range cs {
			c.SeekVal(g.last)
			if c.ValValid() && bytes.Equal(c.Val(), g.last) {
				c.StepVal()
			}
		}
	}
	for {
		var least []byte
		found := false
		for _, c := range cs {
			if c.ValValid() && (!found || bytes.Compare(c.Val(), least) < 0) {
				least, found = c.Val(), true
			}
		}
		if !found {
			return true
		}
		for _, c := range cs {
			if c.ValValid() && bytes.Equal(c.Val(), least) {
				ts, ds := c.Updates()
				add(least, ts, ds)
				c.StepVal()
			}
		}
		if end != nil {
			end()
		}
		g.last, g.started = least, true
		*work++
		if limit > 0 && *work >= limit {
			return false
		}
	}
}

// addOld accumulates one cursor's updates of an old value into the state
// (values arrive in ascending order).
func (g *groupRun) addOld(val []byte, _ []frontier.Time, ds []int64) {
	var d int64
	for _, x := range ds {
		d += x
	}
	if n := len(g.state); n > 0 && bytes.Equal(g.state[n-1].Val, val) {
		g.state[n-1].Diff += d
		return
	}
	g.state = append(g.state, ValDiff{Val: val, Diff: d})
}

// endOld drops the value just gathered if its total is zero.
func (g *groupRun) endOld() {
	if n := len(g.state); n > 0 && g.state[n-1].Diff == 0 {
		g.state = g.state[:n-1]
	}
}

// linearTimes is how many distinct times a group's fresh updates may have
// before their lists are found through a map.
const linearTimes = 16

// addFresh files one fresh value's updates under their times.
func (g *groupRun) addFresh(val []byte, ts []frontier.Time, ds []int64) {
	for k, t := range ts {
		i := g.timeIndex(t)
		tc := &g.times[i]
		if n := len(tc.changes); n > 0 && bytes.Equal(tc.changes[n-1].Val, val) {
			tc.changes[n-1].Diff += ds[k]
			continue
		}
		tc.changes = append(tc.changes, ValDiff{Val: val, Diff: ds[k]})
	}
}

// timeIndex returns the index of t's change list, adding one if needed
// (reusing a list's capacity from an earlier group).
func (g *groupRun) timeIndex(t frontier.Time) int {
	if len(g.times) <= linearTimes {
		for i := range g.times {
			if g.times[i].t == t {
				return i
			}
		}
	} else {
		if len(g.timeIdx) == 0 {
			if g.timeIdx == nil {
				g.timeIdx = map[frontier.Time]int{}
			}
			for i := range g.times {
				g.timeIdx[g.times[i].t] = i
			}
		}
		if i, ok := g.timeIdx[t]; ok {
			return i
		}
	}
	i := len(g.times)
	if i < cap(g.times) {
		g.times = g.times[:i+1]
		g.times[i].t, g.times[i].changes = t, g.times[i].changes[:0]
	} else {
		g.times = append(g.times, timeChanges{t: t})
	}
	if len(g.timeIdx) > 0 {
		g.timeIdx[t] = i
	}
	return i
}

// apply merges changes into the state (applySorted, resumable at g.i, g.j;
// zero changes are skipped), swapping the result in when complete.
func (g *groupRun) apply(changes []ValDiff, limit int, work *int) bool {
	for g.i < len(g.state) || g.j < len(changes) {
		if limit > 0 && *work >= limit {
			return false
		}
		*work++
		switch {
		case g.j == len(changes):
			g.next = append(g.next, g.state[g.i])
			g.i++
		case changes[g.j].Diff == 0:
			g.j++
		case g.i == len(g.state):
			g.next = append(g.next, changes[g.j])
			g.j++
		default:
			switch c := bytes.Compare(g.state[g.i].Val, changes[g.j].Val); {
			case c < 0:
				g.next = append(g.next, g.state[g.i])
				g.i++
			case c > 0:
				g.next = append(g.next, changes[g.j])
				g.j++
			default:
				if d := g.state[g.i].Diff + changes[g.j].Diff; d != 0 {
					g.next = append(g.next, ValDiff{Val: g.state[g.i].Val, Diff: d})
				}
				g.i++
				g.j++
			}
		}
	}
	g.state, g.next = g.next, g.state[:0]
	g.i, g.j = 0, 0
	return true
}

// evaluate runs eval over input until it is done (ok) or the work reaches
// limit. An empty group has no output.
func (g *groupRun) evaluate(eval GroupEval, input []ValDiff, limit int, work *int) (out []ValDiff, err error, ok bool) {
	if len(input) == 0 {
		return nil, nil, true
	}
	if !g.evaluating {
		eval.Start(g.key, input)
		g.evaluating = true
	}
	for {
		budget := 0
		if limit > 0 {
			budget = max(limit-*work, 1)
		}
		n, done := eval.Step(budget)
		*work += n
		if done {
			g.evaluating = false
			out, err = eval.Result()
			return out, err, true
		}
		if limit > 0 && *work >= limit {
			return nil, nil, false
		}
	}
}

// skipKey steps the cursors at key past it.
func (w *batchWalk) skipKey(key []byte) {
	for _, c := range w.atKey(key) {
		c.StepKey()
	}
}
