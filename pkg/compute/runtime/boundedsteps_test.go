package runtime_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// pollGate wraps a source factory: it counts Polls, and holds Polls number
// 2 to holdUntil (the worker with them) until the test releases each.
type pollGate struct {
	inner     render.SourceFactory
	holdUntil int64
	polls     atomic.Int64
	entered   chan int64
	release   chan struct{}
	done      chan struct{}
	once      sync.Once
}

func (g *pollGate) close() { g.once.Do(func() { close(g.done) }) }

func (g *pollGate) OpenSource(imp plan.SourceImport, ctx render.SourceContext) (render.Source, error) {
	s, err := g.inner.OpenSource(imp, ctx)
	if err != nil {
		return nil, err
	}
	return &gatedSource{g: g, inner: s}, nil
}

type gatedSource struct {
	g     *pollGate
	inner render.Source
}

func (s *gatedSource) Poll(dst []dataflow.Update) ([]dataflow.Update, frontier.Frontier, error) {
	if n := s.g.polls.Add(1); n >= 2 && n <= s.g.holdUntil {
		s.g.entered <- n
		select {
		case <-s.g.release:
		case <-s.g.done:
		}
	}
	return s.inner.Poll(dst)
}

func (s *gatedSource) Close() { s.inner.Close() }

// TestSnapshotIngestionYieldsTheWorker checks the bound on a source's step,
// by counting steps: with source_step_items = 1000, a 50,000-key snapshot
// is generated over at least 50 Polls (worker steps), and while it is in
// progress (the source held inside its fourth Poll) another dataflow on the
// same single worker ingests a table write, advances its frontier and
// answers a peek at the new time. With the bound off (0) the first Poll
// generates the whole snapshot and the test fails.
func TestSnapshotIngestionYieldsTheWorker(t *testing.T) {
	const keys, chunk = 50_000, 1000
	g := &pollGate{inner: render.LoadGenerators{}, holdUntil: 4, entered: make(chan int64, 8),
		release: make(chan struct{}), done: make(chan struct{})}
	h := runtimetest.New(t, runtimetest.Options{Workers: 1, Timeout: 30 * time.Second,
		Sources: render.SourceKinds{plan.SourceLoadGen: g}})
	t.Cleanup(g.close)
	if err := h.RTs[0].UpdateConfiguration(map[string]string{"source_step_items": strconv.Itoa(chunk)}); err != nil {
		t.Fatal(err)
	}
	tbl := h.Table(src)
	h.MustCreate(indexDesc(0))
	if err := tbl.Append([]dataflow.Update{kv(1, 10, 1, 1)}, frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	if rows, err := h.Peek(index, 4, nil); err != nil || len(rows) != 1 {
		t.Fatalf("table index before the snapshot: %v %v", rows, err)
	}
	// Tick 1 (the snapshot) has happened, tick 2 not yet.
	start := frontier.Time(time.Now().UnixMilli()) - 60_500
	kvSrc, kvIdx := plan.User(40), plan.User(41)
	h.MustCreate(plan.DataflowDescription{
		ID: plan.Transient(4), DebugName: "kv snapshot", Class: plan.ClassMaintained,
		SourceImports: []plan.SourceImport{{ID: kvSrc,
			Desc: row.NewRelationDesc([]string{"key", "partition", "value"},
				[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}}),
			Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
				"generator": "KEY VALUE", "keys": strconv.Itoa(keys), "value_size": "16",
				"tick_ms": "60000", "start": fmt.Sprint(start)}}}},
		IndexExports: []plan.IndexExport{{ID: kvIdx, On: kvSrc, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:         frontier.At(start), Until: frontier.Closed(),
	})
	hydrated := frontier.At(start + 60_000 + 1)
	wait := func(want int64) {
		t.Helper()
		select {
		case n := <-g.entered:
			if n != want {
				t.Fatalf("entered Poll %d, want %d", n, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("timed out waiting for Poll %d of the snapshot", want)
		}
	}
	wait(2) // the snapshot is under way; the worker is held inside it
	if err := tbl.Append([]dataflow.Update{kv(2, 20, 6, 1)}, frontier.At(10)); err != nil {
		t.Fatal(err)
	}
	uuid := h.StartPeek(index, 9, nil)
	g.release <- struct{}{}
	wait(3)
	g.release <- struct{}{}
	wait(4)
	// Held inside the fourth Poll: the other dataflow ran in between.
	if rows, err := h.AwaitPeek(uuid); err != nil || len(rows) != 2 {
		t.Fatalf("peek at the table's new time during the snapshot: %v %v", rows, err)
	}
	for _, f := range h.Frontiers(kvIdx) {
		if hydrated.LessEqual(f.Write) {
			t.Fatalf("kv index hydrated (write frontier %v) after 3 Polls of %d items: the snapshot was not cut into chunks", f.Write, chunk)
		}
	}
	g.close()
	if err := h.WaitFrontier(kvIdx, hydrated); err != nil {
		t.Fatal(err)
	}
	if n := g.polls.Load(); n < keys/chunk {
		t.Fatalf("snapshot of %d keys took %d Polls, want at least %d", keys, n, keys/chunk)
	}
	rows, err := h.Peek(kvIdx, start+60_000, &runtimetest.PeekRequest{Keys: [][]byte{row.Pack(row.Int64(keys - 1))}})
	if err != nil || len(rows) != 1 {
		t.Fatalf("the last key after the chunked snapshot: %v %v", rows, err)
	}
}

// TestArrangementBuildYieldsTheWorker hydrates a 20,000-key index on one
// worker with the source unbounded (its snapshot arrives in one Poll), so
// what is left of the hydration is the arrangement's batch build. With
// arrange_step_updates 1,024 the build spans at least keys/1,024 more
// worker steps than with the bound off (0), which seals it in one; both
// answer every key.
func TestArrangementBuildYieldsTheWorker(t *testing.T) {
	const keys, fuel = 20_000, 1024
	steps := map[string]int64{}
	for _, fuel := range []string{"0", strconv.Itoa(fuel)} {
		stats := &stepStats{}
		// Counted, not timed: the timeout only bounds a failing run (the
		// race detector on a loaded machine is slow).
		h := runtimetest.New(t, runtimetest.Options{Workers: 1, Metrics: stats, Timeout: 2 * time.Minute,
			Sources: render.SourceKinds{plan.SourceLoadGen: render.LoadGenerators{}}})
		if err := h.RTs[0].UpdateConfiguration(map[string]string{"source_step_items": "0", "arrange_step_updates": fuel}); err != nil {
			t.Fatal(err)
		}
		// Tick 1, the snapshot, is a second ago; tick 2 is far off, so
		// nothing but the snapshot is generated.
		const tick = 1_000_000
		start := frontier.Time(time.Now().UnixMilli()) - tick - 1000
		src, idx := plan.User(100), plan.User(101)
		h.MustCreate(plan.DataflowDescription{
			ID: plan.Transient(1), DebugName: "kv hydration", Class: plan.ClassMaintained,
			SourceImports: []plan.SourceImport{{ID: src,
				Desc: row.NewRelationDesc([]string{"key", "partition", "value"},
					[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}}),
				Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
					"generator": "KEY VALUE", "keys": strconv.Itoa(keys), "value_size": "16",
					"tick_ms": strconv.Itoa(tick), "start": fmt.Sprint(start)}}}},
			IndexExports: []plan.IndexExport{{ID: idx, On: src, Key: []expr.Expr{expr.Column(0)}}},
			AsOf:         frontier.At(start), Until: frontier.Closed(),
		})
		if err := h.WaitFrontier(idx, frontier.At(start+tick+1)); err != nil {
			t.Fatal(err)
		}
		rows, err := h.Peek(idx, start+tick, nil)
		// Read after the peek: a step is counted after it reports.
		steps[fuel] = stats.n.Load()
		if err != nil || len(rows) != keys {
			t.Fatalf("arrange_step_updates=%s: %d rows, %v; want %d", fuel, len(rows), err, keys)
		}
	}
	t.Logf("worker steps to hydrate: %v (by arrange_step_updates)", steps)
	if bounded := steps[strconv.Itoa(fuel)]; bounded < steps["0"]+keys/fuel {
		t.Errorf("hydration took %d worker steps with the build bounded and %d without; want at least %d more",
			bounded, steps["0"], keys/fuel)
	}
}
