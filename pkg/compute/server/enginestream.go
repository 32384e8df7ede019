package server

import (
	"errors"
	"io"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

// engineStream adapts a runtime.PeekStream to a RowStream, applying the
// part of a finishing a stream can: a limit (counting multiplicities). A
// stream is only made for peeks without order, offset or projection
// (Engine.Peek), so nothing else is left to apply.
type engineStream struct {
	s     *runtime.PeekStream
	limit int64 // remaining rows; < 0: no limit
	done  bool
}

func newEngineStream(s *runtime.PeekStream, f *plan.Finishing) *engineStream {
	es := &engineStream{s: s, limit: -1}
	if f != nil && f.Limit != nil {
		es.limit = max(*f.Limit, 0)
	}
	return es
}

// TryNext implements RowStream.
func (e *engineStream) TryNext() ([]row.RowCount, bool, error) {
	if e.done || e.limit == 0 {
		if !e.done {
			e.done = true
			e.s.Close() // the limit is reached: stop the walks
		}
		return nil, false, io.EOF
	}
	rows, ok, err := e.s.TryNext()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			err = translate(err)
		}
		return nil, false, err
	}
	if !ok {
		return nil, false, nil
	}
	out := make([]row.RowCount, 0, len(rows))
	for _, r := range rows {
		if r.Count < 0 {
			return nil, false, coded(CodeInternal, "peek result row %s has negative count %d", r.Row, r.Count)
		}
		n := r.Count
		if e.limit >= 0 {
			n = min(n, e.limit)
			e.limit -= n
		}
		if n > 0 {
			out = append(out, row.RowCount{Row: r.Row, Count: n})
		}
		if e.limit == 0 {
			break
		}
	}
	return out, true, nil
}

// Notify implements RowStream.
func (e *engineStream) Notify(wake func()) { e.s.Notify(wake) }

// Close implements RowStream.
func (e *engineStream) Close() { e.s.Close() }
