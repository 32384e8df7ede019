package runtime_test

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// TestOneShotReductionReadsImportThroughCursors: a reduction over an
// imported index in a dataflow read only at its as_of (until = as_of+1)
// answers like the same dataflow maintained, on every runtime shape
// (across processes too), and the runtime counts its imports as read
// through cursors, the maintained one's as flattened.
func TestOneShotReductionReadsImportThroughCursors(t *testing.T) {
	for _, o := range shapes() {
		t.Run(name(o), func(t *testing.T) {
			h := runtimetest.New(t, o)
			tbl := h.Table(src)
			h.MustCreate(indexDesc(0))
			if err := tbl.Append([]dataflow.Update{kv(1, 10, 1, 1), kv(1, 20, 2, 1), kv(2, 5, 3, 1), kv(3, 7, 3, 1), kv(1, 20, 4, -1)}, frontier.At(6)); err != nil {
				t.Fatal(err)
			}
			if err := h.WaitFrontier(index, frontier.At(6)); err != nil {
				t.Fatal(err)
			}
			maintained := countDesc(5)
			oneShot := countDesc(5)
			oneShot.ID, oneShot.Until = plan.Transient(3), frontier.At(6)
			oneShot.ObjectsToBuild[0].ID, oneShot.IndexExports[0].ID, oneShot.IndexExports[0].On = plan.User(7), plan.User(8), plan.User(7)
			h.MustCreate(maintained)
			h.MustCreate(oneShot)
			want, err := h.Peek(plan.User(6), 5, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := h.Peek(plan.User(8), 5, nil)
			if err != nil {
				t.Fatal(err)
			}
			if show(got) != show(want) || show(got) != "(1, 1, 10) x1; (2, 1, 5) x1; (3, 1, 7) x1" {
				t.Fatalf("one-shot %s, maintained %s", show(got), show(want))
			}
			var cursor, flattened uint64
			for _, rt := range h.RTs {
				c, f := rt.ImportCounts()
				cursor, flattened = cursor+c, flattened+f
			}
			// Every worker of every process builds each dataflow.
			n := uint64(o.Workers * max(o.Processes, 1))
			if cursor != n || flattened != n {
				t.Fatalf("imports read by cursor %d, flattened %d; want %d and %d", cursor, flattened, n, n)
			}
		})
	}
}
