package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// This file plans the aggregates beyond count, sum, min, max and avg, and
// the clauses of an aggregate call: FILTER (WHERE ...) becomes a CASE
// over the argument (every aggregate ignores NULL arguments, and count(*)
// becomes count of a constant), ORDER BY is kept by string_agg and
// checked and dropped by the aggregates whose result does not depend on
// order. bool_and/every and bool_or are min and max over booleans;
// variances of floats are engine aggregates, those of integers and
// numerics numeric_var over the count and exact numeric sums.

// aggFilter applies FILTER (WHERE f) to g.
func (a *aggScope) aggFilter(inner *exprCtx, g *aggregate, n *pg.Node) error {
	if n == nil {
		return nil
	}
	fc := *inner
	fc.clause = "FILTER"
	f, err := fc.lowerAs(n, row.TypeBool)
	if err != nil {
		return err
	}
	if err := wantBool(f, "FILTER"); err != nil {
		return err
	}
	if g.star {
		g.star = false
		g.arg = expr.If(f.e, expr.Literal(row.Int64(1)), expr.TypedNull(row.TypeInt64))
		g.argType = row.ColumnType{Type: row.TypeInt64, Nullable: true}
		return nil
	}
	g.arg = expr.If(f.e, g.arg, expr.TypedNull(g.argType.Type))
	g.argType.Nullable = true
	return nil
}

// aggOrder lowers the ORDER BY inside an aggregate call.
func (a *aggScope) aggOrder(inner *exprCtx, g *aggregate, fc *pg.FuncCall) error {
	for _, n := range fc.AggOrder {
		sb := n.GetSortBy()
		if sb == nil {
			return sqlerr.Unsupported("ORDER BY term in an aggregate call")
		}
		if sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return sqlerr.Unsupported("ORDER BY ... USING")
		}
		x, err := inner.lower(sb.Node)
		if err != nil {
			return err
		}
		if g.distinct && !x.e.Equal(g.arg) && (g.sep == nil || !x.e.Equal(*g.sep)) {
			return sqlerr.New("42P10", "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list")
		}
		desc, nullsLast := sortDirection(sb)
		if g.fn == "string_agg" || g.fn == "array_agg" || g.fn == "jsonb_agg" {
			g.order = append(g.order, plan.AggOrder{Expr: x.e, Desc: desc, NullsLast: nullsLast})
		}
	}
	return nil
}

// stringAggArgs lowers string_agg(value, separator): both text, or both
// bytea.
func (a *aggScope) stringAggArgs(inner *exprCtx, g *aggregate, fc *pg.FuncCall) error {
	if len(fc.Args) != 2 {
		return sqlerr.Errorf(sqlerr.UndefinedFunction, "function string_agg takes exactly two arguments")
	}
	x, err := inner.lowerTyped(fc.Args[0])
	if err != nil {
		return err
	}
	sep, err := inner.lowerTyped(fc.Args[1])
	if err != nil {
		return err
	}
	t := row.TypeText
	if (!x.untyped() && x.t.Type == row.TypeBytes) || (!sep.untyped() && sep.t.Type == row.TypeBytes) {
		t = row.TypeBytes
	}
	if x, err = inner.settle(x, t); err != nil {
		return err
	}
	if sep, err = inner.settle(sep, t); err != nil {
		return err
	}
	if x.t.Type != t || (sep.t.Type != t && sep.t.Type != row.TypeNull) {
		return sqlerr.Errorf(sqlerr.UndefinedFunction, "function string_agg(%s, %s) does not exist",
			x.t.Type.PGName(), sep.t.Type.PGName())
	}
	if sep.t.Type == row.TypeNull {
		sep.e = expr.TypedNull(t)
	}
	g.arg, g.argType = x.e, x.t
	g.sep = &sep.e
	g.out = row.ColumnType{Type: t, Nullable: true}
	return nil
}

// sameStringAgg reports whether g and h have the same separator and
// order (always, for other aggregates).
func sameStringAgg(g, h aggregate) bool {
	if (g.sep == nil) != (h.sep == nil) || (g.sep != nil && !g.sep.Equal(*h.sep)) || len(g.order) != len(h.order) {
		return false
	}
	for i, o := range g.order {
		p := h.order[i]
		if !o.Expr.Equal(p.Expr) || o.Desc != p.Desc || o.NullsLast != p.NullsLast {
			return false
		}
	}
	return true
}

// varianceKinds maps the variance aggregates to numeric_var's kinds and
// the engine's float aggregates.
var varianceKinds = map[string]struct {
	kind int64
	fn   plan.AggregateFunc
}{
	"var_pop":     {expr.NumericVarPop, plan.AggVarPop},
	"var_samp":    {expr.NumericVarSamp, plan.AggVarSamp},
	"variance":    {expr.NumericVarSamp, plan.AggVarSamp},
	"stddev_pop":  {expr.NumericStddevPop, plan.AggStddevPop},
	"stddev_samp": {expr.NumericStddevSamp, plan.AggStddevSamp},
	"stddev":      {expr.NumericStddevSamp, plan.AggStddevSamp},
}

