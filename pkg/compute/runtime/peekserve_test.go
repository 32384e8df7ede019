package runtime_test

import (
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// gate is a source whose every Poll holds the worker until the test
// releases it: a maintenance step that takes as long as the test wants.
type gate struct {
	entered chan struct{} // one per Poll that started
	release chan struct{} // one per Poll allowed to end
	done    chan struct{} // closed at cleanup: every Poll ends
	once    sync.Once
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, 16), release: make(chan struct{}), done: make(chan struct{})}
}

func (g *gate) close() { g.once.Do(func() { close(g.done) }) }

func (g *gate) OpenSource(_ plan.SourceImport, ctx render.SourceContext) (render.Source, error) {
	return &gateSource{g: g, activate: ctx.Activate}, nil
}

type gateSource struct {
	g        *gate
	activate func()
}

func (s *gateSource) Poll(dst []dataflow.Update) ([]dataflow.Update, frontier.Frontier, error) {
	select {
	case s.g.entered <- struct{}{}:
	default:
	}
	select {
	case <-s.g.release:
		s.activate() // more work: the worker steps again at once
	case <-s.g.done:
	}
	return dst, frontier.At(1), nil
}

func (s *gateSource) Close() {}

// TestSealedPeekIsServedBetweenSteps checks when a maintenance runtime
// answers a peek whose time is already readable, counted in steps rather
// than time: a peek that arrives while the worker is inside a long step
// (another dataflow's source holds it) is answered when that step ends,
// before the worker's next step, which holds it again. Registered without
// a readability check, the peek waited in the worker's state for the end
// of the next step as well: every maintenance-routed read paid up to two
// long steps (it then fails here, the gate never being released again).
func TestSealedPeekIsServedBetweenSteps(t *testing.T) {
	g := newGate()
	h := runtimetest.New(t, runtimetest.Options{Workers: 1, Timeout: 5 * time.Second,
		Sources: render.SourceKinds{plan.SourceLoadGen: g}})
	t.Cleanup(g.close) // runs before the harness stops its runtimes
	tbl := h.Table(src)
	h.MustCreate(indexDesc(0))
	if err := tbl.Append([]dataflow.Update{kv(1, 10, 1, 1)}, frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	if rows, err := h.Peek(index, 4, nil); err != nil || len(rows) != 1 {
		t.Fatalf("peek before the long steps: %v %v", rows, err)
	}
	gated := plan.User(20)
	h.MustCreate(plan.DataflowDescription{
		ID: plan.Transient(2), DebugName: "gated", Class: plan.ClassMaintained,
		SourceImports: []plan.SourceImport{{ID: gated, Desc: kvDesc, Connection: plan.SourceConnection{Kind: plan.SourceLoadGen}}},
		IndexExports:  []plan.IndexExport{{ID: plan.User(21), On: gated, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:          frontier.At(0), Until: frontier.Closed(),
	})
	wait := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	wait("the first long step", g.entered)
	uuid := h.StartPeek(index, 4, nil) // sealed: the index is complete at 5
	g.release <- struct{}{}            // the step in progress ends
	wait("the next long step", g.entered)
	// The worker is held again. The peek was answered in between.
	rows, err := h.AwaitPeek(uuid)
	if err != nil || len(rows) != 1 {
		t.Fatalf("peek not answered between the two steps: %v %v", rows, err)
	}
}
