package peek

import (
	"bytes"
	"container/heap"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TopK makes a walk keep only the first Limit result rows (counting
// multiplicities) in Order, dropping the others as it goes, so that an
// ordered peek with a limit holds about Limit distinct rows whatever the
// size of the shard. Rows equal in the order columns are ordered by the
// whole row (plan.CompareOrdered), so the rows kept are determined.
//
// Dropping is safe because counts only grow during a walk (a negative
// accumulation fails it): a row is dropped only when the rows kept before
// it already make up Limit, and more copies of it cannot move it ahead.
type TopK struct {
	Limit int64
	Order []plan.ColumnOrder
}

// topEntry is a kept row with its decoded datums (decoded once).
type topEntry struct {
	key    string
	datums []row.Datum
}

// topState is a max-heap of the kept rows: the worst (last in order) on top.
type topState struct {
	spec    TopK
	entries []topEntry
	total   int64 // multiplicity of every kept row
}

func (h *topState) Len() int { return len(h.entries) }
func (h *topState) Less(i, j int) bool {
	return plan.CompareOrdered(h.entries[i].datums, h.entries[j].datums, h.spec.Order) > 0
}
func (h *topState) Swap(i, j int) { h.entries[i], h.entries[j] = h.entries[j], h.entries[i] }
func (h *topState) Push(x any)    { h.entries = append(h.entries, x.(topEntry)) }
func (h *topState) Pop() any {
	e := h.entries[len(h.entries)-1]
	h.entries[len(h.entries)-1] = topEntry{}
	h.entries = h.entries[:len(h.entries)-1]
	return e
}

// visitTop adds diff (> 0) copies of out under TopK.
func (w *Walk) visitTop(out []byte, diff int64) error {
	h := w.top
	if c, ok := w.counts[string(out)]; ok {
		w.counts[string(out)] = c + diff
		h.total += diff
		w.trimTop()
		return nil
	}
	datums, err := row.Row(out).Unpack()
	if err != nil {
		return fmt.Errorf("peek: order row %s: %w", row.Row(out), err)
	}
	for _, o := range h.spec.Order {
		if o.Column < 0 || o.Column >= len(datums) {
			return fmt.Errorf("peek: order by column %d of a %d-column row", o.Column, len(datums))
		}
	}
	if h.total >= h.spec.Limit && (h.Len() == 0 || plan.CompareOrdered(datums, h.entries[0].datums, h.spec.Order) >= 0) {
		return nil // not ahead of the rows already kept
	}
	// out may be the walk's scratch buffer, and datums may alias it: keep
	// datums decoded from a copy of their own.
	own := bytes.Clone(out)
	if datums, err = row.Row(own).Unpack(); err != nil {
		return fmt.Errorf("peek: order row %s: %w", row.Row(out), err)
	}
	key := string(own)
	w.counts[key] = diff
	w.size += len(out) + 8
	w.buffered += len(out) + 8
	if w.opts.MaxResultBytes > 0 && w.size > w.opts.MaxResultBytes {
		return fmt.Errorf("%w (%d bytes)", ErrResultTooLarge, w.opts.MaxResultBytes)
	}
	heap.Push(h, topEntry{key: key, datums: datums})
	h.total += diff
	w.trimTop()
	return nil
}

// trimTop drops the worst kept rows while the others make up the limit.
func (w *Walk) trimTop() {
	h := w.top
	for h.Len() > 0 {
		worst := h.entries[0].key
		c := w.counts[worst]
		if h.total-c < h.spec.Limit {
			return
		}
		heap.Pop(h)
		delete(w.counts, worst)
		h.total -= c
		w.size -= len(worst) + 8
		w.buffered -= len(worst) + 8
	}
}
