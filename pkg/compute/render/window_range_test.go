package render

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/reference"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// rangeDomain is an ORDER BY column type for RANGE frames with a target:
// the values rows draw (NULL, NaN and infinities included) and the
// offsets frames draw. A time column's offsets are microseconds for
// time_shift, as the planner lowers them.
type rangeDomain struct {
	typ     row.Type
	values  []row.Datum
	offsets []row.Datum
}

// target is the bound's target expression: #0 plus or minus off.
func (dom rangeDomain) target(off row.Datum, sub bool) expr.Expr {
	if dom.typ == row.TypeTime {
		if sub {
			off = row.Int64(-off.Int64())
		}
		return expr.Call(expr.FuncTimeShift, expr.Column(0), expr.Literal(off))
	}
	fn := expr.FuncAdd
	if sub {
		fn = expr.FuncSub
	}
	return expr.Call(fn, expr.Column(0), expr.Literal(off))
}

func rangeDomains() []rangeDomain {
	num := row.MustNumeric
	day := int64(row.MicrosPerDay)
	ts := func(d, h int64) row.Datum { return row.Timestamp(d*day + h*3600_000_000) }
	hour := int64(3600_000_000)
	iv := func(m, d int32, us int64) row.Datum {
		return row.IntervalDatum(row.Interval{Months: m, Days: d, Micros: us})
	}
	intervals := []row.Datum{iv(0, 0, 0), iv(0, 1, 0), iv(0, 0, 36*3600_000_000), iv(1, 0, 0), iv(0, 2, 0)}
	return []rangeDomain{
		{row.TypeFloat64, []row.Datum{row.Null(), row.Float64(math.NaN()), row.Float64(math.Inf(1)), row.Float64(math.Inf(-1)),
			row.Float64(0), row.Float64(1), row.Float64(1.5), row.Float64(2), row.Float64(4), row.Float64(-3)},
			[]row.Datum{row.Float64(0), row.Float64(1), row.Float64(2.5), row.Float64(math.Inf(1))}},
		{row.TypeNumeric, []row.Datum{row.Null(), num("NaN"), num("Infinity"), num("-Infinity"), num("0"), num("1"), num("1.5"), num("2"), num("4.25"), num("-3")},
			[]row.Datum{num("0"), num("1"), num("2.5"), num("Infinity")}},
		{row.TypeDate, []row.Datum{row.Null(), row.Date(row.DateInfinity), row.Date(row.DateNegInfinity), row.Date(19000), row.Date(19001),
			row.Date(19003), row.Date(19030), row.Date(19031), row.Date(19060)}, intervals},
		{row.TypeTimestamp, []row.Datum{row.Null(), row.Timestamp(row.TimestampInfinity), row.Timestamp(row.TimestampNegInfinity),
			ts(19000, 0), ts(19000, 12), ts(19001, 0), ts(19002, 6), ts(19031, 0), ts(19031, 23)}, intervals},
		{row.TypeTime, []row.Datum{row.Null(), row.Time(0), row.Time(hour / 2), row.Time(hour), row.Time(12 * hour),
			row.Time(23*hour + hour/2), row.Time(day - 1), row.Time(day)},
			[]row.Datum{row.Int64(0), row.Int64(hour), row.Int64(hour + 1), row.Int64(day), row.Int64(math.MaxInt64)}},
		// Intervals order by length: 1 day, 24 hours and 1 month - 29 days
		// are peers.
		{row.TypeInterval, []row.Datum{row.Null(), iv(0, 0, -hour), iv(0, 0, 0), iv(0, 1, 0), iv(0, 0, 24*hour), iv(1, -29, 0),
			iv(0, 0, 25*hour), iv(1, 0, 0), iv(-1, 0, 3*hour), iv(12, 0, 0)}, intervals},
	}
}

