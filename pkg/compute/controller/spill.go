package controller

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// spill holds a replica's stashed peek answer on disk while it arrives, so
// the controller keeps at most one chunk of it in memory: each stashed
// chunk is appended to a temporary file as it is received, and the winning
// answer is handed to the caller as a SpilledRows that reads the file back
// one row at a time. Records are (uvarint row length, row bytes, uvarint
// count). A spill belongs to one replica's answer to one peek; whoever ends
// up holding it closes it, which removes the file.
type spill struct {
	f    *os.File
	w    *bufio.Writer
	rows uint64
	err  error
}

func newSpill(dir string) (*spill, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("peek spill: %w", err)
	}
	f, err := os.CreateTemp(dir, "peek-*.spill")
	if err != nil {
		return nil, fmt.Errorf("peek spill: %w", err)
	}
	return &spill{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// append writes a chunk's rows; the first error sticks.
func (s *spill) append(rows []*computepb.RowCount) {
	if s.err != nil {
		return
	}
	var hdr [binary.MaxVarintLen64]byte
	for _, rc := range rows {
		n := binary.PutUvarint(hdr[:], uint64(len(rc.GetRow())))
		if _, err := s.w.Write(hdr[:n]); err != nil {
			s.err = err
			return
		}
		if _, err := s.w.Write(rc.GetRow()); err != nil {
			s.err = err
			return
		}
		n = binary.PutUvarint(hdr[:], rc.GetCount())
		if _, err := s.w.Write(hdr[:n]); err != nil {
			s.err = err
			return
		}
		s.rows++
	}
}

// finish flushes the file and returns a reader over it that applies f
// (no ordering: a finishing with an order is applied in memory instead).
func (s *spill) finish(f *finishingStream) (*SpilledRows, error) {
	if s.err == nil {
		s.err = s.w.Flush()
	}
	if s.err == nil {
		_, s.err = s.f.Seek(0, io.SeekStart)
	}
	if s.err != nil {
		err := s.err
		s.close()
		return nil, fmt.Errorf("peek spill: %w", err)
	}
	return &SpilledRows{s: s, r: bufio.NewReaderSize(s.f, 64<<10), fin: f}, nil
}

// readAll reads every row back into memory (for a finishing that orders).
func (s *spill) readAll() ([]row.RowCount, error) {
	sr, err := s.finish(nil)
	if err != nil {
		return nil, err
	}
	defer sr.Close()
	out := make([]row.RowCount, 0, s.rows)
	for {
		rc, ok, err := sr.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, rc)
	}
}

// close removes the file.
func (s *spill) close() {
	if s.f == nil {
		return
	}
	name := s.f.Name()
	_ = s.f.Close()
	_ = os.Remove(name)
	s.f = nil
}

// SpilledRows is a peek result read back from the controller's spill file,
// one row at a time, in the order the replica sent it. Close removes the
// file; it must be called. Not safe for concurrent use.
type SpilledRows struct {
	s   *spill
	r   *bufio.Reader
	fin *finishingStream
}

// Next returns the next row; ok=false at the end.
func (sr *SpilledRows) Next() (rc row.RowCount, ok bool, err error) {
	for {
		if sr.s.f == nil {
			return row.RowCount{}, false, errors.New("peek spill: read after close")
		}
		if sr.fin != nil && sr.fin.done() {
			return row.RowCount{}, false, nil
		}
		n, err := binary.ReadUvarint(sr.r)
		if errors.Is(err, io.EOF) {
			return row.RowCount{}, false, nil
		}
		if err != nil {
			return row.RowCount{}, false, fmt.Errorf("peek spill: %w", err)
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(sr.r, buf); err != nil {
			return row.RowCount{}, false, fmt.Errorf("peek spill: %w", err)
		}
		count, err := binary.ReadUvarint(sr.r)
		if err != nil {
			return row.RowCount{}, false, fmt.Errorf("peek spill: %w", err)
		}
		if count > math.MaxInt64 {
			return row.RowCount{}, false, fmt.Errorf("peek spill: count %d beyond int64", count)
		}
		rc = row.RowCount{Row: buf, Count: int64(count)}
		if sr.fin == nil {
			return rc, true, nil
		}
		rc, keep, err := sr.fin.apply(rc)
		if err != nil {
			return row.RowCount{}, false, err
		}
		if keep {
			return rc, true, nil
		}
	}
}

// Rows is the number of rows stored (before offset and limit).
func (sr *SpilledRows) Rows() uint64 { return sr.s.rows }

// Close removes the spill file.
func (sr *SpilledRows) Close() { sr.s.close() }

// finishingStream applies offset, limit and projection of a finishing
// without an order to rows as they pass, counting multiplicities as
// applyFinishing does.
type finishingStream struct {
	offset, limit int64
	limited       bool
	kept          int64
	project       []int
}

func newFinishingStream(f *plan.Finishing) *finishingStream {
	fs := &finishingStream{}
	if f == nil {
		return fs
	}
	fs.offset = f.Offset
	if f.Limit != nil {
		fs.limited, fs.limit = true, *f.Limit
	}
	fs.project = f.Project
	return fs
}

func (fs *finishingStream) done() bool { return fs.limited && fs.kept >= fs.limit }

func (fs *finishingStream) apply(rc row.RowCount) (row.RowCount, bool, error) {
	n := rc.Count
	if fs.offset > 0 {
		skip := min(fs.offset, n)
		fs.offset -= skip
		n -= skip
	}
	if fs.limited {
		n = min(n, fs.limit-fs.kept)
	}
	if n <= 0 {
		return row.RowCount{}, false, nil
	}
	fs.kept += n
	r := rc.Row
	if fs.project != nil {
		p, err := row.Project(r, fs.project)
		if err != nil {
			return row.RowCount{}, false, fmt.Errorf("finishing: project: %w", err)
		}
		r = p
	}
	return row.RowCount{Row: r, Count: n}, true, nil
}
