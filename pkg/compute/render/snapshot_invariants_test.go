package render

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// appendRows appends rows k in [from, to) as (k, k % 4, 'v') at time t and
// advances the table to upper.
func appendRows(t testing.TB, tbl *MemoryTable, from, to int, ts frontier.Time, upper frontier.Time) {
	t.Helper()
	ups := make([]dataflow.Update, 0, to-from)
	for k := from; k < to; k++ {
		ups = append(ups, dataflow.Update{Val: row.Pack(row.Int64(int64(k)), row.Int64(int64(k%4)), row.Text("v")), Time: ts, Diff: 1})
	}
	if err := tbl.Append(ups, frontier.At(upper)); err != nil {
		t.Fatal(err)
	}
}

// onWorkers runs fn on every worker's goroutine (as a dataflow build) and
// waits for it.
func (fx *indexFixture) onWorkers(fn func(idx *Index)) {
	fx.t.Helper()
	done := make(chan error, fx.w)
	seq := fx.ws.Install("on workers", func(bl *dataflow.Builder) error {
		fx.mu.Lock()
		idx := fx.indexes[bl.Worker().Index()]
		fx.mu.Unlock()
		fn(idx)
		return nil
	}, func(_ *dataflow.Worker, err error) { done <- err })
	for range fx.w {
		if err := <-done; err != nil {
			fx.t.Fatal(err)
		}
	}
	fx.ws.Drop(seq)
}

// since returns the meet of the index's ok traces' since.
func (fx *indexFixture) since() frontier.Frontier {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	f := frontier.Closed()
	for _, idx := range fx.indexes {
		f = frontier.Meet(f, idx.Ok.Trace.Since())
	}
	return f
}

// TestSnapshotReadHoldsSinceUntilItReads: a one-shot reader built before
// the index is sealed at its as_of holds the index's compaction at or
// below the as_of (AllowCompaction beyond it notwithstanding), answers as
// of it, and releases the hold as soon as its walk ends, before the
// dataflow is dropped.
func TestSnapshotReadHoldsSinceUntilItReads(t *testing.T) {
	tbl := NewMemoryTable()
	appendRows(t, tbl, 0, 100, 1, 2)
	fx := newIndexFixture(t, 2, tbl)
	fx.waitUpper(1)
	count := globalAgg(plan.NewGet(fixSrc), plan.Aggregate{Func: plan.AggCountStar})
	rd := fx.install(count, readerOpts{asOf: 3, class: plan.ClassOneShotRead})
	fx.onWorkers(func(idx *Index) { idx.AllowCompaction(frontier.At(5)) })
	if s := fx.since(); !s.LessEqualTime(3) {
		t.Fatalf("index compacted to %v while a reader at 3 waits for it", s)
	}
	appendRows(t, tbl, 100, 150, 2, 4) // sealed at 3: 150 rows
	appendRows(t, tbl, 150, 170, 4, 6) // beyond the as_of
	if got, want := rd.result(), "(150) x1"; got != want {
		t.Fatalf("count at 3 = %s, want %s", got, want)
	}
	deadline := time.Now().Add(10 * time.Second)
	for fx.since() != frontier.At(5) {
		if time.Now().After(deadline) {
			t.Fatalf("index since %v: the finished reader still holds it (want [5] before the reader is dropped)", fx.since())
		}
		time.Sleep(time.Millisecond)
	}
	rd.drop()
}

// TestSnapshotReadRefusesCompactedImport: a reader whose as_of is below
// the index's since fails (ErrCompacted) instead of answering from
// accumulations that compaction made wrong at the as_of.
func TestSnapshotReadRefusesCompactedImport(t *testing.T) {
	tbl := NewMemoryTable()
	appendRows(t, tbl, 0, 50, 1, 2)
	appendRows(t, tbl, 50, 80, 3, 6)
	fx := newIndexFixture(t, 1, tbl)
	fx.waitUpper(5)
	fx.onWorkers(func(idx *Index) { idx.AllowCompaction(frontier.At(4)) })
	count := globalAgg(plan.NewGet(fixSrc), plan.Aggregate{Func: plan.AggCountStar})
	rd := fx.install(count, readerOpts{asOf: 2, class: plan.ClassOneShotRead})
	got := rd.result()
	if !strings.Contains(got, "compacted") {
		t.Fatalf("a read at 2 of an index compacted to 4 answered %q; want it to fail as compacted", got)
	}
	rd.drop()
}

