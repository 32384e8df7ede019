package placement

import (
	"context"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/trace"
	"github.com/tandemdb/tandem/pkg/sharing"
)

var kvDesc = row.NewRelationDesc([]string{"k", "v"}, []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}})

// TestOneShotDataflowImportsBeforePublication is the scripted end-to-end
// test of the interactive read path with a real interactive runtime: a
// one-shot dataflow (group by v, count) importing a maintained index is
// created and its result peeked before the maintenance side has published
// anything. It is built at once against empty placeholders; the peek
// resolves, with the right rows, only after the publisher adopts the
// placeholders and seals past the read time.
func TestOneShotDataflowImportsBeforePublication(t *testing.T) {
	const workers = 2
	reg := sharing.NewRegistry()
	col := newCollector()
	var irt *runtime.Runtime
	inter := newInteractiveRuntime(t, InteractiveConfig{Registry: reg, Workers: workers, Respond: col.respond},
		runtimeWith(runtime.Config{Workers: workers, Processes: 1, Role: runtime.Interactive, Respond: col.respond}, &irt))
	defer inter.Close()
	irt.Start(context.Background())
	defer irt.Stop()
	maint := newTestMaintenance(t, reg, &nullTarget{})

	src, view, index := plan.User(1), plan.User(2), plan.User(3)
	maintained := plan.DataflowDescription{
		ID: plan.User(100), DebugName: "index", Class: plan.ClassMaintained,
		SourceImports:  []plan.SourceImport{{ID: src, Desc: kvDesc, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
		ObjectsToBuild: []plan.Build{{ID: view, Plan: plan.NewGet(src)}},
		IndexExports:   []plan.IndexExport{{ID: index, On: view, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:           frontier.At(0), Until: frontier.Closed(),
	}
	// Both sides see the Maintained dataflow: maintenance would render it
	// (here it is rendered by hand below), interactive records a peer.
	if err := maint.CreateDataflow(maintained); err != nil {
		t.Fatal(err)
	}
	if err := inter.CreateDataflow(maintained); err != nil {
		t.Fatal(err)
	}
	result, out := plan.Transient(1), plan.Transient(2)
	oneShot := plan.DataflowDescription{
		ID: plan.Transient(10), DebugName: "count by v", Class: plan.ClassOneShotRead,
		IndexImports: []plan.IndexImport{{ID: index, On: view, Key: []expr.Expr{expr.Column(0)}, Desc: kvDesc}},
		ObjectsToBuild: []plan.Build{{ID: result, Plan: plan.NewReduce(plan.NewGet(view), []expr.Expr{expr.Column(1)},
			plan.Aggregate{Func: plan.AggCountStar})}},
		IndexExports: []plan.IndexExport{{ID: out, On: result, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:         frontier.At(5), Until: frontier.At(6),
	}
	if err := inter.CreateDataflow(oneShot); err != nil {
		t.Fatalf("one-shot dataflow importing an unpublished index refused: %v", err)
	}
	inter.Peek(runtime.Peek{UUID: "read", Target: out, Timestamp: 5})
	select {
	case p := <-col.ch:
		t.Fatalf("answered before anything was published: %+v", p)
	case <-time.After(100 * time.Millisecond):
	}

	// Maintenance publishes its two worker shards: rows (k, v) for k in
	// 0..9 with v = k % 3, at time 2, sealed through 4 first.
	okTr := [workers]*trace.Trace{trace.New(frontier.Minimum()), trace.New(frontier.Minimum())}
	errTr := [workers]*trace.Trace{trace.New(frontier.Minimum()), trace.New(frontier.Minimum())}
	var pubs [workers]runtime.Publication
	var err error
	for w := range workers {
		if pubs[w], err = maint.Publish(index, w, okTr[w], errTr[w]); err != nil {
			t.Fatal(err)
		}
	}
	seal := func(lo, hi frontier.Time, rows bool) {
		t.Helper()
		for w := range workers {
			var b batch.Builder
			if rows {
				for k := int64(w); k < 10; k += workers {
					b.Push(row.Pack(row.Int64(k)), row.Pack(row.Int64(k), row.Int64(k%3)), 2, 1)
				}
			}
			for _, tr := range []*trace.Trace{okTr[w], errTr[w]} {
				bb := &b
				if tr == errTr[w] {
					bb = &batch.Builder{}
				}
				bt, err := bb.Build(batch.Description{Lower: frontier.At(lo), Upper: frontier.At(hi), Since: frontier.Minimum()})
				if err != nil {
					t.Fatal(err)
				}
				if err := tr.Insert(bt); err != nil {
					t.Fatal(err)
				}
			}
			if err := pubs[w].Refresh(); err != nil {
				t.Fatal(err)
			}
		}
	}
	seal(0, 5, true)
	select {
	case p := <-col.ch:
		t.Fatalf("answered at 5 with the published upper at 5: %+v", p)
	case <-time.After(100 * time.Millisecond):
	}
	seal(5, 8, false)
	if got, want := rowsOf(t, col.next(t)), "0,4 1,3 2,3"; got != want {
		t.Fatalf("count by v = %q, want %q", got, want)
	}
}