// moreAggregates plans bool_and, bool_or, every, string_agg and the
// variances; ok is false for the other aggregates.
func (a *aggScope) moreAggregates(g aggregate) (typed, bool, error) {
	switch g.fn {
	case "bool_and", "every", "bool_or":
		if g.argType.Type != row.TypeBool && g.argType.Type != row.TypeNull {
			return typed{}, true, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", g.fn, g.argType.Type.PGName())
		}
		if g.argType.Type == row.TypeNull {
			g.arg = expr.TypedNull(row.TypeBool)
		}
		if g.fn == "bool_or" {
			g.fn = "max"
		} else {
			g.fn = "min"
		}
		g.out = row.ColumnType{Type: row.TypeBool, Nullable: true}
		g.argW, g.argMod = 0, TypeMod{}
		return a.add(g), true, nil
	case "string_agg":
		return a.add(g), true, nil
	case "array_agg", "jsonb_agg":
		g.fn = string(plan.AggConcat)
		return a.add(g), true, nil
	}
	v, ok := varianceKinds[g.fn]
	if !ok {
		return typed{}, false, nil
	}
	switch g.argType.Type {
	case row.TypeFloat64:
		g.fn = string(v.fn)
		g.out = row.ColumnType{Type: row.TypeFloat64, Nullable: true}
		g.argW, g.argMod = 0, TypeMod{}
		return a.add(g), true, nil
	case row.TypeInt64, row.TypeNumeric:
		y, err := a.numericVariance(g, v.kind)
		return y, true, err
	}
	return typed{}, true, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", g.fn, g.argType.Type.PGName())
}

// numericVariance plans a variance of integers or numerics as PostgreSQL
// computes it: from the count and the exact sums of x and x² (numeric,
// each over the distinct values under DISTINCT), with numeric_var's
// division and square root.
func (a *aggScope) numericVariance(g aggregate, kind int64) (typed, error) {
	x := g.arg
	scale := int64(0)
	if g.argType.Type == row.TypeInt64 {
		x = expr.Cast(x, row.TypeNumeric)
	} else if g.argMod.Kind == ModNumeric {
		scale = int64(g.argMod.Scale)
	}
	num := row.ColumnType{Type: row.TypeNumeric, Nullable: true}
	count := aggregate{fn: "count", arg: x, argType: num, out: row.ColumnType{Type: row.TypeInt64}, distinct: g.distinct}
	sum := aggregate{fn: "sum", arg: x, argType: num, out: num, distinct: g.distinct}
	sq := aggregate{fn: string(plan.AggSumSquares), arg: x, argType: num, out: num, distinct: g.distinct}
	n, s, ss := a.add(count), a.add(sum), a.add(sq)
	e := expr.Call(expr.FuncNumericVar, n.e, s.e, ss.e, expr.Literal(row.Int64(kind)), expr.Literal(row.Int64(scale)))
	return typed{e: e, t: num}, nil
}

// concatAggArg lowers the argument of array_agg(x) and of jsonb_agg(x)
// with FILTER or ORDER BY, both concat_agg of a one-element array:
// ARRAY[x] (x of a type with arrays, not itself an array: PostgreSQL's
// array_agg of arrays is multidimensional), or jsonb_build_array(x) of x
// as to_jsonb gives it.
func (a *aggScope) concatAggArg(inner *exprCtx, g *aggregate, fc *pg.FuncCall) error {
	if len(fc.Args) != 1 {
		return sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s takes exactly one argument", g.fn)
	}
	x, err := inner.lowerTyped(fc.Args[0])
	if err != nil {
		return err
	}
	g.arg, g.argType, g.argW, g.argMod = x.e, x.t, x.w, x.mod
	if g.fn == "jsonb_agg" {
		v, err := inner.jsonbValue(x)
		if err != nil {
			return err
		}
		w := expr.Call(expr.FuncJSONBuildArray, v)
		g.wrap = &w
		g.out = row.ColumnType{Type: row.TypeJSONB, Nullable: true}
		return nil
	}
	switch {
	case x.untyped() || x.t.Type == row.TypeNull:
		return sqlerr.Errorf("42725" /* ambiguous_function */, "function array_agg(unknown) is not unique")
	case x.t.Type.IsArray():
		return sqlerr.Unsupported("array_agg of arrays (multidimensional arrays)")
	}
	at, err := expr.ArrayType(x.t.Type)
	if err != nil {
		return sqlerr.Unsupported("arrays of type " + x.t.Type.PGName())
	}
	w := arrayOf(x.t.Type, x.e)
	g.wrap = &w
	g.out = row.ColumnType{Type: at, Nullable: true}
	g.outW = x.w
	g.outMod = elemArrayMod(x.mod)
	g.outMod.Unsized = g.outMod.Kind == ModBpchar // bpchar[]: typmod -1
	return nil
}

// stringAggExplain is string_agg's separator and ORDER BY, and
// concat_agg's ORDER BY, as EXPLAIN shows them.
func stringAggExplain(a plan.Aggregate) string {
	if a.Sep == nil && len(a.OrderBy) == 0 {
		return ""
	}
	s := ""
	if a.Sep != nil {
		s = ", " + a.Sep.String()
	}
	for i, o := range a.OrderBy {
		if i == 0 {
			s += " order by "
		} else {
			s += ", "
		}
		s += o.Expr.String()
		if o.Desc {
			s += " desc"
		}
		if o.NullsLast != !o.Desc {
			if o.NullsLast {
				s += " nulls last"
			} else {
				s += " nulls first"
			}
		}
	}
	return s
}
