package render

import (
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// Index is one worker's shard of an exported index: the ok rows arranged by
// the index key (value = whole row) and the error rows arranged by
// themselves. It holds one compaction handle on each trace, at the
// dataflow's as_of until AllowCompaction advances it; peeks and imports read
// through it. All methods run on the owning worker goroutine except where
// noted.
type Index struct {
	Ok, Err *Arranged
	okHold  *trace.Handle
	errHold *trace.Handle
	inputs  []*dataflow.Operator
	asOf    frontier.Frontier
	until   frontier.Frontier
}

// ErrBeyondUntil: a read at or beyond the dataflow's until, where the index
// holds no updates.
var ErrBeyondUntil = errors.New("render: read at or beyond the dataflow's until")

func newIndex(name string, ok, errs *Arranged, asOf, until frontier.Frontier, inputs []*dataflow.Operator) *Index {
	idx := &Index{Ok: ok, Err: errs, okHold: ok.Trace.NewHandle("export " + name), errHold: errs.Trace.NewHandle("export errors " + name), inputs: inputs, asOf: asOf, until: until}
	idx.AllowCompaction(asOf)
	return idx
}

// AllowCompaction advances the export's holds to f (never backwards); a
// closed f releases them.
func (x *Index) AllowCompaction(f frontier.Frontier) {
	for _, h := range []*trace.Handle{x.okHold, x.errHold} {
		if f.IsClosed() {
			h.Release()
			continue
		}
		if l, _ := h.Frontiers(); !l.LessEqual(f) {
			continue
		}
		// Fails only on a released handle (after a drop): nothing to hold.
		_ = h.SetLogical(f)
		_ = h.SetPhysical(f)
	}
}

// AsOf returns the dataflow's as_of: the index is hydrated once its upper
// is beyond it.
func (x *Index) AsOf() frontier.Frontier { return x.asOf }

// Since returns the export's compaction frontier.
func (x *Index) Since() frontier.Frontier { l, _ := x.okHold.Frontiers(); return l }

// Upper returns the meet of the ok and error traces' uppers: times before
// it are complete in the index. Safe from any goroutine.
func (x *Index) Upper() frontier.Frontier {
	return frontier.Meet(x.Ok.Trace.Upper(), x.Err.Trace.Upper())
}

// InputFrontier returns the meet of the frontiers of the dataflow's sources
// and imports on this worker.
func (x *Index) InputFrontier() frontier.Frontier {
	f := frontier.Closed()
	for _, op := range x.inputs {
		f = frontier.Meet(f, op.Frontier())
	}
	return f
}

// ReadAt captures both traces for a read at t. It returns
// trace.ErrNotYetReadable (wrapped) while t is not complete in either, and
// trace.ErrCompacted when t is before the export's since. Safe from any
// goroutine (the runtime serves sealed point reads off the workers with it).
func (x *Index) ReadAt(t frontier.Time) (ok, errs trace.Read, err error) {
	if since := x.Since(); !since.LessEqualTime(t) {
		return ok, errs, fmt.Errorf("read at %d before the index's since %v: %w", t, since, trace.ErrCompacted)
	}
	if x.until.LessEqualTime(t) {
		return ok, errs, fmt.Errorf("read at %d (until %v): %w", t, x.until, ErrBeyondUntil)
	}
	if ok, err = x.Ok.Trace.ReadAt(t); err != nil {
		return ok, errs, err
	}
	if errs, err = x.Err.Trace.ReadAt(t); err != nil {
		return ok, errs, err
	}
	return ok, errs, nil
}

// release drops the export's holds (dataflow drop).
func (x *Index) release() {
	x.okHold.Release()
	x.errHold.Release()
}
