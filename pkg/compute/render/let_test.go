package render

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// TestLetSnapshotReductionsAreNotMemoisedAcrossBindings checks that two
// lets binding one local id to different values in sibling scopes do not
// share a memoised snapshot reduction: the reductions' plans encode alike
// (a count over Get l1) but count different collections.
func TestLetSnapshotReductionsAreNotMemoisedAcrossBindings(t *testing.T) {
	tbl := keyValueTable(t, 10, 2, 0)
	fx := newIndexFixture(t, 1, tbl)
	fx.waitUpper(1)
	l := plan.Local(1)
	get := plan.NewGet(fixSrc)
	count := func() plan.Plan { return plan.NewReduce(plan.NewGet(l), nil, plan.Aggregate{Func: plan.AggCountStar}) }
	evens := plan.NewMfp(get, expr.Identity(3).Filter(expr.Eq(expr.Column(1), expr.Literal(row.Int64(0)))))
	p := plan.NewUnion(plan.NewLet(l, evens, count()), plan.NewLet(l, get, count()))
	rd := fx.install(p, readerOpts{asOf: 1, class: plan.ClassOneShotRead})
	defer rd.drop()
	if got, want := rd.result(), "(10) x1; (5) x1"; got != want {
		t.Errorf("counts %s, want %s", got, want)
	}
}

// TestLetRendersItsValueOnce checks that a value read twice is rendered
// once: the dataflow of Let(l, reduce, join(l, l)) has the operators of
// one reduction, as many as the reduction alone has.
func TestLetRendersItsValueOnce(t *testing.T) {
	tbl := keyValueTable(t, 10, 2, 0)
	fx := newIndexFixture(t, 1, tbl)
	fx.waitUpper(1)
	l := plan.Local(1)
	red := plan.NewReduce(plan.NewGet(fixSrc), []expr.Expr{expr.Column(1)}, plan.Aggregate{Func: plan.AggCountStar})
	key := []expr.Expr{expr.Column(0)}
	reductions := func(p plan.Plan) int {
		t.Helper()
		// Maintained without end: a read at one time only would memoise
		// equal reductions whatever the Let (snapshotplan.go).
		rd := fx.install(p, readerOpts{asOf: 1, until: frontier.Closed()})
		defer rd.drop()
		if got := rd.result(); got == "" {
			t.Fatalf("no rows")
		}
		ops := make(chan []dataflow.OperatorStats, 1)
		fx.ws.Broadcast(func(w *dataflow.Worker) { ops <- w.Operators() })
		n := 0
		for _, op := range <-ops {
			if op.Dataflow == rd.seq && strings.Contains(strings.ToLower(op.Name), "reduce") {
				n++
			}
		}
		return n
	}
	alone := reductions(plan.NewJoin(red, plan.NewConstant(row.RelationDesc{}, plan.ConstantRow{Diff: 1}), nil, nil))
	shared := reductions(plan.NewLet(l, red, plan.NewJoin(plan.NewGet(l), plan.NewGet(l), key, key)))
	if alone == 0 || shared != alone {
		t.Errorf("reduction operators: %d for the value read twice, %d for it alone", shared, alone)
	}
}
