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
	// Read a little in the future: waits for a refresh after the index
	// had data.
	at := frontier.Time(time.Now().UnixMilli()) + 30
	rows, err := h.Peek(ids[logging.Arrangements], at, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := show(rows)
	// Each worker has a shard of index u3 (2 records in total); the
	// logging indexes themselves appear too.
	if !strings.Contains(got, `('u3', 0,`) || !strings.Contains(got, `('u3', 1,`) {
		t.Fatalf("arrangements: %s", got)
	}
	rows, err = h.Peek(ids[logging.Operators], at, nil)
	if err != nil || !strings.Contains(show(rows), "Arrange export u3") {
		t.Fatalf("operators: %v %s", err, show(rows))
	}
	rows, err = h.Peek(ids[logging.WorkerSteps], at, nil)
	if err != nil || len(rows) == 0 {
		t.Fatalf("worker steps: %v %s", err, show(rows))
	}
	// A pending peek shows up in the peeks relation.
	pending := h.StartPeek(index, 1_000_000, nil)
	deadline := time.Now().Add(5 * time.Second)
	for {
		rows, err := h.Peek(ids[logging.Peeks], frontier.Time(time.Now().UnixMilli())+20, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(show(rows), pending) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending peek never listed: %s", show(rows))
		}
	}
	h.CancelPeek(pending)
}
