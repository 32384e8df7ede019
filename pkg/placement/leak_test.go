package placement

import (
	"fmt"
	"testing"

	"go.uber.org/goleak"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/sharing"
)

// TestManyCanceledPeerPeeksLeaveNoGoroutine parks 500 peer peeks of the
// interactive runtime on an index nobody has published (each waits in the
// registry on its own goroutine), cancels them all, and checks that each is
// answered canceled exactly once and that every goroutine they started has
// ended while the runtime is still running, not merely at Close.
func TestManyCanceledPeerPeeksLeaveNoGoroutine(t *testing.T) {
	reg := sharing.NewRegistry()
	col := &collector{ch: make(chan *runtime.PeekResponse, 1024)}
	in := newTestInteractive(t, InteractiveConfig{Registry: reg, Workers: 2, Respond: col.respond}, &nullTarget{})
	defer in.Close()
	id := plan.User(11)
	desc := plan.DataflowDescription{ID: id, IndexExports: []plan.IndexExport{{ID: id}}, Class: plan.ClassMaintained, AsOf: frontier.At(0)}
	if err := in.CreateDataflow(desc); err != nil {
		t.Fatal(err)
	}
	baseline := goleak.IgnoreCurrent()
	const n = 500
	for i := range n {
		in.Peek(runtime.Peek{UUID: fmt.Sprint("p", i), Target: id, Timestamp: 100})
	}
	for i := range n {
		in.CancelPeek(fmt.Sprint("p", i))
	}
	seen := map[string]int{}
	for range n {
		p := col.next(t)
		if !p.Canceled {
			t.Fatalf("peek %s: want canceled, got %+v", p.UUID, p)
		}
		seen[p.UUID]++
	}
	for uuid, k := range seen {
		if k != 1 {
			t.Fatalf("peek %s answered %d times", uuid, k)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d distinct peeks answered, want %d", len(seen), n)
	}
	goleak.VerifyNone(t, baseline)
	// A late cancel of an answered peek goes to the inner runtime, which
	// does not know it either; nothing more is answered.
	in.CancelPeek("p0")
	select {
	case p := <-col.ch:
		t.Fatalf("answer after the last cancel: %+v", p)
	default:
	}
}
