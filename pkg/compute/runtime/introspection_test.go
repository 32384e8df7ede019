package runtime_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/logging"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

func TestIntrospectionIsPeekable(t *testing.T) {
	h := runtimetest.New(t, runtimetest.Options{Workers: 2})
	tbl := h.Table(src)
	h.MustCreate(indexDesc(0))
	if err := tbl.Append([]dataflow.Update{kv(1, 1, 1, 1), kv(2, 2, 1, 1)}, frontier.At(2)); err != nil {
		t.Fatal(err)
	}
	ids := map[logging.Relation]plan.GlobalID{}
	for i, rel := range logging.Relations() {
		ids[rel] = plan.System(uint64(i + 1))
	}
	start := frontier.Time(time.Now().UnixMilli())
	if err := h.RTs[0].EnableIntrospection(ids, 10*time.Millisecond, frontier.At(start)); err != nil {
		t.Fatal(err)
	}
	// Introspection at time t is the latest snapshot each worker took at or
	// before t; a worker's first snapshot happens when it builds the
	// logging dataflow, so read at later and later times until it shows.
	eventually := func(rel logging.Relation, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			rows, err := h.Peek(ids[rel], frontier.Time(time.Now().UnixMilli())+20, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := show(rows); ok(got) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never satisfied the test: %s", rel, show(rows))
			}
		}
	}
	// Each worker has a shard of index u3 (2 records in total); the
	// logging indexes themselves appear too.
	eventually(logging.Arrangements, func(got string) bool {
		return strings.Contains(got, "('u3', 0,") && strings.Contains(got, "('u3', 1,") && strings.Contains(got, "('s5', 1,")
	})
	eventually(logging.Operators, func(got string) bool { return strings.Contains(got, "Arrange export u3") })
	eventually(logging.WorkerSteps, func(got string) bool { return strings.Contains(got, "(0, ") && strings.Contains(got, "(1, ") })
	eventually(logging.Frontiers, func(got string) bool { return strings.Contains(got, "('u3', 1, 2, 2)") })
	eventually(logging.Hydration, func(got string) bool {
		return strings.Contains(got, "('u3', 0, ") && !strings.Contains(got, "('u3', 0, NULL)")
	})
	eventually(logging.PeekDurations, func(got string) bool { return strings.Contains(got, "(0, ") })
	// A pending peek shows up in the peeks relation.
	pending := h.StartPeek(index, 1_000_000, nil)
	eventually(logging.Peeks, func(got string) bool { return strings.Contains(got, pending) })
	h.CancelPeek(pending)
}
