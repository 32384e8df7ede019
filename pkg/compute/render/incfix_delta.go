package render

import (
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// trow is a row of a delta flowing through an incremental fixpoint's step:
// its value, multiplicity change, and depth tag (the depth the row would
// have in the result if this derivation were its shortest: the depth of
// the binding row it was derived from, plus one).
type trow struct {
	val  []byte
	diff int64
	tag  int64
}

// tagged identifies one derivation-side index entry: a value and its tag.
type tagged struct {
	val string
	tag int64
}

// joinState is what an incremental fixpoint keeps per join of its step:
// the join's side over the binding (lin: its whole current output, each
// row with its tag) and its side over an input (in: that input's current
// contents), both indexed by join key. A change to one side is joined
// with the other side's index, then applied to its own.
type joinState struct {
	linSide int // 0 when the left kid reads the binding, else 1
	lin     map[string]map[tagged]int64
	in      map[string]map[string]int64
}

// source names the leaf a delta enters the step at: the binding (0) or an
// input of the fixpoint (> 0).
type source int

const fromBinding source = 0

// delta evaluates the change of node n's output when the leaf src changes
// by d (every other leaf unchanged), updating the join indexes on the
// way. Rows that fail to evaluate are recorded in s.err.
func (s *incFix) delta(n *fixNode, src source, d []trow) []trow {
	switch {
	case n.binding:
		if src == fromBinding {
			return d
		}
		return nil
	case n.input > 0:
		if source(n.input) == src {
			return d
		}
		return nil
	case n.mfp != nil:
		return s.mfpDelta(n, s.delta(n.kids[0], src, d))
	case n.p.Join != nil:
		return s.joinDelta(n, src, d)
	case n.p.Union != nil:
		var out []trow
		for _, k := range n.kids {
			out = append(out, s.delta(k, src, d)...)
		}
		return out
	}
	return s.delta(n.kids[0], src, d) // ArrangeBy
}

func (s *incFix) mfpDelta(n *fixNode, in []trow) []trow {
	var out []trow
	for _, v := range in {
		s.work++
		ds, err := row.Row(v.val).Unpack()
		if err != nil {
			s.fail(err)
			continue
		}
		res, keep, err := n.mfp.evaluate(ds, &s.scratch)
		switch {
		case err != nil:
			s.fail(err)
		case keep:
			out = append(out, trow{val: row.Pack(res...), diff: v.diff, tag: v.tag})
		}
	}
	return out
}

// joinDelta joins the change of the side src feeds with the other side's
// index and applies it to its own side's index. Output rows are left ++
// right, tagged with the binding side's tag.
func (s *incFix) joinDelta(n *fixNode, src source, d []trow) []trow {
	js := s.joins[n]
	keys := [2][]expr.Expr{n.p.Join.LeftKey, n.p.Join.RightKey}
	lin, in := n.kids[js.linSide], n.kids[1-js.linSide]
	var out []trow
	if dl := s.delta(lin, src, d); len(dl) > 0 {
		for _, v := range dl {
			key, ok := s.key(keys[js.linSide], v.val)
			if !ok {
				continue
			}
			addTagged(js.lin, key, tagged{val: string(v.val), tag: v.tag}, v.diff)
			for m, c := range js.in[key] {
				s.work++
				out = append(out, s.joined(js.linSide, v.val, []byte(m), v.diff*c, v.tag))
			}
		}
		return out
	}
	if source(in.input) != src {
		return nil
	}
	for _, v := range d {
		key, ok := s.key(keys[1-js.linSide], v.val)
		if !ok {
			continue
		}
		addCount(js.in, key, string(v.val), v.diff)
		for m, c := range js.lin[key] {
			s.work++
			out = append(out, s.joined(js.linSide, []byte(m.val), v.val, v.diff*c, m.tag))
		}
	}
	return out
}

// joined concatenates a binding-side and an input-side row in the join's
// column order.
func (s *incFix) joined(linSide int, linVal, inVal []byte, diff, tag int64) trow {
	l, r := linVal, inVal
	if linSide == 1 {
		l, r = inVal, linVal
	}
	val := append(append(make([]byte, 0, len(l)+len(r)), l...), r...)
	return trow{val: val, diff: diff, tag: tag}
}

func (s *incFix) key(es []expr.Expr, val []byte) (string, bool) {
	ds, err := row.Row(val).Unpack()
	if err == nil {
		var k []byte
		if k, err = evalKey(es, ds); err == nil {
			return string(k), true
		}
	}
	s.fail(err)
	return "", false
}

func addTagged(m map[string]map[tagged]int64, key string, v tagged, diff int64) {
	inner := m[key]
	if inner == nil {
		inner = map[tagged]int64{}
		m[key] = inner
	}
	if inner[v] += diff; inner[v] == 0 {
		delete(inner, v)
		if len(inner) == 0 {
			delete(m, key)
		}
	}
}

func addCount(m map[string]map[string]int64, key, v string, diff int64) {
	inner := m[key]
	if inner == nil {
		inner = map[string]int64{}
		m[key] = inner
	}
	if inner[v] += diff; inner[v] == 0 {
		delete(inner, v)
		if len(inner) == 0 {
			delete(m, key)
		}
	}
}

// newJoinStates makes the (empty) join state of every join in the step;
// every join of a linear step has exactly one kid reading the binding.
func newJoinStates(n *fixNode, out map[*fixNode]*joinState) {
	if n.p.Join != nil && n.input == 0 {
		side := 0
		if !n.kids[0].readsBinding() {
			side = 1
		}
		out[n] = &joinState{linSide: side, lin: map[string]map[tagged]int64{}, in: map[string]map[string]int64{}}
	}
	for _, k := range n.kids {
		newJoinStates(k, out)
	}
}

func (n *fixNode) readsBinding() bool {
	if n.binding {
		return true
	}
	for _, k := range n.kids {
		if k.readsBinding() {
			return true
		}
	}
	return false
}
