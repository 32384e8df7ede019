package sink

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
	"github.com/tandemdb/tandem/pkg/storage"
)

var (
	tableID = plan.User(1)
	viewID  = plan.User(2)
	sinkID  = plan.User(3)
	oneCol  = row.NewRelationDesc([]string{"a"}, []row.ColumnType{{Type: row.TypeInt64}})
)

// viewDataflow copies table u1 into view u2 and writes it to shard "u2".
func viewDataflow(asOf frontier.Time) plan.DataflowDescription {
	return plan.DataflowDescription{
		ID: sinkID, DebugName: "mv", Class: plan.ClassMaintained,
		SourceImports:  []plan.SourceImport{{ID: tableID, Desc: oneCol, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
		ObjectsToBuild: []plan.Build{{ID: viewID, Plan: plan.NewGet(tableID)}},
		SubscribeSinks: []plan.SubscribeSink{{ID: sinkID, From: viewID, Shard: "u2", UpTo: frontier.Closed()}},
		AsOf:           frontier.At(asOf), Until: frontier.Closed(),
	}
}

// sinkReports records the sink's reported write frontiers.
type sinkReports struct {
	mu     sync.Mutex
	writes []frontier.Frontier
}

func (r *sinkReports) respond(resp runtime.Response) {
	if f, ok := resp.(*runtime.Frontiers); ok && f.ID == sinkID {
		r.mu.Lock()
		r.writes = append(r.writes, f.Write)
		r.mu.Unlock()
	}
}

func (r *sinkReports) last() frontier.Frontier {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.writes) == 0 {
		return frontier.Minimum()
	}
	return r.writes[len(r.writes)-1]
}

func startRuntime(t *testing.T, st *storage.Store, tbl *render.MemoryTable, workers int, reports *sinkReports) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(runtime.Config{
		Workers: workers, Processes: 1,
		Sources:      render.MemorySources{tableID: tbl},
		StorageSinks: &Factory{Storage: storeShard{st}, Log: testr.New(t)},
		Respond:      reports.respond,
		OnFatal:      func(err error) { t.Errorf("runtime failed: %v", err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	rt.Start(context.Background())
	return rt
}

func intRow(i int64) dataflow.Update { return dataflow.Update{Val: row.Pack(row.Int64(i))} }

func at(u dataflow.Update, t frontier.Time, d int64) dataflow.Update {
	u.Time, u.Diff = t, d
	return u
}

// TestDataflowWritesItsViewAndResumes renders a view with a storage sink on
// two workers: the shard gets the view's updates; a new runtime (a replica
// restart) started at an as_of below the shard's upper writes only what
// the shard lacks.
func TestDataflowWritesItsViewAndResumes(t *testing.T) {
	ctx := context.Background()
	st := newStore(t, "u2", 10)
	tbl := render.NewMemoryTable()
	if err := tbl.Append([]dataflow.Update{at(intRow(1), 5, 1), at(intRow(2), 8, 1)}, frontier.At(11)); err != nil {
		t.Fatal(err)
	}
	reports := &sinkReports{}
	rt := startRuntime(t, st, tbl, 2, reports)
	if err := rt.CreateDataflow(viewDataflow(10)); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Append([]dataflow.Update{at(intRow(3), 12, 1), at(intRow(1), 13, -1)}, frontier.At(20)); err != nil {
		t.Fatal(err)
	}
	waitUpper(t, st, "u2", 20)
	rt.Stop()

	tbl.Append([]dataflow.Update{at(intRow(4), 21, 1)}, frontier.At(30))
	rt = startRuntime(t, st, tbl, 2, reports)
	defer rt.Stop()
	if err := rt.CreateDataflow(viewDataflow(15)); err != nil {
		t.Fatal(err)
	}
	waitUpper(t, st, "u2", 30)
	// The sink's frontier follows the shard's upper (the writer wakes the
	// operator when it advances) and never runs ahead of it.
	deadline := time.Now().Add(10 * time.Second)
	for reports.last() != frontier.At(30) {
		if time.Now().After(deadline) {
			t.Fatalf("sink reported %v, want [30]", reports.last())
		}
		time.Sleep(2 * time.Millisecond)
	}
	reports.mu.Lock()
	writes := append([]frontier.Frontier(nil), reports.writes...)
	reports.mu.Unlock()
	for _, w := range writes {
		if !w.LessEqual(frontier.At(30)) {
			t.Fatalf("sink reported %v beyond the shard's upper [30]", w)
		}
	}
	want := map[frontier.Time]string{10: "(1) (2)", 12: "(1) (2) (3)", 13: "(2) (3)", 20: "(2) (3)", 29: "(2) (3) (4)"}
	for ts, w := range want {
		snap, err := st.Snapshot(ctx, "u2", ts)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, u := range snap {
			for range u.Diff {
				if got != "" {
					got += " "
				}
				got += row.Row(u.Row).String()
			}
			if u.Diff < 0 {
				got += fmt.Sprintf(" %v x%d", row.Row(u.Row), u.Diff)
			}
		}
		if got != w {
			t.Fatalf("shard at %d = %q, want %q", ts, got, w)
		}
	}
}

// TestStoredErrorsFailReads reads a shard holding a marked error row (as a
// view in error stores it) through a table source import: the dataflow's
// index carries the error, so a peek fails with it, and the ok rows are
// unaffected once it is retracted.
func TestStoredErrorsFailReads(t *testing.T) {
	h := runtimetest.New(t, runtimetest.Options{Workers: 2})
	tbl := h.Table(tableID)
	idx := plan.User(7)
	h.MustCreate(plan.DataflowDescription{
		ID: idx, DebugName: "read view", Class: plan.ClassMaintained,
		SourceImports: []plan.SourceImport{{ID: tableID, Desc: oneCol, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
		IndexExports:  []plan.IndexExport{{ID: idx, On: tableID, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:          frontier.At(1), Until: frontier.Closed(),
	})
	stored := render.StoredError(render.ErrorRow(&expr.EvalError{Code: expr.CodeDivisionByZero, Msg: "division by zero"}))
	if err := tbl.Append([]dataflow.Update{at(intRow(1), 1, 1), {Val: stored, Time: 2, Diff: 1}, {Val: stored, Time: 4, Diff: -1}}, frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	if rows, err := h.Peek(idx, 1, nil); err != nil || len(rows) != 1 {
		t.Fatalf("read before the error: %v, %v", rows, err)
	}
	if _, err := h.Peek(idx, 3, nil); err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("read of the stored error: %v, want division by zero", err)
	}
	if rows, err := h.Peek(idx, 4, nil); err != nil || len(rows) != 1 {
		t.Fatalf("read after the error was retracted: %v, %v", rows, err)
	}
}
