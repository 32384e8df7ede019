package placement

import (
	"sync"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/trace"
	"github.com/tandemdb/tandem/pkg/sharing"
)

// stalledWorkers is an inner runtime whose workers are stuck in a long
// step: what it is asked to run on them waits until run is called.
type stalledWorkers struct {
	nullTarget
	mu      sync.Mutex
	workers int
	queued  []func(int) error
}

func (s *stalledWorkers) OnWorkers(fn func(int) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued = append(s.queued, fn)
}

// run ends the long step: the workers apply what was queued.
func (s *stalledWorkers) run(t *testing.T) {
	s.mu.Lock()
	q := s.queued
	s.queued = nil
	s.mu.Unlock()
	for _, fn := range q {
		for w := range s.workers {
			if err := fn(w); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestHoldGapRisesWhileInteractiveStalls: the interactive runtime's
// standing hold on a peer index advances when its workers apply the
// compaction. While they are stalled, maintenance's compaction of the
// published index is held back and the hold gap shows by how much; once
// they run, the gap closes. With the hold advanced at dispatch the gap
// would stay 0 throughout.
func TestHoldGapRisesWhileInteractiveStalls(t *testing.T) {
	const workers = 2
	reg := sharing.NewRegistry()
	inner := &stalledWorkers{workers: workers}
	in := newTestInteractive(t, InteractiveConfig{Registry: reg, Workers: workers, Respond: func(runtime.Response) {}}, inner)
	defer in.Close()
	maint := newTestMaintenance(t, reg, &nullTarget{})
	id := plan.User(9)
	desc := plan.DataflowDescription{ID: id, IndexExports: []plan.IndexExport{{ID: id}}, Class: plan.ClassMaintained, AsOf: frontier.At(0)}
	if err := maint.CreateDataflow(desc); err != nil {
		t.Fatal(err)
	}
	if err := in.CreateDataflow(desc); err != nil {
		t.Fatal(err)
	}
	var pubs []runtime.Publication
	for w := range workers {
		ok, errs := trace.New(frontier.Minimum()), trace.New(frontier.Minimum())
		insertRows(t, ok, 0, 100, 1, 10)
		sealEmpty(t, errs, 0, 100)
		pub, err := maint.Publish(id, w, ok, errs)
		if err != nil {
			t.Fatal(err)
		}
		pubs = append(pubs, pub)
	}
	// The controller allows compaction to 60: maintenance asks for it on
	// its publications, the interactive runtime gets the command while
	// its workers are stalled.
	for _, p := range pubs {
		if err := p.Compact(frontier.At(60)); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.AllowCompaction(id, frontier.At(60)); err != nil {
		t.Fatal(err)
	}
	g := reg.HoldGaps(runtime.Maintenance.String())
	if g.MaxGapMillis != 60 || g.Held != 2*workers {
		t.Fatalf("while the interactive workers stall: hold gap %d ms over %d of %d points, want 60 ms over all %d",
			g.MaxGapMillis, g.Held, g.Published, 2*workers)
	}
	inner.run(t)
	if g := reg.HoldGaps(runtime.Maintenance.String()); g.MaxGapMillis != 0 || g.Held != 0 {
		t.Fatalf("after the interactive workers applied the compaction: hold gap %d ms over %d points, want none", g.MaxGapMillis, g.Held)
	}
}
