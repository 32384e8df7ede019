package runtime_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	src   = plan.User(1) // source: (k int64, v int64)
	view  = plan.User(2) // Mfp: (k, v, 100 / v)
	index = plan.User(3) // index on view by k
)

var kvDesc = row.NewRelationDesc([]string{"k", "v"}, []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}})

// indexDesc: source u1 -> u2 = (k, v, 100/v) -> index u3 on u2 by k.
func indexDesc(asOf frontier.Time) plan.DataflowDescription {
	m := expr.MFP{Expressions: []expr.Expr{expr.Div(expr.Literal(row.Int64(100)), expr.Column(1))}, Projection: []int{0, 1, 2}}
	return plan.DataflowDescription{
		ID: plan.Transient(1), DebugName: "index", Class: plan.ClassMaintained,
		SourceImports:  []plan.SourceImport{{ID: src, Desc: kvDesc, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
		ObjectsToBuild: []plan.Build{{ID: view, Plan: plan.NewMfp(plan.NewGet(src), m)}},
		IndexExports:   []plan.IndexExport{{ID: index, On: view, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:           frontier.At(asOf), Until: frontier.Closed(),
	}
}

func kv(k, v int64, t frontier.Time, d int64) dataflow.Update {
	return dataflow.Update{Val: row.Pack(row.Int64(k), row.Int64(v)), Time: t, Diff: d}
}

func show(rcs []peek.RowCount) string {
	var s []string
	for _, rc := range rcs {
		s = append(s, fmt.Sprintf("%s x%d", rc.Row, rc.Count))
	}
	sort.Strings(s)
	return strings.Join(s, "; ")
}

func shapes() []runtimetest.Options {
	return []runtimetest.Options{{Workers: 1}, {Workers: 2}, {Workers: 4}, {Workers: 2, Processes: 2}}
}

func name(o runtimetest.Options) string {
	return fmt.Sprintf("W%dxP%d", o.Workers, max(o.Processes, 1))
}

func TestPeekWaitsUntilComplete(t *testing.T) {
	for _, o := range shapes() {
		t.Run(name(o), func(t *testing.T) {
			h := runtimetest.New(t, o)
			tbl := h.Table(src)
			h.MustCreate(indexDesc(0))
			if err := tbl.Append([]dataflow.Update{kv(1, 10, 1, 1), kv(2, 20, 2, 1), kv(3, 50, 3, 1)}, frontier.At(5)); err != nil {
				t.Fatal(err)
			}
			rows, err := h.Peek(index, 4, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := show(rows), "(1, 10, 10) x1; (2, 20, 5) x1; (3, 50, 2) x1"; got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
			// A peek at 7 waits for the index to pass 7.
			uuid := h.StartPeek(index, 7, nil)
			if err := tbl.Append([]dataflow.Update{kv(2, 20, 6, -1)}, frontier.At(7)); err != nil {
				t.Fatal(err)
			}
			if err := h.WaitFrontier(index, frontier.At(7)); err != nil {
				t.Fatal(err)
			}
			if rs := h.PeekResponses(uuid); len(rs) != 0 {
				t.Fatalf("peek at 7 answered while the index upper is 7: %+v", rs[0])
			}
			if err := tbl.Append([]dataflow.Update{kv(4, 25, 7, 1)}, frontier.At(8)); err != nil {
				t.Fatal(err)
			}
			rows, err = h.AwaitPeek(uuid)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := show(rows), "(1, 10, 10) x1; (3, 50, 2) x1; (4, 25, 4) x1"; got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
			// Literal key constraints and a peek MFP.
			keys := [][]byte{row.Pack(row.Int64(3)), row.Pack(row.Int64(2)), row.Pack(row.Int64(4))}
			m := expr.MFP{Predicates: []expr.Expr{expr.Gt(expr.Column(1), expr.Literal(row.Int64(30)))}, Projection: []int{0}}
			rows, err = h.Peek(index, 7, &runtimetest.PeekRequest{Keys: keys, MFP: &m})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := show(rows), "(3) x1"; got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
}

func TestPeekErrors(t *testing.T) {
	for _, o := range shapes() {
		t.Run(name(o), func(t *testing.T) {
			h := runtimetest.New(t, o)
			tbl := h.Table(src)
			h.MustCreate(indexDesc(3))
			if err := tbl.Append([]dataflow.Update{kv(1, 10, 1, 1), kv(2, 0, 6, 1), kv(2, 0, 8, -1)}, frontier.At(10)); err != nil {
				t.Fatal(err)
			}
			// Below as_of (the export's since).
			if _, err := h.Peek(index, 2, nil); !errors.Is(err, trace.ErrCompacted) {
				t.Fatalf("peek below since: got %v", err)
			}
			// Division by zero is in the error collection during [6, 8).
			if _, err := h.Peek(index, 7, nil); err == nil || expr.Code(err) != "" && !strings.Contains(err.Error(), "division by zero") {
				t.Fatalf("peek at 7: got %v, want division by zero", err)
			} else if !strings.Contains(err.Error(), "22012") {
				t.Fatalf("peek at 7: got %v, want SQLSTATE 22012", err)
			}
			rows, err := h.Peek(index, 9, nil)
			if err != nil || show(rows) != "(1, 10, 10) x1" {
				t.Fatalf("peek at 9 after the retraction: %s, %v", show(rows), err)
			}
			if _, err := h.Peek(plan.User(99), 9, nil); !errors.Is(err, runtime.ErrUnknownCollection) {
				t.Fatalf("peek of unknown index: got %v", err)
			}
			if err := h.AllowCompaction(index, frontier.At(9)); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Peek(index, 8, nil); !errors.Is(err, trace.ErrCompacted) {
				t.Fatalf("peek below the compaction frontier: got %v", err)
			}
		})
	}
}

func TestPeekMaxResultSize(t *testing.T) {
	h := runtimetest.New(t, runtimetest.Options{Workers: 2, MaxResultBytes: 64})
	tbl := h.Table(src)
	h.MustCreate(indexDesc(0))
	var ups []dataflow.Update
	for k := int64(0); k < 20; k++ {
		ups = append(ups, kv(k, 1, 1, 1))
	}
	if err := tbl.Append(ups, frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Peek(index, 4, nil); !errors.Is(err, peek.ErrResultTooLarge) {
		t.Fatalf("got %v, want ErrResultTooLarge", err)
	}
	if err := h.RTs[0].UpdateConfiguration(map[string]string{"max_result_size": "0"}); err != nil {
		t.Fatal(err)
	}
	rows, err := h.Peek(index, 4, nil)
	if err != nil || len(rows) != 20 {
		t.Fatalf("after lifting the limit: %d rows, %v", len(rows), err)
	}
	if err := h.RTs[0].UpdateConfiguration(map[string]string{"max_result_size": "lots"}); err == nil {
		t.Fatal("bad max_result_size accepted")
	}
}

func TestCancelPeekExactlyOnce(t *testing.T) {
	for _, o := range shapes() {
		t.Run(name(o), func(t *testing.T) {
			h := runtimetest.New(t, o)
			tbl := h.Table(src)
			h.MustCreate(indexDesc(0))
			uuid := h.StartPeek(index, 50, nil)
			h.CancelPeek(uuid)
			if _, err := h.AwaitPeek(uuid); !errors.Is(err, runtimetest.ErrCanceled) {
				t.Fatalf("got %v, want canceled", err)
			}
			// Completing the time later must not produce a second response.
			if err := tbl.Append([]dataflow.Update{kv(1, 1, 10, 1)}, frontier.At(60)); err != nil {
				t.Fatal(err)
			}
			if err := h.WaitFrontier(index, frontier.At(60)); err != nil {
				t.Fatal(err)
			}
			// A later peek is answered after the canceled one would have
			// been, so by then any stray response would have arrived.
			if _, err := h.Peek(index, 55, nil); err != nil {
				t.Fatal(err)
			}
			if rs := h.PeekResponses(uuid); len(rs) != max(o.Processes, 1) {
				t.Fatalf("%d responses for one canceled peek", len(rs))
			}
			// Cancel after the answer is a no-op.
			done := h.StartPeek(index, 55, nil)
			if _, err := h.AwaitPeek(done); err != nil {
				t.Fatal(err)
			}
			h.CancelPeek(done)
			if _, err := h.Peek(index, 56, nil); err != nil {
				t.Fatal(err)
			}
			if rs := h.PeekResponses(done); len(rs) != max(o.Processes, 1) || rs[0].Canceled {
				t.Fatalf("responses after late cancel: %+v", rs)
			}
		})
	}
}

func TestDuplicateExportRefusedAndServingContinues(t *testing.T) {
	h := runtimetest.New(t, runtimetest.Options{Workers: 2})
	tbl := h.Table(src)
	h.MustCreate(indexDesc(0))
	if err := h.CreateDataflow(indexDesc(0)); !errors.Is(err, runtime.ErrDuplicateExport) {
		t.Fatalf("got %v, want ErrDuplicateExport", err)
	}
	bad := indexDesc(0)
	bad.IndexExports[0].ID = plan.User(7)
	bad.IndexExports[0].On = plan.User(42)
	if err := h.CreateDataflow(bad); err == nil {
		t.Fatal("export of an unknown collection accepted")
	}
	if err := h.AllowCompaction(plan.User(42), frontier.At(1)); !errors.Is(err, runtime.ErrUnknownCollection) {
		t.Fatalf("got %v", err)
	}
	if err := tbl.Append([]dataflow.Update{kv(1, 1, 1, 1)}, frontier.At(2)); err != nil {
		t.Fatal(err)
	}
	if rows, err := h.Peek(index, 1, nil); err != nil || len(rows) != 1 {
		t.Fatalf("serving after refusals: %v %v", rows, err)
	}
}

func TestDropReleasesEverything(t *testing.T) {
	for _, o := range shapes() {
		t.Run(name(o), func(t *testing.T) {
			h := runtimetest.New(t, o)
			tbl := h.Table(src)
			h.MustCreate(indexDesc(0))
			if err := tbl.Append([]dataflow.Update{kv(1, 1, 1, 1)}, frontier.At(2)); err != nil {
				t.Fatal(err)
			}
			if err := h.WaitFrontier(index, frontier.At(2)); err != nil {
				t.Fatal(err)
			}
			if n := tbl.OpenSources(); n != o.Workers*max(o.Processes, 1) {
				t.Fatalf("%d open sources, want one per worker", n)
			}
			uuid := h.StartPeek(index, 100, nil) // pending when the index goes
			if err := h.AllowCompaction(index, frontier.Closed()); err != nil {
				t.Fatal(err)
			}
			if err := h.WaitFrontier(index, frontier.Closed()); err != nil {
				t.Fatal(err)
			}
			if _, err := h.AwaitPeek(uuid); !errors.Is(err, runtime.ErrUnknownCollection) {
				t.Fatalf("pending peek on a dropped index: got %v", err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for tbl.OpenSources() != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%d sources still open after drop", tbl.OpenSources())
				}
				time.Sleep(time.Millisecond)
			}
			if err := h.AllowCompaction(index, frontier.At(5)); !errors.Is(err, runtime.ErrUnknownCollection) {
				t.Fatalf("compaction of a dropped index: %v", err)
			}
			// The id can be reused.
			h.MustCreate(indexDesc(2))
			if err := tbl.Append(nil, frontier.At(3)); err != nil {
				t.Fatal(err)
			}
			if rows, err := h.Peek(index, 2, nil); err != nil || len(rows) != 1 {
				t.Fatalf("recreated index: %v %v", rows, err)
			}
		})
	}
}

func TestPeekBeyondUntil(t *testing.T) {
	h := runtimetest.New(t, runtimetest.Options{Workers: 2})
	tbl := h.Table(src)
	d := indexDesc(0)
	d.Until = frontier.At(5)
	h.MustCreate(d)
	if err := tbl.Append([]dataflow.Update{kv(1, 1, 1, 1), kv(2, 2, 6, 1)}, frontier.At(10)); err != nil {
		t.Fatal(err)
	}
	if rows, err := h.Peek(index, 4, nil); err != nil || len(rows) != 1 {
		t.Fatalf("peek before until: %v %v", rows, err)
	}
	if _, err := h.Peek(index, 5, nil); !errors.Is(err, render.ErrBeyondUntil) {
		t.Fatalf("peek at until: got %v", err)
	}
}

// TestBudgetedPeekWalk runs peeks with a walk budget of one row per worker
// step: results are unchanged, and a point lookup issued after a long scan
// is not held behind it.
func TestBudgetedPeekWalk(t *testing.T) {
	h := runtimetest.New(t, runtimetest.Options{Workers: 2})
	tbl := h.Table(src)
	h.MustCreate(indexDesc(0))
	const n = 2000
	var ups []dataflow.Update
	for k := int64(0); k < n; k++ {
		ups = append(ups, kv(k, 1, 1, 1))
	}
	if err := tbl.Append(ups, frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitFrontier(index, frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	if err := h.RTs[0].UpdateConfiguration(map[string]string{"peek_walk_budget": "1"}); err != nil {
		t.Fatal(err)
	}
	scan := h.StartPeek(index, 4, nil)
	rows, err := h.Peek(index, 4, &runtimetest.PeekRequest{Keys: [][]byte{row.Pack(row.Int64(7))}})
	if err != nil || show(rows) != "(7, 1, 100) x1" {
		t.Fatalf("point lookup during a scan: %s, %v", show(rows), err)
	}
	if len(h.PeekResponses(scan)) != 0 {
		t.Log("the scan finished before the point lookup (possible on a fast machine)")
	}
	rows, err = h.AwaitPeek(scan)
	if err != nil || len(rows) != n {
		t.Fatalf("budgeted scan: %d rows, %v", len(rows), err)
	}
	// Cancel in the middle of a walk: one Canceled response, nothing after.
	scan = h.StartPeek(index, 4, nil)
	h.CancelPeek(scan)
	if _, err := h.AwaitPeek(scan); !errors.Is(err, runtimetest.ErrCanceled) {
		t.Fatalf("got %v", err)
	}
	if _, err := h.Peek(index, 4, &runtimetest.PeekRequest{Keys: [][]byte{row.Pack(row.Int64(9))}}); err != nil {
		t.Fatal(err)
	}
	if err := h.RTs[0].UpdateConfiguration(map[string]string{"peek_walk_budget": "-3"}); err == nil {
		t.Fatal("negative budget accepted")
	}
}
