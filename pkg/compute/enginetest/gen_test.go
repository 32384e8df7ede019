package enginetest

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Sources of every generated dataflow: A(a int64?, b int64, s text?),
// B(a int64, c int64?). Values are drawn from tiny domains so that joins
// match, groups collide and multiplicities cancel, plus 2^62 so that sums
// and arithmetic overflow (error 22003) and 0 so that division fails
// (error 22012). Texts include the empty string, a NUL byte (escaped by the
// row encoding) and a multi-byte character, for ordering and min/max.
var (
	descA = row.RelationDesc{Names: []string{"a", "b", "s"}, Types: []row.ColumnType{
		{Type: row.TypeInt64, Nullable: true}, {Type: row.TypeInt64}, {Type: row.TypeText, Nullable: true}}}
	descB = row.RelationDesc{Names: []string{"a", "c"}, Types: []row.ColumnType{
		{Type: row.TypeInt64}, {Type: row.TypeInt64, Nullable: true}}}
)

const big = int64(1) << 62

func genDatum(t *rapid.T, ct row.ColumnType, label string) row.Datum {
	if ct.Nullable && rapid.IntRange(0, 5).Draw(t, label+"_null") == 0 {
		return row.Null()
	}
	if ct.Type == row.TypeText {
		return row.Text(rapid.SampledFrom([]string{"", "a", "a\x00b", "b", "é"}).Draw(t, label))
	}
	return row.Int64(rapid.SampledFrom([]int64{0, 1, 1, 2, 3, -1, big}).Draw(t, label))
}

func genRow(t *rapid.T, desc row.RelationDesc, label string) []row.Datum {
	ds := make([]row.Datum, desc.Arity())
	for i, ct := range desc.Types {
		ds[i] = genDatum(t, ct, fmt.Sprintf("%s_%d", label, i))
	}
	return ds
}

// planGen draws random, valid plans over the sources.
type planGen struct {
	t       *rapid.T
	sources map[plan.GlobalID]row.RelationDesc
	ids     []plan.GlobalID
	// locals counts the local ids of Recursive nodes drawn so far (shared
	// with the generators of their steps); inStep says the plan is a
	// step, which must not nest a Recursive node reading its binding.
	locals *int
	inStep bool
}

func (g *planGen) desc(p plan.Plan) row.RelationDesc {
	d, err := p.Desc(plan.MapEnv(g.sources))
	if err != nil {
		g.t.Fatalf("generator built an invalid plan %s: %v", p, err)
	}
	return d
}

// columnsOf returns the indices of columns of type typ.
func columnsOf(d row.RelationDesc, typ row.Type) []int {
	var out []int
	for i, ct := range d.Types {
		if ct.Type == typ {
			out = append(out, i)
		}
	}
	return out
}

// intExpr draws an int64-typed expression over d's columns.
func (g *planGen) intExpr(d row.RelationDesc, depth int, label string) expr.Expr {
	ints := columnsOf(d, row.TypeInt64)
	choice := rapid.IntRange(0, 9).Draw(g.t, label)
	switch {
	case choice < 5 && len(ints) > 0:
		return expr.Column(rapid.SampledFrom(ints).Draw(g.t, label+"_col"))
	case choice < 7 || depth == 0:
		return expr.Literal(row.Int64(rapid.SampledFrom([]int64{0, 1, 2, big}).Draw(g.t, label+"_lit")))
	default:
		op := rapid.SampledFrom([]func(a, b expr.Expr) expr.Expr{expr.Add, expr.Sub, expr.Mul, expr.Div, expr.Mod}).Draw(g.t, label+"_op")
		return op(g.intExpr(d, depth-1, label+"_l"), g.intExpr(d, depth-1, label+"_r"))
	}
}

