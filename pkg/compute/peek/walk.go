package peek

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// Errors callers act on.
var (
	// ErrResultTooLarge: the consolidated result exceeds the maximum size.
	ErrResultTooLarge = errors.New("peek: result exceeds max result size")
	// ErrNegativeMultiplicity: an arranged row accumulated to a negative count.
	ErrNegativeMultiplicity = errors.New("peek: invalid data in arrangement, saw retractions for a row that does not exist")
)

// RowCount is one output row and its (positive) multiplicity. It is
// row.RowCount under its former name, kept so that the runtime and
// placement code that names it need not change in this step.
type RowCount = row.RowCount

// Transform maps an arranged value row to an output row, appending it to dst.
// keep=false filters the row out. A non-nil error fails the peek (for
// example division by zero in the peek's own map expressions).
type Transform func(key, val, dst []byte) (out []byte, keep bool, err error)

// Options configure a walk.
type Options struct {
	// Keys, if non-nil, restricts the walk to these encoded keys (literal key
	// constraints); nil walks every key. An empty non-nil slice matches none.
	Keys [][]byte
	// Transform is the peek's map/filter/project; nil returns the value row.
	Transform Transform
	// MaxResultBytes bounds the consolidated result; 0 means no bound.
	MaxResultBytes int
	// ChunkBytes, when positive, makes the walk hand its result over in
	// pieces: Step pauses once the rows buffered since the last TakeChunk
	// reach this size, and TakeChunk takes them. Rows are consolidated
	// within a chunk only, so one row may appear in several chunks; the
	// size bound still applies to the whole walk.
	ChunkBytes int
	// TopK, if set, keeps only the first rows of the result in an order
	// (an ordered peek with a limit); see TopK. Not combined with
	// ChunkBytes.
	TopK *TopK
}

// Walk is a resumable read of one arrangement shard as of one time.
type Walk struct {
	batches []*batch.Batch
	t       frontier.Time
	opts    Options
	keys    [][]byte // sorted, distinct; nil = all keys
	nextKey int
	cur     *batch.CursorList
	started bool

	counts   map[string]int64
	size     int // of every distinct row buffered so far, flushed or not
	buffered int // of the rows in counts
	scratch  []byte
	top      *topState // set with Options.TopK
	err      error
	done     bool
}

// NewWalk prepares a walk over r (already validated as readable at r.Time).
func NewWalk(r trace.Read, opts Options) *Walk {
	w := &Walk{batches: r.Batches, t: r.Time, opts: opts, counts: map[string]int64{}}
	if opts.TopK != nil {
		w.top = &topState{spec: *opts.TopK}
	}
	if opts.Keys != nil {
		keys := make([][]byte, len(opts.Keys))
		for i, k := range opts.Keys {
			keys[i] = row.NumericKeyRow(k) // arranged keys hold numerics at their minimal scale
		}
		slices.SortFunc(keys, bytes.Compare)
		w.keys = slices.CompactFunc(keys, bytes.Equal)
		if w.keys == nil {
			w.keys = [][]byte{}
		}
	}
	return w
}

// Done reports whether the walk finished (successfully or not).
func (w *Walk) Done() bool { return w.done }

// Step visits at most budget (key, val) pairs and reports whether the walk
// is done. A budget <= 0 means unbounded. With Options.ChunkBytes it also
// returns (not done) as soon as a chunk is ready, and visits nothing while
// that chunk has not been taken.
func (w *Walk) Step(budget int) bool {
	if w.done {
		return true
	}
	if w.ChunkReady() {
		return false
	}
	if !w.started {
		w.started = true
		w.cur = batch.NewCursorList(w.batches)
		if w.keys != nil {
			w.seekNextKey()
		}
	}
	visits := 0
	for w.cur.KeyValid() {
		if w.keys != nil && !bytes.Equal(w.cur.Key(), w.keys[w.nextKey-1]) {
			if !w.seekNextKey() {
				break
			}
			continue
		}
		for ; w.cur.ValValid(); w.cur.StepVal() {
			if budget > 0 && visits >= budget {
				return false
			}
			visits++
			if err := w.visit(w.cur.Key(), w.cur.Val(), w.cur.Accumulate(w.t)); err != nil {
				w.err, w.done = err, true
				return true
			}
			if w.ChunkReady() {
				w.cur.StepVal() // resume after the visited value
				return false
			}
		}
		if w.keys != nil {
			if !w.seekNextKey() {
				break
			}
			continue
		}
		w.cur.StepKey()
	}
	w.done = true
	return true
}

// seekNextKey positions the cursor at the next constrained key (or beyond)
// and reports whether one remains.
func (w *Walk) seekNextKey() bool {
	if w.nextKey >= len(w.keys) {
		// Exhaust the cursor so KeyValid is false.
		w.cur.Reset(nil)
		return false
	}
	w.cur.SeekKey(w.keys[w.nextKey])
	w.nextKey++
	return true
}

