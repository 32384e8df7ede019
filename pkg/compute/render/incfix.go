package render

import (
	"bytes"
	"container/heap"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/operators"
)

// incFix maintains the fixed point of an incremental Recursive node (see
// plan.Recursive.Incremental) as its inputs change, without re-deriving
// it from scratch.
//
// It keeps the result with each row's depth (the round in which a
// from-scratch evaluation first derives it: 0 for base rows), and for
// each row the number of its derivations from the current result by the
// current inputs, per depth tag (the deriving row's depth plus one). In a
// consistent state a row's depth is 0 when it is in the base and
// otherwise its smallest tag with a positive count; a row is in the
// result iff it has such a depth. A change is applied in three phases:
//
//  1. the inputs' changes are pushed through the step against the current
//     result (new derivations and lost ones, counted per tag);
//  2. delete: in increasing depth, a row that lost every derivation at
//     its own depth (its base membership, at depth 0) leaves the result,
//     and its own derivations are retracted in turn; this over-deletes
//     rows that still have a derivation at a larger depth;
//  3. rederive and insert: the over-deleted rows and every row whose
//     derivations changed get the depth of their best remaining
//     derivation, in increasing depth (a breadth-first search from the
//     changed rows), and the rows they derive are visited in turn.
//
// Work is therefore proportional to the derivations that change, not to
// the size of the result. Because depths equal those of the from-scratch
// evaluation, the iteration limit holds exactly: a row whose depth would
// reach MaxIterations is the from-scratch evaluation's 54000.
//
// Whenever the incremental state cannot give the node's output (an error
// evaluating the step, the iteration limit, a negative multiplicity in an
// input), the output is computed from scratch by Fixpoint.Run over the
// inputs' current contents, and the incremental state is rebuilt at the
// next change.
type incFix struct {
	fp     *Fixpoint
	inputs []map[string]int64 // current contents; inputs[0] is the base
	// negatives counts the input rows with a negative multiplicity.
	negatives int

	valid bool // depth, sup and joins are consistent with inputs
	depth map[string]int64
	sup   map[string]map[int64]int64
	joins map[*fixNode]*joinState

	// shown is the output emitted so far when !valid: rows (or shownErr).
	shown    map[string]bool
	shownErr error

	err     error // first error evaluating the step during a change
	work    int64 // rows touched, for complexity tests
	scratch expr.Scratch
	stop    func() bool
	polls   int
}

func newIncFix(fp *Fixpoint) *incFix {
	s := &incFix{fp: fp, inputs: make([]map[string]int64, len(fp.Inputs))}
	for i := range s.inputs {
		s.inputs[i] = map[string]int64{}
	}
	s.reset()
	s.valid = true
	return s
}

// reset empties the derived state: the result, derivation counts and the
// join indexes (input sides rebuilt from the inputs' contents).
func (s *incFix) reset() {
	s.depth = map[string]int64{}
	s.sup = map[string]map[int64]int64{}
	s.joins = map[*fixNode]*joinState{}
	newJoinStates(s.fp.step, s.joins)
	for n, js := range s.joins {
		in := n.kids[1-js.linSide]
		keys := [2][]expr.Expr{n.p.Join.LeftKey, n.p.Join.RightKey}
		for v, c := range s.inputs[in.input] {
			if k, ok := s.key(keys[1-js.linSide], []byte(v)); ok {
				addCount(js.in, k, v, c)
			}
		}
	}
}

// change is one consolidated change of one input.
type change struct {
	input int
	val   []byte
	diff  int64
}

// outDelta is one change of the node's output.
type outDelta struct {
	val  []byte
	diff int64
	err  error // set for an error row
}

// Apply applies the changes of one time and returns the output's change.
func (s *incFix) Apply(changes []change) []outDelta {
	s.err = nil
	wasValid := s.valid
	s.valid = false // until the change completes
	prev := map[string]bool{}
	for _, c := range changes {
		s.applyInput(c, wasValid, prev)
	}
	if wasValid && s.err == nil && s.negatives == 0 {
		if s.update(prev) {
			s.valid = true
			return s.membershipDelta(prev)
		}
		// The output before this change, from the journal of rows whose
		// membership the failed update touched.
		old := map[string]bool{}
		for v := range s.depth {
			old[v] = true
		}
		for v, was := range prev {
			if was {
				old[v] = true
			} else {
				delete(old, v)
			}
		}
		s.shown, s.shownErr = old, nil
	} else if wasValid {
		s.shown, s.shownErr = s.keys(), nil
	}
	return s.recover()
}