// predicate draws a boolean expression over d's columns.
func (g *planGen) predicate(d row.RelationDesc, depth int, label string) expr.Expr {
	switch rapid.IntRange(0, 5).Draw(g.t, label) {
	case 0:
		if d.Arity() == 0 {
			break
		}
		return expr.IsNull(expr.Column(rapid.IntRange(0, d.Arity()-1).Draw(g.t, label+"_col")))
	case 1:
		if depth > 0 {
			return expr.Not(g.predicate(d, depth-1, label+"_not"))
		}
	case 2:
		if depth > 0 {
			return expr.Or(g.predicate(d, depth-1, label+"_l"), g.predicate(d, depth-1, label+"_r"))
		}
	}
	cmp := rapid.SampledFrom([]func(a, b expr.Expr) expr.Expr{expr.Eq, expr.Neq, expr.Lt, expr.Gte}).Draw(g.t, label+"_cmp")
	return cmp(g.intExpr(d, 1, label+"_a"), g.intExpr(d, 1, label+"_b"))
}

// columnKey draws a key of minLen-2 columns for a reduction, arrangement
// or index.
func (g *planGen) columnKey(d row.RelationDesc, minLen int, label string) []expr.Expr {
	n := rapid.IntRange(min(minLen, d.Arity()), min(2, d.Arity())).Draw(g.t, label+"_n")
	key := []expr.Expr{}
	for i := range n {
		key = append(key, expr.Column(rapid.IntRange(0, d.Arity()-1).Draw(g.t, fmt.Sprintf("%s_%d", label, i))))
	}
	return key
}

var planKinds = []string{"get", "constant", "mfp", "join", "reduce", "distinct", "threshold", "union", "negate", "top_k", "arrange_by", "window", "recursive", "let"}