// TestSnapshotCountAllocatesPerBatchNotPerRow: a one-shot count(*) over an
// import allocates the same whether the index holds 2,000 or 40,000 rows
// (in 4 batches); a flattened read grouped by the key, measured the same
// way, grows with the rows, which shows the measurement can see per-row
// allocation. (A flattened count(*) no longer does: its KeyBy sums the
// rows of a chunk into one update, keyconsolidate.go.)
func TestSnapshotCountAllocatesPerBatchNotPerRow(t *testing.T) {
	allocs := func(n int, flatten bool, p plan.Plan, want string) float64 {
		tbl := NewMemoryTable()
		for i := range 4 {
			appendRows(t, tbl, i*n/4, (i+1)*n/4, frontier.Time(i+1), frontier.Time(i+2))
		}
		fx := newIndexFixture(t, 1, tbl)
		fx.waitUpper(4)
		var got string
		a := testing.AllocsPerRun(3, func() {
			rd := fx.install(p, readerOpts{asOf: 4, class: plan.ClassOneShotRead, flatten: flatten})
			got = rd.result()
			rd.drop()
		})
		if !strings.HasPrefix(got, want) {
			t.Fatalf("read over %d rows = %.80s, want %s...", n, got, want)
		}
		return a
	}
	count := plan.NewReduce(plan.NewGet(fixSrc), nil, plan.Aggregate{Func: plan.AggCountStar})
	small, large := allocs(2_000, false, count, "(2000) x1"), allocs(40_000, false, count, "(40000) x1")
	t.Logf("snapshot count(*): %.0f allocations over 2,000 rows, %.0f over 40,000", small, large)
	if large-small > 200 {
		t.Errorf("snapshot count(*) allocates per row: %.0f allocations over 2,000 rows, %.0f over 40,000", small, large)
	}
	perKey := plan.NewReduce(plan.NewGet(fixSrc), []expr.Expr{expr.Column(0)}, plan.Aggregate{Func: plan.AggCountStar})
	fsmall, flarge := allocs(2_000, true, perKey, "(0, 1) x1"), allocs(40_000, true, perKey, "(0, 1) x1")
	t.Logf("flattened count(*) GROUP BY key: %.0f allocations over 2,000 rows, %.0f over 40,000", fsmall, flarge)
	if flarge-fsmall < 10_000 {
		t.Errorf("flattened count(*) GROUP BY key grew by only %.0f allocations for 38,000 more rows: the measurement cannot see per-row allocation", flarge-fsmall)
	}
}

// TestSeekKeys: only an equality or IN list of literals on the one key
// column, of a type whose equality is byte equality, turns into seeks.
func TestSeekKeys(t *testing.T) {
	desc := row.NewRelationDesc([]string{"k", "n"}, []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeNumeric}})
	key := []expr.Expr{expr.Column(0)}
	lit := func(v int64) expr.Expr { return expr.Literal(row.Int64(v)) }
	for _, tc := range []struct {
		name string
		pred expr.Expr
		key  []expr.Expr
		want string
	}{
		{"equality", expr.Eq(expr.Column(0), lit(5)), key, "[(5)]"},
		{"reversed, inside AND", expr.And(expr.Gt(expr.Column(1), lit(0)), expr.Eq(lit(7), expr.Column(0))), key, "[(7)]"},
		{"IN, sorted and distinct", expr.In(expr.Column(0), lit(9), lit(2), lit(9)), key, "[(2) (9)]"},
		{"other column", expr.Eq(expr.Column(1), lit(5)), key, "none"},
		{"OR", expr.Or(expr.Eq(expr.Column(0), lit(5)), expr.Eq(expr.Column(0), lit(6))), key, "none"},
		{"numeric key (1.0 = 1.00)", expr.Eq(expr.Column(1), lit(5)), []expr.Expr{expr.Column(1)}, "none"},
		{"literal of another type", expr.Eq(expr.Column(0), expr.Literal(row.Text("5"))), key, "none"},
		{"expression key", expr.Eq(expr.Column(0), lit(5)), []expr.Expr{expr.Add(expr.Column(0), lit(1))}, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, ok := seekKeys(&expr.MFP{Predicates: []expr.Expr{tc.pred}}, tc.key, desc)
			got := "none"
			if ok {
				var rs []string
				for _, k := range keys {
					rs = append(rs, row.Row(k).String())
				}
				got = fmt.Sprint(rs)
			}
			if got != tc.want {
				t.Fatalf("seekKeys = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestExportOfAnImportedCollection: a dataflow may export an index on an
// imported collection itself (a second index of a table that already has
// one); the import is flattened for it, in a maintained dataflow and in a
// one-shot one.
func TestExportOfAnImportedCollection(t *testing.T) {
	tbl := NewMemoryTable()
	appendRows(t, tbl, 0, 30, 1, 2)
	fx := newIndexFixture(t, 2, tbl)
	fx.waitUpper(1)
	for _, class := range []plan.DataflowClass{plan.ClassMaintained, plan.ClassOneShotRead} {
		fx.nextID++
		out := plan.Transient(fx.nextID)
		desc := &plan.DataflowDescription{
			IndexImports: []plan.IndexImport{{ID: fixIdx, On: fixSrc, Key: []expr.Expr{expr.Column(0)}}},
			IndexExports: []plan.IndexExport{{ID: out, On: fixSrc, Key: []expr.Expr{expr.Column(1)}}},
			AsOf:         frontier.At(1), Until: frontier.Closed(), Class: class,
		}
		rd := &reader{fx: fx, asOf: 1, exports: map[int]*Index{}}
		built := make(chan error, fx.w)
		rd.seq = fx.ws.Install("second index", func(bl *dataflow.Builder) error {
			fx.mu.Lock()
			idx := fx.indexes[bl.Worker().Index()]
			fx.mu.Unlock()
			b, err := Build(bl, desc, Env{Indexes: map[plan.GlobalID]*Index{fixIdx: idx}, Fail: fx.fail})
			if err != nil {
				return err
			}
			rd.mu.Lock()
			rd.exports[bl.Worker().Index()] = b.Indexes[out]
			rd.mu.Unlock()
			return nil
		}, func(_ *dataflow.Worker, err error) { built <- err })
		for range fx.w {
			if err := <-built; err != nil {
				t.Fatalf("%s: %v", class, err)
			}
		}
		if got := rd.result(); strings.Count(got, " x1") != 30 {
			t.Fatalf("%s: second index holds %s, want the 30 rows", class, got)
		}
		rd.drop()
	}
}
