package render

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// indexFixture is an index (id idxID on collection onID, keyed by column 0)
// over a memory table, maintained on W workers, and readers of it.
type indexFixture struct {
	t       testing.TB
	ws      *dataflow.Workers
	w       int
	tbl     *MemoryTable
	mu      sync.Mutex
	indexes map[int]*Index // by worker
	fails   []error
	nextID  uint64
	// desc describes the indexed collection to readers (IndexImport.Desc).
	desc row.RelationDesc
}

var (
	fixSrc = plan.User(1)
	fixIdx = plan.User(2)
)

func newIndexFixture(t testing.TB, w int, tbl *MemoryTable) *indexFixture {
	t.Helper()
	fx := &indexFixture{t: t, w: w, tbl: tbl, indexes: map[int]*Index{}, nextID: 100}
	ws, err := dataflow.New(dataflow.Config{Workers: w})
	if err != nil {
		t.Fatal(err)
	}
	fx.ws = ws
	ctx, cancel := context.WithCancel(context.Background())
	ws.Start(ctx)
	t.Cleanup(func() { cancel(); ws.Stop() })
	built := make(chan error, w)
	ws.Install("index", func(bl *dataflow.Builder) error {
		desc := &plan.DataflowDescription{
			SourceImports: []plan.SourceImport{{ID: fixSrc}},
			IndexExports:  []plan.IndexExport{{ID: fixIdx, On: fixSrc, Key: []expr.Expr{expr.Column(0)}}},
			AsOf:          frontier.At(0), Until: frontier.Closed(),
		}
		out, err := Build(bl, desc, Env{Sources: MemorySources{fixSrc: tbl}, Fail: fx.fail})
		if err != nil {
			return err
		}
		fx.mu.Lock()
		fx.indexes[bl.Worker().Index()] = out.Indexes[fixIdx]
		fx.mu.Unlock()
		return nil
	}, func(_ *dataflow.Worker, err error) { built <- err })
	for range w {
		if err := <-built; err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

func (fx *indexFixture) fail(err error) {
	fx.mu.Lock()
	fx.fails = append(fx.fails, err)
	fx.mu.Unlock()
}

func (fx *indexFixture) failures() error {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return errors.Join(fx.fails...)
}

// waitUpper waits until every worker's index is complete through t.
func (fx *indexFixture) waitUpper(t frontier.Time) {
	fx.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		fx.mu.Lock()
		ready := len(fx.indexes) == fx.w
		for _, idx := range fx.indexes {
			ready = ready && idx.Upper().IsComplete(t)
		}
		fx.mu.Unlock()
		if ready {
			return
		}
		if time.Now().After(deadline) {
			fx.t.Fatalf("index not complete through %d", t)
		}
		time.Sleep(time.Millisecond)
	}
}

// readerOpts configure one reader dataflow.
type readerOpts struct {
	asOf     frontier.Time
	class    plan.DataflowClass
	until    frontier.Frontier // zero: asOf+1 for maintained, closed for one-shot
	flatten  bool              // Env.NoSnapshotReads
	counters *ImportCounters
	tuning   *snapshotTuning
	// fuel is Env.ArrangeFuel; onSchedule Env.onStatefulSchedule.
	fuel       func() int
	onSchedule func(name string, emitted int)
}

// reader is one installed reader dataflow: its export per worker.
type reader struct {
	fx      *indexFixture
	seq     uint64
	asOf    frontier.Time
	mu      sync.Mutex
	exports map[int]*Index
}

// install builds a reader dataflow computing p over the index and exporting
// it keyed by its first column.
func (fx *indexFixture) install(p plan.Plan, o readerOpts) *reader {
	fx.t.Helper()
	fx.nextID++
	out := plan.Transient(fx.nextID)
	class := o.class
	if class == plan.ClassUnspecified {
		class = plan.ClassMaintained
	}
	until := o.until
	if until == (frontier.Frontier{}) {
		until = frontier.At(o.asOf + 1)
		if class == plan.ClassOneShotRead {
			until = frontier.Closed()
		}
	}
	desc := &plan.DataflowDescription{
		IndexImports:   []plan.IndexImport{{ID: fixIdx, On: fixSrc, Key: []expr.Expr{expr.Column(0)}, Desc: fx.desc}},
		ObjectsToBuild: []plan.Build{{ID: out, Plan: p}},
		IndexExports:   []plan.IndexExport{{ID: out, On: out, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:           frontier.At(o.asOf), Until: until, Class: class,
	}
	rd := &reader{fx: fx, asOf: o.asOf, exports: map[int]*Index{}}
	built := make(chan error, fx.w)
	rd.seq = fx.ws.Install(fmt.Sprintf("reader %d", fx.nextID), func(bl *dataflow.Builder) error {
		fx.mu.Lock()
		idx := fx.indexes[bl.Worker().Index()]
		fx.mu.Unlock()
		built, err := Build(bl, desc, Env{Indexes: map[plan.GlobalID]*Index{fixIdx: idx}, Fail: fx.fail,
			NoSnapshotReads: o.flatten, Imports: o.counters, snapshotTuning: o.tuning,
			ArrangeFuel: o.fuel, onStatefulSchedule: o.onSchedule})
		if err != nil {
			return err
		}
		rd.mu.Lock()
		rd.exports[bl.Worker().Index()] = built.Indexes[out]
		rd.mu.Unlock()
		return nil
	}, func(_ *dataflow.Worker, err error) { built <- err })
	for range fx.w {
		if err := <-built; err != nil {
			fx.t.Fatal(err)
		}
	}
	return rd
}

// result waits for the reader's export at its as_of and returns its rows
// ("row xN", sorted) and error rows ("error: message xN").
func (rd *reader) result() string {
	fx := rd.fx
	fx.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := fx.failures(); err != nil {
			return "failed: " + err.Error()
		}
		var lines []string
		ready := true
		rd.mu.Lock()
		for _, x := range rd.exports {
			ok, errs, err := x.ReadAt(rd.asOf)
			if errors.Is(err, trace.ErrNotYetReadable) {
				ready = false
				break
			}
			if err != nil {
				rd.mu.Unlock()
				fx.t.Fatal(err)
			}
			trace.ScanAsOf(ok.Batches, rd.asOf, func(_, val []byte, d int64) bool {
				lines = append(lines, fmt.Sprintf("%s x%d", row.Row(val), d))
				return true
			})
			trace.ScanAsOf(errs.Batches, rd.asOf, func(key, _ []byte, d int64) bool {
				lines = append(lines, fmt.Sprintf("error: %s x%d", row.Row(key), d))
				return true
			})
		}
		rd.mu.Unlock()
		if ready {
			sort.Strings(lines)
			return strings.Join(lines, "; ")
		}
		if time.Now().After(deadline) {
			fx.t.Fatal("reader did not finish")
		}
		time.Sleep(time.Millisecond)
	}
}

func (rd *reader) drop() { rd.fx.ws.Drop(rd.seq) }

// globalAgg is the planner's shape of an aggregate without GROUP BY: the
// reduction, a row of defaults, and the defaults negated once the
// reduction has a row.
func globalAgg(in plan.Plan, aggs ...plan.Aggregate) plan.Plan {
	red := plan.NewReduce(in, nil, aggs...)
	lits := make([]expr.Expr, len(aggs))
	defaults := make([]row.Datum, len(aggs))
	proj := make([]int, len(aggs))
	for i, a := range aggs {
		lits[i], defaults[i] = expr.Literal(row.Null()), row.Null()
		if a.Func == plan.AggCount || a.Func == plan.AggCountStar {
			lits[i], defaults[i] = expr.Literal(row.Int64(0)), row.Int64(0)
		}
		proj[i] = len(aggs) + i
	}
	cancel := plan.NewNegate(plan.NewMfp(red, expr.MFP{Expressions: lits, Projection: proj}))
	def := plan.NewConstant(row.RelationDesc{}, plan.ConstantRow{Datums: defaults, Diff: 1})
	return plan.NewUnion(red, def, cancel)
}
