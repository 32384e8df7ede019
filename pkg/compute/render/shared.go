package render

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// SharedArrangement is one worker's shard of an arrangement another runtime
// of this process publishes (pkg/sharing behind pkg/placement; the engine
// knows neither).
type SharedArrangement interface {
	// Snapshot returns the published batch chain and upper; published is
	// false for a placeholder, dropped true once the publisher dropped it.
	Snapshot() (batches []*batch.Batch, upper frontier.Frontier, published, dropped bool)
	// OnChange registers fn, called from any goroutine after every
	// publication; the returned function unregisters it.
	OnChange(fn func()) (cancel func())
}

// SharedImports resolves index imports of indexes this runtime does not
// build but another runtime of its process publishes (its peers).
type SharedImports interface {
	// Has reports whether id is a peer index.
	Has(id plan.GlobalID) bool
	// Import returns global worker's ok and error shards of peer index id.
	Import(id plan.GlobalID, worker int) (ok, errs SharedArrangement, found bool)
}

// ImportShared makes a peer index importable by the dataflow being built:
// an *Index whose traces mirror the publisher's chains. The batches are the
// publisher's own (immutable, so shared without a copy), and each mirror
// holds its physical frontier at its lower so it never merges them into
// copies: a sync's inserts start no merge, so the import's schedule does
// work in the chain's length (O(log n) batches), never in its updates. The
// dataflow is built at once, even when nothing is published yet
// (builds are never deferred or reordered): the mirrors start empty and an
// operator fills them on the worker goroutine when the publisher wakes it.
//
// Shared imports serve one-shot reads: the mirror loads the chain once it is
// sealed past the dataflow's as_of and then appends only batches that begin
// exactly at its upper; if the publisher merged across that point the mirror
// stops following (a one-shot read never needs more). The standing hold of
// the importing runtime (I1c) keeps the publisher's since at or below the
// as_of until then.
func ImportShared(b *dataflow.Builder, name string, ok, errs SharedArrangement, asOf frontier.Frontier, fail func(error)) *Index {
	okM := newMirror(ok, "shared "+name)
	errM := newMirror(errs, "shared errors "+name)
	lg := &sharedImportLogic{name: name, mirrors: [2]*mirror{okM, errM}, asOf: asOf, fail: fail}
	op := b.AddOperator("SharedImport "+name, nil, 0, lg)
	activate := op.Activator()
	lg.cancels = []func(){ok.OnChange(activate), errs.OnChange(activate)}
	b.OnDrop(lg.drop)
	return &Index{Ok: okM.arranged, Err: errM.arranged}
}

type mirror struct {
	src       SharedArrangement
	tr        *trace.Trace
	pin       *trace.Handle
	arranged  *Arranged
	listeners []func()
	loaded    bool
	stale     bool
}

func newMirror(src SharedArrangement, name string) *mirror {
	tr := trace.New(frontier.Minimum())
	m := &mirror{src: src, tr: tr, pin: tr.NewHandle(name + " pin")}
	m.arranged = &Arranged{Trace: tr, listeners: &m.listeners}
	return m
}

// sync copies newly published batches into the mirror and reports whether
// its upper advanced.
func (m *mirror) sync(asOf frontier.Frontier) (bool, error) {
	batches, upper, published, dropped := m.src.Snapshot()
	switch {
	case dropped:
		// The controller holds an index for as long as a read of it is
		// in flight, so this is a dataflow being dropped too: stop
		// following; its own drop releases the mirror.
		m.stale = true
		return false, nil
	case !published || m.stale:
		return false, nil
	case !m.loaded:
		if t, ok := asOf.Time(); ok && !upper.IsComplete(t) {
			return false, nil // not sealed at the as_of yet
		}
		m.loaded = true
	}
	start := m.tr.Upper()
	cur := start
	for _, bt := range batches {
		if bt.Upper().LessEqual(cur) {
			continue
		}
		if bt.Lower() != cur {
			if cur == frontier.Minimum() && cur.Less(bt.Lower()) {
				// The chain starts after the minimum time: pad the gap
				// with an empty batch so the mirror stays contiguous.
				if err := m.insertEmpty(cur, bt.Lower()); err != nil {
					return false, err
				}
				cur = bt.Lower()
			} else {
				m.stale = true
				break
			}
		}
		if err := m.tr.Insert(bt); err != nil {
			return false, fmt.Errorf("mirror shared batch: %w", err)
		}
		cur = bt.Upper()
	}
	return start != cur, nil
}

func (m *mirror) insertEmpty(lo, hi frontier.Frontier) error {
	var bld batch.Builder
	bt, err := bld.Build(batch.Description{Lower: lo, Upper: hi, Since: frontier.Minimum()})
	if err != nil {
		return err
	}
	return m.tr.Insert(bt)
}

type sharedImportLogic struct {
	name    string
	mirrors [2]*mirror
	asOf    frontier.Frontier
	fail    func(error)
	cancels []func()
}

func (lg *sharedImportLogic) Schedule(op *dataflow.Operator) {
	for _, m := range lg.mirrors {
		advanced, err := m.sync(lg.asOf)
		if err != nil {
			lg.fail(fmt.Errorf("import %s: %w", lg.name, err))
			return
		}
		if advanced {
			for _, f := range m.listeners {
				if f != nil {
					f()
				}
			}
		}
	}
}

func (lg *sharedImportLogic) drop() {
	for _, c := range lg.cancels {
		c()
	}
	for _, m := range lg.mirrors {
		m.pin.Release()
	}
}