// TestRangeTargetFramesMatchReference computes RANGE frames with a target
// (float8, numeric, date, time, timestamp and interval ORDER BY columns)
// with the window
// operator and with the reference evaluator, which follows PostgreSQL's
// in_range definition row by row, over random partitions and frames.
func TestRangeTargetFramesMatchReference(t *testing.T) {
	src := plan.User(9)
	for _, dom := range rangeDomains() {
		for seed := uint64(1); seed <= 60; seed++ {
			r := rand.New(rand.NewPCG(seed, uint64(dom.typ)))
			in := reference.Result{Rows: reference.Collection{}, Errors: reference.Collection{}}
			for id := range 3 + r.IntN(12) {
				v := dom.values[r.IntN(len(dom.values))]
				in.Rows[string(row.Pack(row.Int64(int64(r.IntN(2))), v, row.Int64(int64(id))))]++
			}
			o := plan.ColumnOrder{Column: 1, Desc: r.IntN(2) == 0, NullsLast: r.IntN(2) == 0}
			fr := randomRangeFrame(r, dom, o.Desc)
			w := plan.NewWindow(plan.NewGet(src), []int{0}, []plan.ColumnOrder{o},
				plan.WindowFunc{Func: plan.WinAggregate, Agg: plan.AggCountStar, Arg: -1, Default: -1, Frame: fr},
				plan.WindowFunc{Func: plan.WinAggregate, Agg: plan.AggMin, Arg: 2, Default: -1, Frame: fr},
				plan.WindowFunc{Func: plan.WinAggregate, Agg: plan.AggMax, Arg: 2, Default: -1, Frame: fr})
			name := fmt.Sprintf("%s/seed=%d/%+v", dom.typ, seed, fr)
			want, err := reference.EvalPlan(&w, map[plan.GlobalID]reference.Result{src: in})
			if err != nil {
				t.Fatalf("%s: reference: %v", name, err)
			}
			got := windowByOperator(t, w.Window, in.Rows)
			if fmt.Sprint(got) != fmt.Sprint(want.Rows) {
				t.Fatalf("%s:\n operator  %v\n reference %v", name, got, want.Rows)
			}
		}
	}
}

func randomRangeFrame(r *rand.Rand, dom rangeDomain, desc bool) plan.WindowFrame {
	kinds := [][2]plan.BoundKind{
		{plan.Preceding, plan.CurrentRow}, {plan.CurrentRow, plan.Following}, {plan.Preceding, plan.Following},
		{plan.Preceding, plan.Preceding}, {plan.Following, plan.Following}, {plan.UnboundedPreceding, plan.Preceding},
		{plan.Following, plan.UnboundedFollowing},
	}
	k := kinds[r.IntN(len(kinds))]
	bound := func(kind plan.BoundKind) plan.FrameBound {
		b := plan.FrameBound{Kind: kind}
		if kind == plan.Preceding || kind == plan.Following {
			e := dom.target(dom.offsets[r.IntN(len(dom.offsets))], (kind == plan.Preceding) != desc)
			b.RangeTarget = &e
		}
		return b
	}
	return plan.WindowFrame{Start: bound(k[0]), End: bound(k[1])}
}

// windowByOperator runs the window operator's logic on every partition.
func windowByOperator(t *testing.T, w *plan.Window, rows reference.Collection) reference.Collection {
	spec, err := WindowSpec(w)
	if err != nil {
		t.Fatal(err)
	}
	logic := operators.WindowLogic(spec)
	parts := map[string][]operators.ValDiff{}
	for k, n := range rows {
		ds, err := row.Row(k).Unpack()
		if err != nil {
			t.Fatal(err)
		}
		pk := string(row.Pack(ds[0]))
		parts[pk] = append(parts[pk], operators.ValDiff{Val: []byte(k), Diff: n})
	}
	out := reference.Collection{}
	for pk, in := range parts {
		res, err := logic([]byte(pk), operators.Consolidate(in))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range res {
			out[string(v.Val)] += v.Diff
		}
	}
	return out
}