// plan draws a plan of at most the given depth.
func (g *planGen) plan(depth int, label string) plan.Plan {
	kind := "get"
	if depth > 0 {
		kind = rapid.SampledFrom(planKinds).Draw(g.t, label)
	} else if rapid.IntRange(0, 4).Draw(g.t, label+"_leaf") == 0 {
		kind = "constant"
	}
	switch kind {
	case "constant":
		n := rapid.IntRange(0, 3).Draw(g.t, label+"_rows")
		rows := make([]plan.ConstantRow, n)
		for i := range rows {
			rows[i] = plan.ConstantRow{
				Datums: genRow(g.t, descA, fmt.Sprintf("%s_row%d", label, i)),
				Diff:   int64(rapid.SampledFrom([]int{1, 2, -1}).Draw(g.t, fmt.Sprintf("%s_diff%d", label, i))),
			}
		}
		return plan.NewConstant(descA, rows...)
	case "mfp":
		in := g.plan(depth-1, label+"_in")
		d := g.desc(in)
		var m expr.MFP
		for i := range rapid.IntRange(0, 2).Draw(g.t, label+"_maps") {
			e := g.intExpr(d, 2, fmt.Sprintf("%s_map%d", label, i))
			m = m.Map(e)
			d = row.RelationDesc{Names: append(d.Names, ""), Types: append(d.Types, row.ColumnType{Type: row.TypeInt64, Nullable: true})}
		}
		for i := range rapid.IntRange(0, 2).Draw(g.t, label+"_preds") {
			m = m.Filter(g.predicate(d, 2, fmt.Sprintf("%s_pred%d", label, i)))
		}
		proj := make([]int, rapid.IntRange(min(1, d.Arity()), min(4, d.Arity())).Draw(g.t, label+"_width"))
		for i := range proj {
			proj[i] = rapid.IntRange(0, d.Arity()-1).Draw(g.t, fmt.Sprintf("%s_proj%d", label, i))
		}
		return plan.NewMfp(in, m.Project(proj...))
	case "join":
		l, r := g.plan(depth-1, label+"_l"), g.plan(depth-1, label+"_r")
		ld, rd := g.desc(l), g.desc(r)
		var lk, rk []expr.Expr
		// Keys are int64 expressions on both sides (every type the
		// generator makes other than float is int64).
		for i := range rapid.IntRange(0, 2).Draw(g.t, label+"_keys") {
			if len(columnsOf(ld, row.TypeInt64)) == 0 || len(columnsOf(rd, row.TypeInt64)) == 0 {
				break
			}
			lk = append(lk, g.intExpr(ld, 1, fmt.Sprintf("%s_lk%d", label, i)))
			rk = append(rk, g.intExpr(rd, 1, fmt.Sprintf("%s_rk%d", label, i)))
		}
		return plan.NewJoin(l, r, lk, rk)
	case "reduce":
		in := g.plan(depth-1, label+"_in")
		d := g.desc(in)
		key := g.columnKey(d, 0, label+"_key")
		if rapid.Bool().Draw(g.t, label+"_exprkey") && len(columnsOf(d, row.TypeInt64)) > 0 {
			key = append(key, g.intExpr(d, 1, label+"_keyexpr"))
		}
		var aggs []plan.Aggregate
		for i := range rapid.IntRange(0, 3).Draw(g.t, label+"_aggs") {
			lab := fmt.Sprintf("%s_agg%d", label, i)
			f := rapid.SampledFrom([]plan.AggregateFunc{plan.AggCountStar, plan.AggCount, plan.AggSum, plan.AggMin, plan.AggMax, plan.AggAvg,
				plan.AggStringAgg, plan.AggVarSamp, plan.AggStddevPop, plan.AggSumSquares, plan.AggConcat}).Draw(g.t, lab)
			if f == plan.AggCountStar || d.Arity() == 0 {
				aggs = append(aggs, plan.Aggregate{Func: plan.AggCountStar})
				continue
			}
			c := rapid.IntRange(0, d.Arity()-1).Draw(g.t, lab+"_col")
			if a, ok := g.moreAggregate(d, f, c, lab); ok {
				aggs = append(aggs, a)
				continue
			}
			if f == plan.AggStringAgg || f == plan.AggVarSamp || f == plan.AggStddevPop || f == plan.AggSumSquares || f == plan.AggConcat {
				f = plan.AggCount
			}
			if (f == plan.AggSum || f == plan.AggAvg) && !d.Types[c].Type.IsNumeric() {
				f = plan.AggCount
			}
			if f == plan.AggAvg && d.Types[c].Type == row.TypeNumeric {
				// The engine's avg takes no numeric (SQL's avg of numeric
				// is planned as sum and count): a column of numerics comes
				// from a reduction's sum_squares below.
				f = plan.AggSum
			}
			aggs = append(aggs, plan.Aggregate{Func: f, Expr: expr.Column(c), Distinct: rapid.IntRange(0, 3).Draw(g.t, lab+"_distinct") == 0})
		}
		return plan.NewReduce(in, key, aggs...)
	case "distinct":
		return plan.NewDistinct(g.plan(depth-1, label+"_in"))
	case "threshold":
		return plan.NewThreshold(g.plan(depth-1, label+"_in"))
	case "negate":
		return plan.NewNegate(g.plan(depth-1, label+"_in"))
	case "union":
		// Inputs of a union need equal column types: derive the second
		// from the first.
		in := g.plan(depth-1, label+"_in")
		var other plan.Plan
		switch rapid.IntRange(0, 3).Draw(g.t, label+"_other") {
		case 0:
			other = plan.NewNegate(in)
		case 1:
			other = plan.NewDistinct(in)
		case 2:
			other = plan.NewThreshold(plan.NewNegate(in))
		default:
			d := g.desc(in)
			other = plan.NewMfp(in, expr.Identity(d.Arity()).Filter(g.predicate(d, 1, label+"_filter")))
		}
		return plan.NewUnion(in, other)
	case "top_k":
		in := g.plan(depth-1, label+"_in")
		d := g.desc(in)
		var group []int
		var order []plan.ColumnOrder
		if d.Arity() == 0 {
			return plan.NewTopK(in, group, order, nil, int64(rapid.IntRange(0, 2).Draw(g.t, label+"_offset")))
		}
		for i := range rapid.IntRange(0, 1).Draw(g.t, label+"_groups") {
			group = append(group, rapid.IntRange(0, d.Arity()-1).Draw(g.t, fmt.Sprintf("%s_group%d", label, i)))
		}
		for i := range rapid.IntRange(0, 2).Draw(g.t, label+"_orders") {
			lab := fmt.Sprintf("%s_order%d", label, i)
			order = append(order, plan.ColumnOrder{
				Column:    rapid.IntRange(0, d.Arity()-1).Draw(g.t, lab),
				Desc:      rapid.Bool().Draw(g.t, lab+"_desc"),
				NullsLast: rapid.Bool().Draw(g.t, lab+"_nullslast"),
			})
		}
		var limit *int64
		if rapid.IntRange(0, 3).Draw(g.t, label+"_haslimit") > 0 {
			l := int64(rapid.IntRange(0, 3).Draw(g.t, label+"_limit"))
			limit = &l
		}
		return plan.NewTopK(in, group, order, limit, int64(rapid.IntRange(0, 2).Draw(g.t, label+"_offset")))
	case "window":
		return g.window(depth, label)
	case "recursive":
		if g.inStep {
			return plan.NewDistinct(g.plan(depth-1, label+"_in"))
		}
		return g.recursive(depth, label)
	case "arrange_by":
		in := g.plan(depth-1, label+"_in")
		return plan.NewArrangeBy(in, g.columnKey(g.desc(in), 1, label+"_key"))
	case "let":
		return g.let(depth, label)
	default:
		return plan.NewGet(rapid.SampledFrom(g.ids).Draw(g.t, label+"_src"))
	}
}

