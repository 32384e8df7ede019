package batch

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// ErrNotAdjacent reports a merge of batches whose descriptions do not meet
// (the first's upper must equal the second's lower).
var ErrNotAdjacent = errors.New("batch: merging batches that are not adjacent")

// Merger merges two adjacent batches into one, a bounded amount of work at a
// time, applying logical compaction: every time is advanced by since, the
// updates of each (key, val) are re-consolidated, and values and keys whose
// updates all cancel are dropped. The inputs are only read, so they stay
// valid (and readable by others) while the merge is in progress.
type Merger struct {
	a, b    *Batch
	since   frontier.Frontier
	sinceT  frontier.Time
	compact bool // whether since may move any time

	sa, sb  mergeSide // reading a and b; the current key's values are
	inKey   bool      // sa.v..sa.e and sb.v..sb.e (empty if one lacks it)
	w       writer
	scratch []timeDiff
	result  *Batch
}

type timeDiff struct {
	t frontier.Time
	d int64
}

// NewMerger prepares the merge of older and newer, which must be adjacent
// (older.Upper() == newer.Lower()). since is the logical compaction frontier
// to apply; a closed since advances nothing.
func NewMerger(older, newer *Batch, since frontier.Frontier) (*Merger, error) {
	if older.desc.Upper != newer.desc.Lower {
		return nil, fmt.Errorf("merge %v with %v: %w", older.desc, newer.desc, ErrNotAdjacent)
	}
	return newMerger(older, newer, since)
}

// ErrNotSameInterval reports a merge of runs whose descriptions differ.
var ErrNotSameInterval = errors.New("batch: merging runs of different intervals")

func newMerger(older, newer *Batch, since frontier.Frontier) (*Merger, error) {
	// The limits of one plain batch still bound a merge's output (its
	// parts could hold more, but a single part must not overflow, and
	// the total bounds every part).
	if older.keyBytes()+newer.keyBytes() > maxOffset ||
		older.valBytes()+newer.valBytes() > maxOffset ||
		older.Len()+newer.Len() > maxOffset {
		return nil, fmt.Errorf("merge %v with %v: %w", older.desc, newer.desc, ErrTooLarge)
	}
	desc := Description{
		Lower: older.desc.Lower,
		Upper: newer.desc.Upper,
		Since: frontier.Join(older.desc.Since, newer.desc.Since),
	}
	m := &Merger{a: older, b: newer, since: since, sa: newMergeSide(older), sb: newMergeSide(newer)}
	if t, ok := since.Time(); ok {
		m.sinceT = t
		desc.Since = frontier.Join(desc.Since, since)
		m.compact = !since.LessEqual(older.desc.Lower)
	}
	m.w = newPartWriter(desc, sizes{
		keys: older.KeyCount() + newer.KeyCount(), keyBytes: older.keyBytes() + newer.keyBytes(),
		vals: older.ValCount() + newer.ValCount(), valBytes: older.valBytes() + newer.valBytes(),
		upds: older.Len() + newer.Len(),
	}, partUpdates, partBytes)
	return m, nil
}

// Work merges until *fuel is spent or the merge is done, subtracting the work
// done (about one unit per update read) from *fuel, and reports whether the
// merge is done. Work stops between values, so one call may overrun *fuel by
// at most the updates of one (key, val).
func (m *Merger) Work(fuel *int) bool {
	for m.result == nil && *fuel > 0 {
		if !m.inKey {
			if !m.nextKey() {
				out, err := m.w.finish()
				if err != nil {
					// NewMerger checked the summed sizes; a merge never grows.
					panic(fmt.Sprintf("batch: merge overflowed after size check: %v", err))
				}
				m.result = out
				break
			}
		}
		*fuel -= m.stepVal() + 1
	}
	return m.result != nil
}

// Done reports whether the merge has finished.
func (m *Merger) Done() bool { return m.result != nil }

// Result returns the merged batch, or nil if the merge is not done.
func (m *Merger) Result() *Batch { return m.result }

// Inputs returns the two batches being merged.
func (m *Merger) Inputs() (older, newer *Batch) { return m.a, m.b }

// nextKey positions the merge on the least remaining key; false when both
// inputs are exhausted.
func (m *Merger) nextKey() bool {
	a, b := &m.sa, &m.sb
	aOK, bOK := a.ok(), b.ok()
	if !aOK && !bOK {
		return false
	}
	cmp := headOrder(aOK, bOK, func() int { return bytes.Compare(a.key(), b.key()) })
	a.v, a.e, b.v, b.e = 0, 0, 0, 0
	if cmp <= 0 {
		m.w.startKey(a.key())
		a.enter()
	}
	if cmp >= 0 {
		m.w.startKey(b.key())
		b.enter()
	}
	m.inKey = true
	return true
}