// applyInput records one input change and, while the state is valid,
// pushes it through the step.
func (s *incFix) applyInput(c change, valid bool, prev map[string]bool) {
	m := s.inputs[c.input]
	k := string(c.val)
	before := m[k]
	after := before + c.diff
	if before < 0 {
		s.negatives--
	}
	if after < 0 {
		s.negatives++
	}
	if after == 0 {
		delete(m, k)
	} else {
		m[k] = after
	}
	if !valid || s.err != nil {
		return
	}
	if c.input == 0 {
		s.touch(k, prev)
		return
	}
	s.derived(s.delta(s.fp.step, source(c.input), []trow{{val: c.val, diff: c.diff}}), prev)
}

// touch marks a row whose derivations changed: a candidate for the delete
// and the insert phases. prev journals its membership before the change.
func (s *incFix) touch(v string, prev map[string]bool) {
	if _, ok := prev[v]; !ok {
		_, in := s.depth[v]
		prev[v] = in
	}
}

// derived adds derivations (the step's output change) to the counts.
func (s *incFix) derived(rows []trow, prev map[string]bool) {
	for _, r := range rows {
		s.work++
		k := string(r.val)
		tags := s.sup[k]
		if tags == nil {
			tags = map[int64]int64{}
			s.sup[k] = tags
		}
		if tags[r.tag] += r.diff; tags[r.tag] == 0 {
			delete(tags, r.tag)
			if len(tags) == 0 {
				delete(s.sup, k)
			}
		}
		s.touch(k, prev)
	}
}

// best is the depth a row's remaining derivations give it, if any.
func (s *incFix) best(v string) (int64, bool) {
	if s.inputs[0][v] > 0 {
		return 0, true
	}
	d, found := int64(0), false
	for t, c := range s.sup[v] {
		if c > 0 && (!found || t < d) {
			d, found = t, true
		}
	}
	return d, found
}

// holds reports whether row v still has a derivation at depth d.
func (s *incFix) holds(v string, d int64) bool {
	if d == 0 {
		return s.inputs[0][v] > 0
	}
	return s.sup[v][d] > 0
}

// update runs the delete and the insert phases over the rows journalled
// in prev; false when the incremental state cannot give the output.
func (s *incFix) update(prev map[string]bool) bool {
	// Delete: in increasing depth, rows without a derivation at their own
	// depth leave the result.
	var q depthQueue
	for v := range prev {
		if d, in := s.depth[v]; in {
			q.push(d, v)
		}
	}
	var deleted []string
	for q.Len() > 0 {
		d, v := q.pop()
		if cur, in := s.depth[v]; !in || cur != d || s.holds(v, d) {
			continue
		}
		s.poll()
		delete(s.depth, v)
		deleted = append(deleted, v)
		for _, r := range s.delta(s.fp.step, fromBinding, []trow{{val: []byte(v), diff: -1, tag: d + 1}}) {
			s.derived([]trow{r}, prev)
			if cur, in := s.depth[string(r.val)]; in && cur == r.tag {
				q.push(cur, string(r.val))
			}
		}
		if s.err != nil {
			return false
		}
	}
	// Insert: breadth-first from every row whose derivations changed and
	// from every over-deleted row that still has one (rederive).
	over := make(map[string]bool, len(deleted))
	for _, v := range deleted {
		over[v] = true
	}
	for v := range prev {
		if !over[v] {
			s.candidate(&q, v)
		}
	}
	for _, v := range deleted {
		s.candidate(&q, v)
	}
	for q.Len() > 0 {
		d, v := q.pop()
		if cur, in := s.depth[v]; (in && cur <= d) || !s.holds(v, d) {
			continue
		}
		if d >= s.fp.Rec.MaxIterations {
			return false
		}
		s.poll()
		change := []trow{{val: []byte(v), diff: 1, tag: d + 1}}
		if cur, in := s.depth[v]; in {
			change = append(change, trow{val: []byte(v), diff: -1, tag: cur + 1})
		}
		s.depth[v] = d
		for _, r := range s.delta(s.fp.step, fromBinding, change) {
			s.derived([]trow{r}, prev)
			if r.diff > 0 {
				s.candidate(&q, string(r.val))
			}
		}
		if s.err != nil {
			return false
		}
	}
	return true
}

