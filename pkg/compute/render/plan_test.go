package render

import (
	"context"
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

// planFixture renders one plan over memory tables u1, u2 on W workers and
// arranges its ok and error outputs by row for reading.
type planFixture struct {
	t        *testing.T
	w        int
	mu       sync.Mutex
	ok, errs []*trace.Trace
	failures []error
}

func renderFixture(t *testing.T, w int, p plan.Plan, tables map[plan.GlobalID]*MemoryTable) *planFixture {
	t.Helper()
	fx := &planFixture{t: t, w: w}
	ws, err := dataflow.New(dataflow.Config{Workers: w})
	if err != nil {
		t.Fatal(err)
	}
	fail := func(err error) { fx.mu.Lock(); fx.failures = append(fx.failures, err); fx.mu.Unlock() }
	built := make(chan error, w)
	ws.Install("plan", func(b *dataflow.Builder) error {
		r := &planRenderer{b: b, asOf: frontier.Minimum(), objects: map[plan.GlobalID]rendered{}, fail: fail}
		for id, tbl := range tables {
			s, err := renderSource(b, id.String(), tbl.Open, frontier.Minimum(), fail)
			if err != nil {
				return err
			}
			r.objects[id] = rendered{ok: s}
		}
		out, err := r.render(&p)
		if err != nil {
			return err
		}
		var errs []dataflow.Stream
		okArr := r.arrange(out.ok, "out", KeySpec{RowKey: true, EmptyVal: true}, &errs)
		errArr := Arrange(b, "errs", keyErrors(b, "errs", Concat(b, "errs", append(out.errs, errs...))), fail)
		fx.mu.Lock()
		fx.ok = append(fx.ok, okArr.Trace)
		fx.errs = append(fx.errs, errArr.Trace)
		fx.mu.Unlock()
		return nil
	}, func(_ *dataflow.Worker, err error) { built <- err })
	ctx, cancel := context.WithCancel(context.Background())
	ws.Start(ctx)
	t.Cleanup(func() { cancel(); ws.Stop() })
	for i := 0; i < w; i++ {
		if err := <-built; err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

// read returns "row xN; ..." (sorted) of the output at ts, or the first
// error row.
func (fx *planFixture) read(ts frontier.Time) string {
	t := fx.t
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		fx.mu.Lock()
		ready := true
		for _, tr := range append(append([]*trace.Trace{}, fx.ok...), fx.errs...) {
			if !tr.Upper().IsComplete(ts) {
				ready = false
			}
		}
		fx.mu.Unlock()
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("output never reached %d", ts)
		}
		time.Sleep(time.Millisecond)
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	if len(fx.failures) > 0 {
		t.Fatal(fx.failures)
	}
	var errRows []string
	for _, tr := range fx.errs {
		rd, err := tr.ReadAt(ts)
		if err != nil {
			t.Fatal(err)
		}
		rd.Scan(func(k, _ []byte, d int64) bool {
			errRows = append(errRows, fmt.Sprintf("error %v x%d", DecodeErrorRow(k), d))
			return true
		})
	}
	if len(errRows) > 0 {
		sort.Strings(errRows)
		return strings.Join(errRows, "; ")
	}
	var rows []string
	for _, tr := range fx.ok {
		rd, err := tr.ReadAt(ts)
		if err != nil {
			t.Fatal(err)
		}
		rd.Scan(func(k, _ []byte, d int64) bool {
			rows = append(rows, fmt.Sprintf("%s x%d", row.Row(k), d))
			return true
		})
	}
	sort.Strings(rows)
	return strings.Join(rows, "; ")
}

func upd(t frontier.Time, d int64, ds ...row.Datum) dataflow.Update {
	return dataflow.Update{Val: row.Pack(ds...), Time: t, Diff: d}
}

func i64(v int64) row.Datum { return row.Int64(v) }

func series(args ...expr.Expr) expr.TableCall {
	return expr.TableCall{Func: expr.TableGenerateSeries, Args: args}
}

func TestRenderPlans(t *testing.T) {
	u1, u2 := plan.User(1), plan.User(2)
	get1, get2 := plan.NewGet(u1), plan.NewGet(u2)
	limit := int64(1)
	tests := []struct {
		name string
		plan plan.Plan
		// updates to u1 and u2 at times < 10, read at 9, then more < 20, read at 19
		u1a, u2a, u1b []dataflow.Update
		want9, want19 string
	}{
		{
			name:  "mfp filter and project",
			plan:  plan.NewMfp(get1, expr.MFP{Predicates: []expr.Expr{expr.Gt(expr.Column(1), expr.Literal(i64(10)))}, Projection: []int{0}}),
			u1a:   []dataflow.Update{upd(1, 1, i64(1), i64(5)), upd(2, 1, i64(2), i64(20))},
			u1b:   []dataflow.Update{upd(12, 1, i64(3), i64(30)), upd(13, -1, i64(2), i64(20))},
			want9: "(2) x1", want19: "(3) x1",
		},
		{
			name:  "division by zero is an error collection",
			plan:  plan.NewMfp(get1, expr.MFP{Expressions: []expr.Expr{expr.Div(expr.Column(0), expr.Column(1))}, Projection: []int{2}}),
			u1a:   []dataflow.Update{upd(1, 1, i64(6), i64(3))},
			u1b:   []dataflow.Update{upd(11, 1, i64(1), i64(0))},
			want9: "(2) x1", want19: "error division by zero (SQLSTATE 22012) x1",
		},
		{
			name:  "join",
			plan:  plan.NewJoin(get1, get2, []expr.Expr{expr.Column(0)}, []expr.Expr{expr.Column(0)}),
			u1a:   []dataflow.Update{upd(1, 1, i64(1), i64(10)), upd(2, 1, i64(2), i64(20))},
			u2a:   []dataflow.Update{upd(3, 1, i64(1), i64(100)), upd(4, 2, i64(3), i64(300))},
			u1b:   []dataflow.Update{upd(15, 1, i64(3), i64(30))},
			want9: "(1, 10, 1, 100) x1", want19: "(1, 10, 1, 100) x1; (3, 30, 3, 300) x2",
		},
		{
			name: "reduce count sum",
			plan: plan.NewReduce(get1, []expr.Expr{expr.Column(0)},
				plan.Aggregate{Func: plan.AggCountStar}, plan.Aggregate{Func: plan.AggSum, Expr: expr.Column(1)}),
			u1a:   []dataflow.Update{upd(1, 1, i64(1), i64(10)), upd(2, 1, i64(1), i64(5)), upd(3, 1, i64(2), i64(7))},
			u1b:   []dataflow.Update{upd(11, -1, i64(1), i64(10))},
			want9: "(1, 2, 15) x1; (2, 1, 7) x1", want19: "(1, 1, 5) x1; (2, 1, 7) x1",
		},
		{
			name:  "distinct of union with negate",
			plan:  plan.NewDistinct(plan.NewUnion(get1, get2, plan.NewNegate(get2))),
			u1a:   []dataflow.Update{upd(1, 3, i64(1)), upd(2, 1, i64(2))},
			u2a:   []dataflow.Update{upd(1, 1, i64(9))},
			want9: "(1) x1; (2) x1", want19: "(1) x1; (2) x1",
		},
		{
			name:  "threshold",
			plan:  plan.NewThreshold(plan.NewUnion(get1, plan.NewNegate(get2))),
			u1a:   []dataflow.Update{upd(1, 2, i64(1)), upd(1, 1, i64(2))},
			u2a:   []dataflow.Update{upd(1, 1, i64(1)), upd(1, 3, i64(2))},
			want9: "(1) x1", want19: "(1) x1",
		},
		{
			name:  "topk",
			plan:  plan.NewTopK(get1, []int{0}, []plan.ColumnOrder{{Column: 1, Desc: true}}, &limit, 0),
			u1a:   []dataflow.Update{upd(1, 1, i64(1), i64(10)), upd(1, 1, i64(1), i64(30)), upd(1, 1, i64(2), i64(5))},
			u1b:   []dataflow.Update{upd(14, -1, i64(1), i64(30))},
			want9: "(1, 30) x1; (2, 5) x1", want19: "(1, 10) x1; (2, 5) x1",
		},
		{
			// A retracted input row retracts the rows it produced.
			name:  "flat_map generate_series retracts with its input",
			plan:  plan.NewFlatMap(get1, series(expr.Column(1), expr.Column(2)), false),
			u1a:   []dataflow.Update{upd(1, 1, i64(1), i64(1), i64(2)), upd(2, 2, i64(2), i64(5), i64(5))},
			u1b:   []dataflow.Update{upd(11, -1, i64(1), i64(1), i64(2)), upd(12, 1, i64(3), i64(7), i64(6))},
			want9: "(1, 1, 2, 1) x1; (1, 1, 2, 2) x1; (2, 5, 5, 5) x2", want19: "(2, 5, 5, 5) x2",
		},
		{
			name:  "flat_map with ordinality",
			plan:  plan.NewFlatMap(get1, series(expr.Column(0), expr.Literal(i64(30)), expr.Literal(i64(10))), true),
			u1a:   []dataflow.Update{upd(1, 1, i64(10))},
			u1b:   []dataflow.Update{upd(11, 1, i64(25))},
			want9: "(10, 10, 1) x1; (10, 20, 2) x1; (10, 30, 3) x1", want19: "(10, 10, 1) x1; (10, 20, 2) x1; (10, 30, 3) x1; (25, 25, 1) x1",
		},
		{
			// Lockstep calls pad the shorter with NULLs, and retract with
			// their input row.
			name: "flat_map rows_from",
			plan: plan.NewFlatMap(get1, expr.RowsFrom([]expr.TableCall{
				series(expr.Literal(i64(1)), expr.Column(0)), series(expr.Literal(i64(1)), expr.Literal(i64(2))),
			}, []int{1, 1}), false),
			u1a:   []dataflow.Update{upd(1, 1, i64(3))},
			u1b:   []dataflow.Update{upd(11, -1, i64(3)), upd(11, 1, i64(1))},
			want9: "(3, 1, 1) x1; (3, 2, 2) x1; (3, 3, NULL) x1", want19: "(1, 1, 1) x1; (1, NULL, 2) x1",
		},
		{
			// An error (a zero step) is retracted with its input row too.
			name:  "flat_map error retracts with its input",
			plan:  plan.NewFlatMap(get1, series(expr.Literal(i64(1)), expr.Literal(i64(2)), expr.Column(0)), false),
			u1a:   []dataflow.Update{upd(1, 1, i64(0))},
			u1b:   []dataflow.Update{upd(11, -1, i64(0)), upd(11, 1, i64(1))},
			want9: "error step size cannot equal zero (SQLSTATE 22023) x1", want19: "(1, 1) x1; (1, 2) x1",
		},
		{
			name:  "constant",
			plan:  plan.NewConstant(row.RelationDesc{}, plan.ConstantRow{Datums: []row.Datum{i64(7)}, Diff: 2}),
			want9: "(7) x2", want19: "(7) x2",
		},
	}
	for _, tt := range tests {
		for _, w := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/W%d", tt.name, w), func(t *testing.T) {
				t1, t2 := NewMemoryTable(), NewMemoryTable()
				fx := renderFixture(t, w, tt.plan, map[plan.GlobalID]*MemoryTable{u1: t1, u2: t2})
				must := func(err error) {
					t.Helper()
					if err != nil {
						t.Fatal(err)
					}
				}
				must(t1.Append(tt.u1a, frontier.At(10)))
				must(t2.Append(tt.u2a, frontier.At(10)))
				if got := fx.read(9); got != tt.want9 {
					t.Errorf("at 9: got %q, want %q", got, tt.want9)
				}
				must(t1.Append(tt.u1b, frontier.At(20)))
				must(t2.Append(nil, frontier.At(20)))
				if got := fx.read(19); got != tt.want19 {
					t.Errorf("at 19: got %q, want %q", got, tt.want19)
				}
			})
		}
	}
}

func TestRenderUnknownGet(t *testing.T) {
	r := &planRenderer{objects: map[plan.GlobalID]rendered{}}
	p := plan.NewGet(plan.User(9))
	if _, err := r.render(&p); err == nil {
		t.Fatal("rendered a get of an unknown id")
	}
}