// headOrder orders the heads of the merge's two sides, an exhausted side
// after the other (at least one side has a head); cmp compares two heads.
func headOrder(aOK, bOK bool, cmp func() int) int {
	switch {
	case !aOK:
		return 1
	case !bOK:
		return -1
	}
	return cmp()
}

// stepVal merges the least remaining value of the current key and returns
// the number of input updates it read.
func (m *Merger) stepVal() int {
	a, b := &m.sa, &m.sb
	aOK, bOK := a.v < a.e, b.v < b.e
	if !aOK && !bOK {
		m.w.sealKey()
		m.inKey = false
		return 0
	}
	cmp := headOrder(aOK, bOK, func() int { return bytes.Compare(a.b.val(a.v), b.b.val(b.v)) })
	switch {
	case cmp < 0:
		return m.copyVal(a)
	case cmp > 0:
		return m.copyVal(b)
	}
	ta, da := a.b.updates(a.v)
	tb, db := b.b.updates(b.v)
	if !m.compact && ta[len(ta)-1] < tb[0] {
		// Common case: disjoint, ordered runs.
		m.w.pushUpdates(ta, da)
		m.w.pushUpdates(tb, db)
	} else {
		m.scratch = m.scratch[:0]
		for i, t := range ta {
			m.scratch = append(m.scratch, timeDiff{m.advance(t), da[i]})
		}
		for i, t := range tb {
			m.scratch = append(m.scratch, timeDiff{m.advance(t), db[i]})
		}
		sortTimeDiffs(m.scratch)
		pushConsolidated(&m.w, m.scratch)
	}
	m.w.sealVal(a.b.val(a.v))
	a.v++
	b.v++
	return len(ta) + len(tb)
}

// copyVal writes the current value of one side, which the other lacks.
func (m *Merger) copyVal(s *mergeSide) int {
	ts, ds := s.b.updates(s.v)
	m.copyRun(ts, ds)
	m.w.sealVal(s.b.val(s.v))
	s.v++
	return len(ts)
}

func (m *Merger) advance(t frontier.Time) frontier.Time {
	if m.compact && t < m.sinceT {
		return m.sinceT
	}
	return t
}

// copyRun writes one input's sorted, consolidated run, advancing its times.
// Advancing is monotone, so the run stays sorted; only times that collapse
// onto since need summing.
func (m *Merger) copyRun(ts []frontier.Time, ds []int64) {
	if !m.compact || ts[0] >= m.sinceT {
		m.w.pushUpdates(ts, ds)
		return
	}
	m.scratch = m.scratch[:0]
	for i, t := range ts {
		m.scratch = append(m.scratch, timeDiff{m.advance(t), ds[i]})
	}
	pushConsolidated(&m.w, m.scratch)
}

// sortTimeDiffs sorts s by time.
func sortTimeDiffs(s []timeDiff) {
	slices.SortFunc(s, func(x, y timeDiff) int {
		switch {
		case x.t < y.t:
			return -1
		case x.t > y.t:
			return 1
		}
		return 0
	})
}

// pushConsolidated writes s, sorted by time, to w, summing equal times and
// dropping zero sums.
func pushConsolidated(w *writer, s []timeDiff) {
	for i := 0; i < len(s); {
		t, d := s[i].t, s[i].d
		i++
		for i < len(s) && s[i].t == t {
			d += s[i].d
			i++
		}
		if d != 0 {
			w.pushUpdate(t, d)
		}
	}
}

// Merge merges older and newer to completion; a convenience for tests and
// callers that do not need to bound work.
func Merge(older, newer *Batch, since frontier.Frontier) (*Batch, error) {
	m, err := NewMerger(older, newer, since)
	if err != nil {
		return nil, err
	}
	for {
		fuel := 1 << 20
		if m.Work(&fuel) {
			return m.Result(), nil
		}
	}
}

// SizeBytes returns the memory held by the merge's output so far (written
// in parts, each allocated when the merge reaches it), excluding the inputs.
func (m *Merger) SizeBytes() int {
	if m.result != nil {
		return m.result.SizeBytes()
	}
	return m.w.sizeBytes()
}

// AllocatedBytes returns the column capacity the merge has allocated for
// its output so far (for tests bounding what one Work call allocates).
func (m *Merger) AllocatedBytes() int { return m.w.allocBytes }

// setParts sets the size of the output's parts (tests use small ones to
// write parted batches from a few updates).
func (m *Merger) setParts(upds, bytes int) { m.w.partUpds, m.w.partBytes = upds, bytes }
