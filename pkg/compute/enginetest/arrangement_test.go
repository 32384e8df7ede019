package enginetest

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// keyed is one update of a keyed collection (an arrangement's input).
type keyed struct {
	key, val []byte
	t        frontier.Time
	diff     int64
}

// arrangement is a collection arranged by key and sharded over workers the
// way the runtime shards it (row.Hash(key) % workers). Each shard is a real
// trace (spine, fuelled merges, logical compaction); the operator that
// reads it holds one handle per shard at the start of its next step, so
// the trace compacts every earlier time to that frontier while the cut
// there survives merging.
type arrangement struct {
	shards  []*trace.Trace
	handles []*trace.Handle
	builder batch.Builder
	lower   frontier.Frontier
}

func newArrangement(workers int, name string) *arrangement {
	a := &arrangement{lower: frontier.Minimum()}
	for w := range workers {
		tr := trace.New(frontier.Minimum())
		a.shards = append(a.shards, tr)
		a.handles = append(a.handles, tr.NewHandle(fmt.Sprintf("%s shard %d", name, w)))
	}
	return a
}

// insert seals the updates of [lower, f1) into one batch per shard. fuel is
// merge effort spent afterwards, so that merges (with compaction) happen
// at random points relative to the reads.
func (a *arrangement) insert(upds []keyed, f1 frontier.Frontier, fuel int) error {
	for w, tr := range a.shards {
		for _, u := range upds {
			if int(row.Hash(u.key)%uint64(len(a.shards))) == w {
				a.builder.Push(u.key, u.val, u.t, u.diff)
			}
		}
		b, err := a.builder.Build(batch.Description{Lower: a.lower, Upper: f1, Since: frontier.Minimum()})
		if err != nil {
			return fmt.Errorf("arrange shard %d: %w", w, err)
		}
		if err := tr.Insert(b); err != nil {
			return fmt.Errorf("arrange shard %d: %w", w, err)
		}
		f := fuel
		tr.Exert(&f)
	}
	a.lower = f1
	return nil
}

// split returns shard w's batches before f0 and in [f0, f1).
func (a *arrangement) split(w int, f0, f1 frontier.Frontier) (old, fresh []*batch.Batch, err error) {
	bs, err := a.handles[w].BatchesThrough(f1)
	if err != nil {
		return nil, nil, fmt.Errorf("shard %d: %w", w, err)
	}
	return operators.SplitAt(bs, f0)
}

// advance moves the reading operator's holds to f1: everything before f1
// may now be merged and compacted to f1.
func (a *arrangement) advance(f1 frontier.Frontier) error {
	for w, h := range a.handles {
		if err := h.SetLogical(f1); err != nil {
			return fmt.Errorf("shard %d: %w", w, err)
		}
		if err := h.SetPhysical(f1); err != nil {
			return fmt.Errorf("shard %d: %w", w, err)
		}
	}
	return nil
}

func (a *arrangement) release() {
	for _, h := range a.handles {
		h.Release()
	}
}