func (s *incFix) candidate(q *depthQueue, v string) {
	d, ok := s.best(v)
	if !ok {
		return
	}
	if cur, in := s.depth[v]; !in || d < cur {
		q.push(d, v)
	}
}

func (s *incFix) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *incFix) poll() {
	s.work++
	s.polls++
	if s.polls%stopCheckInterval == 0 && s.stop != nil && s.stop() {
		panic(stepAbandoned{})
	}
}

// membershipDelta is the output change of a completed update: the rows
// whose membership differs from the journal.
func (s *incFix) membershipDelta(prev map[string]bool) []outDelta {
	var out []outDelta
	for v, was := range prev {
		_, in := s.depth[v]
		switch {
		case in && !was:
			out = append(out, outDelta{val: []byte(v), diff: 1})
		case was && !in:
			out = append(out, outDelta{val: []byte(v), diff: -1})
		}
	}
	// Forget rows the change left with no derivation at all.
	for v := range prev {
		if _, in := s.depth[v]; !in && len(s.sup[v]) == 0 {
			delete(s.sup, v)
		}
	}
	return sortDeltas(out)
}

func (s *incFix) keys() map[string]bool {
	out := make(map[string]bool, len(s.depth))
	for v := range s.depth {
		out[v] = true
	}
	return out
}

// recover computes the output when the incremental state is not valid:
// first by rebuilding the state from the inputs (a full incremental
// build), and when that fails by Fixpoint.Run, whose result or error is
// the node's output by definition. It returns the change from s.shown.
func (s *incFix) recover() []outDelta {
	s.err = nil
	s.reset()
	if s.negatives == 0 {
		prev := map[string]bool{}
		for v, c := range s.inputs[0] {
			if c > 0 {
				s.touch(v, prev)
			}
		}
		if s.update(prev) && s.err == nil {
			s.valid = true
			return s.diffShown(s.keys(), nil)
		}
	}
	s.err = nil
	s.reset()
	rows, err := s.fp.Run(s.contents())
	next := map[string]bool{}
	for _, v := range rows {
		next[string(v.Val)] = true
	}
	out := s.diffShown(next, err)
	s.shown, s.shownErr = next, err
	if err != nil {
		s.shown = map[string]bool{}
	}
	return out
}

// diffShown is the change from the shown output to rows (or err).
func (s *incFix) diffShown(rows map[string]bool, err error) []outDelta {
	var out []outDelta
	if err != nil {
		rows = nil
	}
	for v := range s.shown {
		if !rows[v] {
			out = append(out, outDelta{val: []byte(v), diff: -1})
		}
	}
	for v := range rows {
		if !s.shown[v] {
			out = append(out, outDelta{val: []byte(v), diff: 1})
		}
	}
	out = sortDeltas(out)
	if !sameError(s.shownErr, err) {
		if s.shownErr != nil {
			out = append(out, outDelta{err: s.shownErr, diff: -1})
		}
		if err != nil {
			out = append(out, outDelta{err: err, diff: 1})
		}
	}
	s.shown, s.shownErr = nil, nil
	return out
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}

// contents is the inputs' current contents as Fixpoint.Run takes them.
func (s *incFix) contents() [][]operators.ValDiff {
	out := make([][]operators.ValDiff, len(s.inputs))
	for i, m := range s.inputs {
		for v, c := range m {
			out[i] = append(out[i], operators.ValDiff{Val: []byte(v), Diff: c})
		}
	}
	return out
}

func sortDeltas(out []outDelta) []outDelta {
	slices.SortFunc(out, func(a, b outDelta) int { return bytes.Compare(a.val, b.val) })
	return out
}

// depthQueue is a min-heap of rows by depth.
type depthQueue []queued

type queued struct {
	depth int64
	val   string
}

func (q depthQueue) Len() int           { return len(q) }
func (q depthQueue) Less(i, j int) bool { return q[i].depth < q[j].depth }
func (q depthQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *depthQueue) Push(x any)        { *q = append(*q, x.(queued)) }
func (q *depthQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
func (q *depthQueue) push(d int64, v string) { heap.Push(q, queued{depth: d, val: v}) }
func (q *depthQueue) pop() (int64, string) {
	x := heap.Pop(q).(queued)
	return x.depth, x.val
}