func (w *Walk) visit(key, val []byte, diff int64) error {
	if diff == 0 {
		return nil
	}
	if diff < 0 {
		return fmt.Errorf("%w: %d copies of %s", ErrNegativeMultiplicity, diff, row.Row(val))
	}
	out := val
	if w.opts.Transform != nil {
		o, keep, err := w.opts.Transform(key, val, w.scratch[:0])
		if err != nil {
			return err
		}
		w.scratch = o
		if !keep {
			return nil
		}
		out = o
	}
	if w.top != nil {
		return w.visitTop(out, diff)
	}
	c, seen := w.counts[string(out)]
	if !seen {
		w.size += len(out) + 8
		w.buffered += len(out) + 8
		if w.opts.MaxResultBytes > 0 && w.size > w.opts.MaxResultBytes {
			return fmt.Errorf("%w (%d bytes)", ErrResultTooLarge, w.opts.MaxResultBytes)
		}
	}
	w.counts[string(out)] = c + diff
	return nil
}

// ChunkReady reports whether a chunk waits for TakeChunk (Options.ChunkBytes).
func (w *Walk) ChunkReady() bool {
	return w.opts.ChunkBytes > 0 && w.buffered >= w.opts.ChunkBytes && w.err == nil
}

// TakeChunk returns the rows buffered since the last TakeChunk,
// consolidated and in row order, and forgets them.
func (w *Walk) TakeChunk() []RowCount {
	rows := Consolidate(w.counts)
	clear(w.counts)
	w.buffered = 0
	return rows
}

// Result returns the consolidated rows in row order, or the walk's error.
// Only valid once Done.
func (w *Walk) Result() ([]RowCount, error) {
	if !w.done {
		return nil, errors.New("peek: result requested before the walk finished")
	}
	if w.err != nil {
		return nil, w.err
	}
	return Consolidate(w.counts), nil
}

// Consolidate turns a row->count map into sorted RowCounts, dropping zero
// counts.
func Consolidate(counts map[string]int64) []RowCount {
	out := make([]RowCount, 0, len(counts))
	for r, c := range counts {
		if c != 0 {
			out = append(out, RowCount{Row: row.Row(r), Count: c})
		}
	}
	slices.SortFunc(out, func(a, b RowCount) int { return bytes.Compare(a.Row, b.Row) })
	return out
}

// Merge combines per-worker results into one consolidated result in row
// order, applying the same size bound. Parts in row order without repeated
// rows (as Walk.Result returns them) are merged without hashing or
// sorting, in O(n log k) for k parts; other parts are consolidated through
// a map.
func Merge(maxBytes int, parts ...[]RowCount) ([]RowCount, error) {
	nonEmpty := parts[:0:0]
	for _, p := range parts {
		if len(p) > 0 {
			nonEmpty = append(nonEmpty, p)
		}
		if !sortedDistinct(p) {
			return mergeUnsorted(maxBytes, parts)
		}
	}
	total, size := 0, 0
	for _, p := range nonEmpty {
		total += len(p)
		for _, rc := range p {
			size += len(rc.Row) + 8
		}
	}
	if len(nonEmpty) == 1 {
		if maxBytes > 0 && size > maxBytes {
			return nil, fmt.Errorf("%w (%d bytes)", ErrResultTooLarge, maxBytes)
		}
		return dropZeros(nonEmpty[0]), nil
	}
	out := make([]RowCount, 0, total)
	size = 0
	// A k-way merge by linear selection: k is the number of workers, small.
	pos := make([]int, len(nonEmpty))
	for {
		best := -1
		for i, p := range nonEmpty {
			if pos[i] < len(p) && (best < 0 || bytes.Compare(p[pos[i]].Row, nonEmpty[best][pos[best]].Row) < 0) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		rc := nonEmpty[best][pos[best]]
		pos[best]++
		if n := len(out); n > 0 && bytes.Equal(out[n-1].Row, rc.Row) {
			out[n-1].Count += rc.Count
			continue
		}
		size += len(rc.Row) + 8
		if maxBytes > 0 && size > maxBytes {
			return nil, fmt.Errorf("%w (%d bytes)", ErrResultTooLarge, maxBytes)
		}
		out = append(out, rc)
	}
	return dropZeros(out), nil
}

// sortedDistinct reports whether p is in strictly increasing row order.
func sortedDistinct(p []RowCount) bool {
	for i := 1; i < len(p); i++ {
		if bytes.Compare(p[i-1].Row, p[i].Row) >= 0 {
			return false
		}
	}
	return true
}

// dropZeros removes rows whose counts cancelled, in place.
func dropZeros(p []RowCount) []RowCount {
	for _, rc := range p {
		if rc.Count == 0 {
			return slices.DeleteFunc(p, func(rc RowCount) bool { return rc.Count == 0 })
		}
	}
	return p
}

func mergeUnsorted(maxBytes int, parts [][]RowCount) ([]RowCount, error) {
	counts := map[string]int64{}
	size := 0
	for _, p := range parts {
		for _, rc := range p {
			c, seen := counts[string(rc.Row)]
			if !seen {
				size += len(rc.Row) + 8
				if maxBytes > 0 && size > maxBytes {
					return nil, fmt.Errorf("%w (%d bytes)", ErrResultTooLarge, maxBytes)
				}
			}
			counts[string(rc.Row)] = c + rc.Count
		}
	}
	return Consolidate(counts), nil
}
