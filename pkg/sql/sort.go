package sql

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"unsafe"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// SpillDirectory is implemented by backends that name a directory for a
// statement's temporary files (ORDER BY runs); without it the system's
// temporary directory is used.
type SpillDirectory interface {
	SpillDirectory() string
}

// spillDir is where this session's sort runs go.
func (s *Session) spillDir() string {
	if d, ok := s.engine.backend.(SpillDirectory); ok && d.SpillDirectory() != "" {
		return d.SpillDirectory()
	}
	return os.TempDir()
}

// maxQueryMemory returns max_query_memory in bytes (0: no limit); a
// backend that does not know the parameter gets the default.
func (s *Session) maxQueryMemory(ctx context.Context) uint64 {
	v, err := s.engine.backend.SystemParameter(ctx, ParamMaxQueryMemory)
	if err != nil {
		return DefaultMaxQueryMemory
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return DefaultMaxQueryMemory
	}
	return n
}

// memBudget counts the bytes of rows a statement holds in memory against
// max_query_memory.
type memBudget struct {
	limit, used uint64 // limit 0: no limit
}

// rowOverhead approximates what holding one row costs beyond its encoded
// bytes: its RowDiff and slice headers.
const rowOverhead = uint64(unsafe.Sizeof(RowDiff{})) + 24

// datumSize is the in-memory size of one decoded column.
const datumSize = uint64(unsafe.Sizeof(row.Datum{}))

// take adds n bytes, failing with 53200 beyond the limit.
func (b *memBudget) take(n uint64) error {
	b.used += n
	if b.limit > 0 && b.used > b.limit {
		return sqlerr.Errorf(sqlerr.OutOfMemory, "query result held in memory exceeds max_query_memory (%d bytes)", b.limit)
	}
	return nil
}

// collect reads r to its end under the budget and closes it.
func (b *memBudget) collect(r PeekRows) ([]RowDiff, error) {
	defer r.Close()
	var out []RowDiff
	for {
		d, ok, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("read peek result: %w", err)
		}
		if !ok {
			return out, nil
		}
		if err := b.take(uint64(len(d.Row)) + rowOverhead); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
}

// orderCompare is the ORDER BY comparator of decoded rows: columns in
// turn, NULLs first unless NullsLast (independent of Desc), as PostgreSQL
// orders them.
func orderCompare(order []plan.ColumnOrder) func(a, b []row.Datum) int {
	return func(a, b []row.Datum) int { return row.CompareColumns(a, b, order) }
}

// sortRow is one counted row being sorted.
type sortRow struct {
	d      RowDiff
	datums []row.Datum
}

// externalSort orders counted rows with orderCompare in bounded memory:
// rows are gathered into a run until the run holds runBytes, then the run
// is sorted and written to a temporary file; the runs are merged at the
// end, reading one row of each at a time. Equal rows keep their arrival
// order (runs are merged with ties going to the earlier run), so the
// result is what a stable in-memory sort gives.
type externalSort struct {
	cmp      func(a, b []row.Datum) int
	dir      string
	runBytes uint64 // 0: never spill
	run      []sortRow
	used     uint64
	files    []*os.File
}

func newExternalSort(order []plan.ColumnOrder, dir string, runBytes uint64) *externalSort {
	return &externalSort{cmp: orderCompare(order), dir: dir, runBytes: runBytes}
}

func (x *externalSort) less(a, b sortRow) int { return x.cmp(a.datums, b.datums) }

// add takes one row.
func (x *externalSort) add(d RowDiff) error {
	if d.Diff < 0 {
		return sqlerr.Errorf(sqlerr.InternalError, "result has a row with negative multiplicity %d", d.Diff)
	}
	datums, err := d.Row.Unpack()
	if err != nil {
		return fmt.Errorf("decode result row: %w", err)
	}
	x.run = append(x.run, sortRow{d: d, datums: datums})
	x.used += uint64(len(d.Row)) + rowOverhead + datumSize*uint64(len(datums))
	if x.runBytes > 0 && x.used >= x.runBytes {
		return x.spill()
	}
	return nil
}