// moreAggregate draws string_agg over a text column (a constant, NULL or
// column separator, maybe an ORDER BY), concat_agg of one-element arrays
// of a column (array_agg, maybe with an ORDER BY), a variance over an integer
// column cast to float64 or a sum of squares of one cast to numeric; ok
// is false when column c does not fit f.
func (g *planGen) moreAggregate(d row.RelationDesc, f plan.AggregateFunc, c int, lab string) (plan.Aggregate, bool) {
	distinct := rapid.IntRange(0, 3).Draw(g.t, lab+"_distinct") == 0
	switch {
	case f == plan.AggStringAgg && d.Types[c].Type == row.TypeText:
		seps := []expr.Expr{expr.Literal(row.Text(",")), expr.Literal(row.Text("")), expr.TypedNull(row.TypeText), expr.Column(c)}
		sep := seps[rapid.IntRange(0, len(seps)-1).Draw(g.t, lab+"_sep")]
		a := plan.Aggregate{Func: f, Expr: expr.Column(c), Sep: &sep, Distinct: distinct}
		if !distinct && rapid.Bool().Draw(g.t, lab+"_ordered") {
			o := rapid.IntRange(0, d.Arity()-1).Draw(g.t, lab+"_ordercol")
			a.OrderBy = []plan.AggOrder{{Expr: expr.Column(o), Desc: rapid.Bool().Draw(g.t, lab+"_desc"), NullsLast: rapid.Bool().Draw(g.t, lab+"_nullslast")}}
		}
		return a, true
	case f == plan.AggConcat:
		if _, ok := row.ArrayOf(d.Types[c].Type); !ok {
			return plan.Aggregate{}, false
		}
		a := plan.Aggregate{Func: f, Expr: expr.Call(expr.FuncArray, expr.Column(c)), Distinct: distinct}
		if rapid.Bool().Draw(g.t, lab+"_ordered") {
			o := c
			if !distinct {
				o = rapid.IntRange(0, d.Arity()-1).Draw(g.t, lab+"_ordercol")
			}
			a.OrderBy = []plan.AggOrder{{Expr: expr.Column(o), Desc: rapid.Bool().Draw(g.t, lab+"_desc"), NullsLast: rapid.Bool().Draw(g.t, lab+"_nullslast")}}
		}
		return a, true
	case (f == plan.AggVarSamp || f == plan.AggStddevPop) && d.Types[c].Type == row.TypeInt64:
		return plan.Aggregate{Func: f, Expr: expr.Cast(expr.Column(c), row.TypeFloat64), Distinct: distinct}, true
	case f == plan.AggSumSquares && d.Types[c].Type == row.TypeInt64:
		return plan.Aggregate{Func: f, Expr: expr.Cast(expr.Column(c), row.TypeNumeric), Distinct: distinct}, true
	}
	return plan.Aggregate{}, false
}
