package batch

import (
	"bytes"
	"fmt"
)

// RunsMerger merges the sorted runs of one interval (a fuelled build's
// runs: batches with equal descriptions, each sorted and consolidated) into
// the batch one Build of all their updates would give, a bounded amount of
// work at a time. It reads every run at once, so each update is copied
// once whatever the number of runs; merging them two at a time copies each
// update once per level, log2 of the runs (measured: the merge levels were
// most of what a bound on the build cost, docs/benchmarks.md). The runs are
// only read.
type RunsMerger struct {
	runs  []*Batch
	sides []mergeSide
	// heads is a min-heap, by key, of the sides with a key left that are
	// not at the current key.
	heads []runHead
	// cur holds the sides at the current key while inKey; its values are
	// those sides' v..e.
	cur     []int
	inKey   bool
	w       writer
	scratch []timeDiff
	result  *Batch
}

type runHead struct {
	key  []byte
	side int
}

// NewRunsMerger prepares the merge of runs (at least one), which must have
// equal descriptions.
func NewRunsMerger(runs []*Batch) (*RunsMerger, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("batch: merging no runs")
	}
	var total sizes
	for _, r := range runs {
		if r.desc != runs[0].desc {
			return nil, fmt.Errorf("merge run %v with run %v: %w", runs[0].desc, r.desc, ErrNotSameInterval)
		}
		total.keys += r.KeyCount()
		total.keyBytes += r.keyBytes()
		total.vals += r.ValCount()
		total.valBytes += r.valBytes()
		total.upds += r.Len()
	}
	if total.keyBytes > maxOffset || total.valBytes > maxOffset || total.upds > maxOffset {
		return nil, fmt.Errorf("merge %d runs of %v: %w", len(runs), runs[0].desc, ErrTooLarge)
	}
	m := &RunsMerger{runs: runs, sides: make([]mergeSide, len(runs))}
	for i, r := range runs {
		m.sides[i] = newMergeSide(r)
		m.pushHead(i)
	}
	m.w = newPartWriter(runs[0].desc, total, partUpdates, partBytes)
	return m, nil
}

// Work merges until *fuel is spent or the merge is done, subtracting about
// one unit per update read and one per value and key, and reports whether
// the merge is done. It stops between values.
func (m *RunsMerger) Work(fuel *int) bool {
	for m.result == nil && *fuel > 0 {
		if !m.inKey {
			if !m.nextKey() {
				out, err := m.w.finish()
				if err != nil {
					// NewRunsMerger checked the summed sizes; a merge never grows.
					panic(fmt.Sprintf("batch: runs merge overflowed after size check: %v", err))
				}
				m.result = out
				break
			}
			*fuel--
		}
		*fuel -= m.stepVal() + 1
	}
	return m.result != nil
}

// Result returns the merged batch, or nil if the merge is not done.
func (m *RunsMerger) Result() *Batch { return m.result }

// Inputs returns the runs being merged.
func (m *RunsMerger) Inputs() []*Batch { return m.runs }

// SizeBytes returns the memory held by the merge's output so far.
func (m *RunsMerger) SizeBytes() int {
	if m.result != nil {
		return m.result.SizeBytes()
	}
	return m.w.sizeBytes()
}

// setParts sets the size of the output's parts (tests use small ones).
func (m *RunsMerger) setParts(upds, bytes int) { m.w.partUpds, m.w.partBytes = upds, bytes }

// nextKey makes the least remaining key current, entering every side that
// holds it; false when every side is exhausted.
func (m *RunsMerger) nextKey() bool {
	if len(m.heads) == 0 {
		return false
	}
	top := m.popHead()
	m.cur = append(m.cur[:0], top.side)
	for len(m.heads) > 0 && bytes.Equal(m.heads[0].key, top.key) {
		m.cur = append(m.cur, m.popHead().side)
	}
	m.w.startKey(top.key)
	for _, i := range m.cur {
		m.sides[i].enter()
	}
	m.inKey = true
	return true
}

// stepVal writes the least remaining value of the current key and returns
// the number of input updates it read; at the key's end it seals the key
// and puts its sides back in the heap.
func (m *RunsMerger) stepVal() int {
	if len(m.cur) == 1 { // the key is in one run: copy its next value
		s := &m.sides[m.cur[0]]
		if s.v < s.e {
			ts, ds := s.b.updates(s.v)
			m.w.pushUpdates(ts, ds)
			m.w.sealVal(s.b.val(s.v))
			s.v++
			return len(ts)
		}
		m.endKey()
		return 0
	}
	var least []byte
	for _, i := range m.cur {
		s := &m.sides[i]
		if s.v < s.e {
			if v := s.b.val(s.v); least == nil || bytes.Compare(v, least) < 0 {
				least = v
			}
		}
	}
	if least == nil {
		m.endKey()
		return 0
	}
	// Every run is consolidated, but one (key, val) may have updates at
	// the same times in several runs: sort them together and sum.
	m.scratch = m.scratch[:0]
	for _, i := range m.cur {
		s := &m.sides[i]
		if s.v < s.e && bytes.Equal(s.b.val(s.v), least) {
			ts, ds := s.b.updates(s.v)
			for j, t := range ts {
				m.scratch = append(m.scratch, timeDiff{t, ds[j]})
			}
		}
	}
	read := len(m.scratch)
	sortTimeDiffs(m.scratch)
	pushConsolidated(&m.w, m.scratch)
	// least borrows a run's bytes, which stay valid: runs are only read.
	m.w.sealVal(least)
	for _, i := range m.cur {
		s := &m.sides[i]
		if s.v < s.e && bytes.Equal(s.b.val(s.v), least) {
			s.v++
		}
	}
	return read
}

// endKey seals the current key and returns its sides to the heap.
func (m *RunsMerger) endKey() {
	m.w.sealKey()
	for _, i := range m.cur {
		m.pushHead(i)
	}
	m.cur = m.cur[:0]
	m.inKey = false
}

// pushHead adds side i to the heap if it has a key left.
func (m *RunsMerger) pushHead(i int) {
	s := &m.sides[i]
	if !s.ok() {
		return
	}
	m.heads = append(m.heads, runHead{key: s.key(), side: i})
	h := m.heads
	for j := len(h) - 1; j > 0; {
		p := (j - 1) / 2
		if !headLess(h[j], h[p]) {
			break
		}
		h[j], h[p] = h[p], h[j]
		j = p
	}
}

// popHead removes and returns the least head.
func (m *RunsMerger) popHead() runHead {
	h := m.heads
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for j := 0; ; {
		c := 2*j + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && headLess(h[c+1], h[c]) {
			c++
		}
		if !headLess(h[c], h[j]) {
			break
		}
		h[j], h[c] = h[c], h[j]
		j = c
	}
	m.heads = h
	return top
}

// headLess orders heads by key, then by run, so that the merge is the same
// whatever the heap's shape.
func headLess(a, b runHead) bool {
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c < 0
	}
	return a.side < b.side
}
