package render

import (
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// SharedFollower is a live reader's hold on a shared arrangement at its
// cursor: the publisher's since stays at or below it, and the publisher
// keeps a batch boundary there (pkg/sharing's Follower).
type SharedFollower interface {
	// Advance moves the hold forward to f (never back); closed releases.
	Advance(f frontier.Frontier) error
	// Release drops the hold; it is idempotent.
	Release() error
}

// LiveShared is a SharedArrangement that a dataflow can follow as it
// changes, not only read once.
type LiveShared interface {
	SharedArrangement
	// Since returns the published since, lock-free.
	Since() frontier.Frontier
	// Follow holds the arrangement at t; it fails when the publisher
	// already compacted past t.
	Follow(t frontier.Time) (SharedFollower, error)
}

// ErrLiveImportLost: a live import found the published arrangement
// compacted past its cursor, or merged across it. Its hold makes this
// impossible; the import fails its dataflow rather than read wrong rows.
var ErrLiveImportLost = errors.New("render: live import lost its place in the published arrangement")

// ImportLive renders a peer index for a dataflow that stays up (a
// SUBSCRIBE on the interactive runtime): the collection behind each of the
// index's ok and error shards, its snapshot as of asOf followed by the
// updates of every batch the publisher publishes afterwards, at their own
// times. Nothing is copied into a mirror: each operator walks the
// publisher's immutable batches straight into row updates (pointing into
// them), in slices of flattenFuel updates per schedule, and holds the
// publisher at its cursor through a follower (its since cannot pass the
// cursor and a batch boundary stays there), advanced each time a walk ends.
// The operators' output frontiers are their cursors. It returns the ok rows
// (index values), the error rows (error keys) and the two operators, which
// are the dataflow's inputs.
func ImportLive(b *dataflow.Builder, name string, ok, errs LiveShared, asOf frontier.Frontier, fail func(error)) (okRows, errRows dataflow.Stream, inputs []*dataflow.Operator) {
	okOp := addLive(b, "LiveImport "+name, ok, asOf, false, fail)
	errOp := addLive(b, "LiveImport errors "+name, errs, asOf, true, fail)
	return okOp.Stream(0), errOp.Stream(0), []*dataflow.Operator{okOp, errOp}
}

func addLive(b *dataflow.Builder, name string, src LiveShared, asOf frontier.Frontier, keys bool, fail func(error)) *dataflow.Operator {
	lg := &liveLogic{name: name, src: src, asOf: asOf, cursor: asOf, fail: fail,
		walk: flattenLogic{name: name, asOf: asOf, keys: keys, fuel: flattenFuel}}
	if t, ok := asOf.Time(); ok {
		lg.follower, lg.holdErr = src.Follow(t)
	}
	op := b.AddOperator(name, nil, 1, lg)
	op.SetHold(asOf)
	lg.cancel = src.OnChange(op.Activator())
	return op
}

// liveLogic is one live import operator. Every update before cursor has
// been emitted; the walk in progress covers [cursor, upper) of the chain
// captured when it started (walk.fresh), and the output is held at cursor
// until it ends.
type liveLogic struct {
	name     string
	src      LiveShared
	asOf     frontier.Frontier
	follower SharedFollower
	holdErr  error
	cancel   func()
	fail     func(error)

	cursor  frontier.Frontier
	upper   frontier.Frontier // the end of the walk in progress
	loaded  bool              // the snapshot as of asOf has been emitted
	walking bool
	stopped bool
	walk    flattenLogic // the batch walker (fresh, cursor, out)
}

func (lg *liveLogic) Schedule(op *dataflow.Operator) {
	if lg.stopped {
		return
	}
	if lg.holdErr != nil {
		lg.stop(op, fmt.Errorf("%s: hold as of %v: %w: %w", lg.name, lg.asOf, ErrLiveImportLost, lg.holdErr))
		return
	}
	if !lg.walking {
		fresh, upper, err := lg.next()
		if err != nil {
			lg.stop(op, err)
			return
		}
		if fresh == nil {
			return // nothing new published; OnChange activates us
		}
		lg.upper, lg.walking = upper, true
		w := &lg.walk
		w.fresh, w.next, w.cur, w.remaining = fresh, 0, nil, 0
		for _, b := range fresh {
			w.remaining += b.Len()
		}
	}
	done := lg.walk.walk()
	op.Output(0).SendUpdates(lg.walk.out)
	lg.walk.out = nil
	if !done {
		op.Activate()
		return
	}
	lg.finish(op)
}

// next returns the batches published from the cursor on and their upper,
// or nil when there are none yet. The first call waits until the chain is
// sealed at the as_of and returns all of it (its updates are advanced to
// the as_of by the walk).
func (lg *liveLogic) next() ([]*batch.Batch, frontier.Frontier, error) {
	batches, upper, published, dropped := lg.src.Snapshot()
	switch {
	case dropped:
		// The controller drops a dataflow before the indexes it reads;
		// this one is being dropped too. Stop following; the drop
		// releases the hold.
		lg.stopped = true
		return nil, upper, nil
	case !published || !lg.cursor.Less(upper):
		return nil, upper, nil
	}
	if since := lg.src.Since(); !since.LessEqual(lg.cursor) {
		return nil, upper, fmt.Errorf("%s: published since %v passed the import's cursor %v: %w", lg.name, since, lg.cursor, ErrLiveImportLost)
	}
	if !lg.loaded {
		if t, ok := lg.asOf.Time(); ok && !upper.IsComplete(t) {
			return nil, upper, nil // not sealed at the as_of yet
		}
		return batches, upper, nil
	}
	for i, b := range batches {
		if b.Upper().LessEqual(lg.cursor) {
			continue
		}
		if b.Lower() != lg.cursor {
			return nil, upper, fmt.Errorf("%s: no batch boundary at the import's cursor %v (batch [%v, %v)): %w", lg.name, lg.cursor, b.Lower(), b.Upper(), ErrLiveImportLost)
		}
		return batches[i:], upper, nil
	}
	return nil, upper, nil
}

// finish ends a walk: the cursor, the output hold and the follower move to
// the walk's upper, and the operator runs again if more was published.
func (lg *liveLogic) finish(op *dataflow.Operator) {
	lg.cursor, lg.loaded, lg.walking = lg.upper, true, false
	lg.walk.fresh, lg.walk.cur = nil, nil
	op.SetHold(lg.cursor)
	if lg.follower != nil {
		if err := lg.follower.Advance(lg.cursor); err != nil {
			lg.stop(op, fmt.Errorf("%s: advance hold to %v: %w", lg.name, lg.cursor, err))
			return
		}
	}
	if _, upper, _, _ := lg.src.Snapshot(); lg.cursor.Less(upper) {
		op.Activate()
	}
}

// stop fails the dataflow: the output stays held at the cursor, so nothing
// downstream ever sees a frontier it cannot vouch for.
func (lg *liveLogic) stop(op *dataflow.Operator, err error) {
	lg.stopped = true
	op.SetHold(lg.cursor)
	lg.fail(err)
}

// Drop releases the follower and the activation callback.
func (lg *liveLogic) Drop() {
	if lg.cancel != nil {
		lg.cancel()
	}
	if lg.follower != nil {
		_ = lg.follower.Release()
	}
}

// importLive renders a peer index import of a dataflow that stays up as a
// live import (ImportLive): its rows are a collection from the start, so
// nothing reads it as an arrangement.
func (r *planRenderer) importLive(built *Built, imp plan.IndexImport, ok, errs SharedArrangement) error {
	lok, okLive := ok.(LiveShared)
	lerrs, errsLive := errs.(LiveShared)
	if !okLive || !errsLive {
		return fmt.Errorf("index import %s: the shared arrangement cannot be followed", imp.ID)
	}
	name := imp.ID.String()
	okRows, errRows, ops := ImportLive(r.b, name, lok, lerrs, r.asOf, r.fail)
	built.Inputs = append(built.Inputs, ops...)
	rows := rendered{ok: okRows, errs: []dataflow.Stream{errRows}}
	r.imports[imp.On] = &importedIndex{name: name, key: imp.Key, desc: imp.Desc, errs: errRows, rows: &rows}
	r.objects[imp.On] = rows
	return nil
}
