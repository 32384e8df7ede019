package render

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestLetSnapshotReductionsAreNotMemoisedAcrossBindings checks that two
// lets binding one local id to different values in sibling scopes do not
// share a memoised snapshot reduction: the reductions' plans encode alike
// (a count over Get l1) but count different collections.
func TestLetSnapshotReductionsAreNotMemoisedAcrossBindings(t *testing.T) {
	tbl := keyValueTable(t, 10, 2)
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