// spill sorts the current run and writes it to a new file.
func (x *externalSort) spill() error {
	slices.SortStableFunc(x.run, x.less)
	if err := os.MkdirAll(x.dir, 0o700); err != nil {
		return fmt.Errorf("order by: spill a sorted run: %w", err)
	}
	f, err := os.CreateTemp(x.dir, "peek-sort-*.spill")
	if err != nil {
		return fmt.Errorf("order by: spill a sorted run: %w", err)
	}
	// Removed by close; files a crash leaves behind are removed at the
	// next start with the peek spill files (same directory and pattern).
	x.files = append(x.files, f)
	w := bufio.NewWriterSize(f, 64<<10)
	var hdr [binary.MaxVarintLen64]byte
	for _, r := range x.run {
		n := binary.PutUvarint(hdr[:], uint64(len(r.d.Row)))
		w.Write(hdr[:n])
		w.Write(r.d.Row)
		n = binary.PutUvarint(hdr[:], uint64(r.d.Diff))
		w.Write(hdr[:n])
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("order by: spill a sorted run: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("order by: spill a sorted run: %w", err)
	}
	x.run, x.used = nil, 0
	return nil
}

// runs returns how many runs went to disk so far.
func (x *externalSort) runs() int { return len(x.files) }

// close releases the run files.
func (x *externalSort) close() {
	for _, f := range x.files {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}
	x.files = nil
	x.run = nil
}

// sorted returns the rows in order, as PeekRows; closing them releases
// the run files.
func (x *externalSort) sorted() (PeekRows, error) {
	if len(x.files) == 0 {
		slices.SortStableFunc(x.run, x.less)
		out := make([]RowDiff, len(x.run))
		for i, r := range x.run {
			out[i] = r.d
		}
		x.run = nil
		return RowsOf(out), nil
	}
	if len(x.run) > 0 {
		if err := x.spill(); err != nil {
			x.close()
			return nil, err
		}
	}
	m := &runMerge{x: x}
	for i, f := range x.files {
		rr := &runReader{r: bufio.NewReaderSize(f, 64<<10), idx: i}
		ok, err := rr.next()
		if err != nil {
			x.close()
			return nil, err
		}
		if ok {
			m.h = append(m.h, rr)
		}
	}
	heap.Init(m)
	return m, nil
}

// runReader reads one sorted run back, one row at a time.
type runReader struct {
	r   *bufio.Reader
	idx int // run number, for ties
	cur sortRow
}

func (rr *runReader) next() (bool, error) {
	n, err := binary.ReadUvarint(rr.r)
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("order by: read a sorted run: %w", err)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(rr.r, buf); err != nil {
		return false, fmt.Errorf("order by: read a sorted run: %w", err)
	}
	diff, err := binary.ReadUvarint(rr.r)
	if err != nil {
		return false, fmt.Errorf("order by: read a sorted run: %w", err)
	}
	datums, err := row.Row(buf).Unpack()
	if err != nil {
		return false, fmt.Errorf("order by: decode a sorted row: %w", err)
	}
	rr.cur = sortRow{d: RowDiff{Row: row.Row(buf), Diff: int64(diff)}, datums: datums}
	return true, nil
}

// runMerge merges sorted runs (a heap of their readers) as PeekRows.
type runMerge struct {
	x *externalSort
	h []*runReader
}

func (m *runMerge) Len() int { return len(m.h) }
func (m *runMerge) Less(i, j int) bool {
	if c := m.x.less(m.h[i].cur, m.h[j].cur); c != 0 {
		return c < 0
	}
	return m.h[i].idx < m.h[j].idx
}
func (m *runMerge) Swap(i, j int) { m.h[i], m.h[j] = m.h[j], m.h[i] }
func (m *runMerge) Push(v any)    { m.h = append(m.h, v.(*runReader)) }
func (m *runMerge) Pop() any {
	v := m.h[len(m.h)-1]
	m.h = m.h[:len(m.h)-1]
	return v
}

func (m *runMerge) Next() (RowDiff, bool, error) {
	if len(m.h) == 0 {
		return RowDiff{}, false, nil
	}
	top := m.h[0]
	d := top.cur.d
	ok, err := top.next()
	if err != nil {
		return RowDiff{}, false, err
	}
	if ok {
		heap.Fix(m, 0)
	} else {
		heap.Pop(m)
	}
	return d, true, nil
}

func (*runMerge) Streamed() bool { return true }
func (m *runMerge) Close()       { m.x.close(); m.h = nil }

// sortRows orders pr's rows by order under max_query_memory: rows beyond
// the budget are sorted on disk (externalSort), so memory stays bounded
// however large the result. It closes pr.
func (s *Session) sortRows(pr PeekRows, order []plan.ColumnOrder, limit uint64) (PeekRows, error) {
	defer pr.Close()
	x := newExternalSort(order, s.spillDir(), limit/2)
	for {
		d, ok, err := pr.Next()
		if err != nil {
			x.close()
			return nil, fmt.Errorf("read peek result: %w", err)
		}
		if !ok {
			break
		}
		if err := x.add(d); err != nil {
			x.close()
			return nil, err
		}
	}
	return x.sorted()
}

// datumsSize is what holding one decoded row costs.
func datumsSize(d []row.Datum) uint64 { return datumSize*uint64(len(d)) + 24 }
