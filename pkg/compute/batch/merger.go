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

	ka, kb    int  // next key of a and b
	inKey     bool // a key is in progress
	va, vaEnd int  // a's values of the current key (empty if a lacks it)
	vb, vbEnd int
	w         writer
	scratch   []timeDiff
	result    *Batch
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

// NewRunMerger prepares the merge of two runs of one interval: batches with
// equal descriptions, each sorted and consolidated, holding parts of the
// updates of that interval (a fuelled build's sorted runs). The result has
// the same description and is the batch one Build of all their updates
// would give. No time is advanced.
func NewRunMerger(a, b *Batch) (*Merger, error) {
	if a.desc != b.desc {
		return nil, fmt.Errorf("merge run %v with run %v: %w", a.desc, b.desc, ErrNotSameInterval)
	}
	return newMerger(a, b, frontier.Minimum())
}

func newMerger(older, newer *Batch, since frontier.Frontier) (*Merger, error) {
	if len(older.keyData)+len(newer.keyData) > maxOffset ||
		len(older.valData)+len(newer.valData) > maxOffset ||
		older.Len()+newer.Len() > maxOffset {
		return nil, fmt.Errorf("merge %v with %v: %w", older.desc, newer.desc, ErrTooLarge)
	}
	desc := Description{
		Lower: older.desc.Lower,
		Upper: newer.desc.Upper,
		Since: frontier.Join(older.desc.Since, newer.desc.Since),
	}
	m := &Merger{a: older, b: newer, since: since}
	if t, ok := since.Time(); ok {
		m.sinceT = t
		desc.Since = frontier.Join(desc.Since, since)
		m.compact = !since.LessEqual(older.desc.Lower)
	}
	m.w = newWriter(desc,
		older.KeyCount()+newer.KeyCount(), len(older.keyData)+len(newer.keyData),
		older.ValCount()+newer.ValCount(), len(older.valData)+len(newer.valData),
		older.Len()+newer.Len())
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
	aOK, bOK := m.ka < m.a.KeyCount(), m.kb < m.b.KeyCount()
	if !aOK && !bOK {
		return false
	}
	cmp := 0
	switch {
	case !aOK:
		cmp = 1
	case !bOK:
		cmp = -1
	default:
		cmp = bytes.Compare(m.a.key(m.ka), m.b.key(m.kb))
	}
	m.va, m.vaEnd, m.vb, m.vbEnd = 0, 0, 0, 0
	if cmp <= 0 {
		m.va, m.vaEnd = m.a.vals(m.ka)
		m.w.startKey(m.a.key(m.ka))
		m.ka++
	}
	if cmp >= 0 {
		m.vb, m.vbEnd = m.b.vals(m.kb)
		m.w.startKey(m.b.key(m.kb))
		m.kb++
	}
	m.inKey = true
	return true
}

// stepVal merges the least remaining value of the current key and returns
// the number of input updates it read.
func (m *Merger) stepVal() int {
	aOK, bOK := m.va < m.vaEnd, m.vb < m.vbEnd
	if !aOK && !bOK {
		m.w.sealKey()
		m.inKey = false
		return 0
	}
	cmp := 0
	switch {
	case !aOK:
		cmp = 1
	case !bOK:
		cmp = -1
	default:
		cmp = bytes.Compare(m.a.val(m.va), m.b.val(m.vb))
	}
	switch {
	case cmp < 0:
		ts, ds := m.a.updates(m.va)
		m.copyRun(ts, ds)
		m.w.sealVal(m.a.val(m.va))
		m.va++
		return len(ts)
	case cmp > 0:
		ts, ds := m.b.updates(m.vb)
		m.copyRun(ts, ds)
		m.w.sealVal(m.b.val(m.vb))
		m.vb++
		return len(ts)
	}
	ta, da := m.a.updates(m.va)
	tb, db := m.b.updates(m.vb)
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
		slices.SortFunc(m.scratch, func(x, y timeDiff) int {
			switch {
			case x.t < y.t:
				return -1
			case x.t > y.t:
				return 1
			}
			return 0
		})
		m.pushConsolidated()
	}
	m.w.sealVal(m.a.val(m.va))
	m.va++
	m.vb++
	return len(ta) + len(tb)
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
	m.pushConsolidated()
}

// pushConsolidated writes m.scratch, sorted by time, summing equal times and
// dropping zero sums.
func (m *Merger) pushConsolidated() {
	s := m.scratch
	for i := 0; i < len(s); {
		t, d := s[i].t, s[i].d
		i++
		for i < len(s) && s[i].t == t {
			d += s[i].d
			i++
		}
		if d != 0 {
			m.w.pushUpdate(t, d)
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

// SizeBytes returns the memory held by the merge's output so far (its
// columns are allocated up front), excluding the inputs.
func (m *Merger) SizeBytes() int {
	if m.result != nil {
		return m.result.SizeBytes()
	}
	return m.w.out.SizeBytes()
}
