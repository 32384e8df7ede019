package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// aggregate is one aggregate call found in a grouped query.
type aggregate struct {
	fn       string // count, sum, min, max, avg
	distinct bool
	star     bool      // count(*)
	arg      expr.Expr // over the input scope; unused for count(*)
	argType  row.ColumnType
	out      row.ColumnType
	// argW and outW are the integer widths of the argument and result:
	// min and max keep their argument's, sum(int2/int4) is bigint as in
	// Postgres.
	argW, outW IntWidth
	// argMod and outMod are the type modifiers of the argument and
	// result: min and max keep their argument's, sum a numeric's scale.
	argMod, outMod TypeMod
	// sep and order are string_agg's separator and ORDER BY (aggfuncs.go);
	// order is also concat_agg's.
	sep   *expr.Expr
	order []plan.AggOrder
	// wrap, for array_agg and ordered jsonb_agg, is the one-element array
	// of arg that concat_agg concatenates (set aside until ORDER BY has
	// been checked against the argument itself).
	wrap *expr.Expr
	// groupingKeys, for GROUPING(...) (fn "grouping"), are its
	// arguments' positions among the keys: the value is a constant of
	// each grouping set, not an aggregation (groupsets.go).
	groupingKeys []int
}

// aggScope maps expressions of a grouped query to the output of its
// aggregation, whose columns are the group keys followed by the
// aggregates. Aggregates are collected as expressions are lowered, so the
// aggregation is built after the select list, HAVING and ORDER BY.
type aggScope struct {
	input *scope
	// inputRel is the relation aggregated (its scope is input), to which
	// subqueries in aggregate arguments add their columns.
	inputRel *rel
	keys     []typed
	aggs     []aggregate
	// sawSubLink records that the first pass met a subquery outside
	// aggregate arguments: those are evaluated over the aggregation's
	// output, so the select list, HAVING and ORDER BY are lowered again
	// once post (that output) exists. postScope is post's scope as a
	// correlated subquery sees it: only the grouped columns by name.
	sawSubLink bool
	post       *rel
	postScope  *scope
	depth      int
	// frame, set for a correlated query level without GROUP BY, makes
	// the aggregation produce one row per outer key (apply.go).
	frame *corrFrame
	// sets, for GROUPING SETS, ROLLUP and CUBE, are the grouping sets as
	// positions in keys (groupsets.go).
	sets [][]int
	// subqueryKeys maps the text of each GROUP BY item holding a
	// subquery to its key (subquery_groupby.go).
	subqueryKeys map[string]int
	// outerCols names the output columns of aggregates moved out of this
	// level's subqueries, and outerExprs are those computed from several
	// (outeragg.go).
	outerCols  map[int]string
	outerExprs []outerExpr
}

// aggDefaults are the aggregates over no rows: count 0, others NULL.
func aggDefaults(a *aggScope) []expr.Expr {
	out := make([]expr.Expr, len(a.aggs))
	for i, g := range a.aggs {
		if g.fn == "count" {
			out[i] = expr.Literal(row.Int64(0))
		} else {
			out[i] = expr.TypedNull(g.out.Type)
		}
	}
	return out
}

// inputScope is the scope * expands to: the aggregated input when
// grouped (a is not nil), else s.
func (a *aggScope) inputScope(s *scope) *scope {
	if a == nil {
		return s
	}
	return a.input
}

func (a *aggScope) outTypes() []row.ColumnType {
	if a.post != nil {
		return a.post.scope.types()
	}
	out := make([]row.ColumnType, 0, len(a.keys)+len(a.aggs))
	for _, k := range a.keys {
		out = append(out, k.t)
	}
	for _, g := range a.aggs {
		out = append(out, g.out)
	}
	return out
}

// match lowers n if it is an aggregate call or a grouped expression.
func (a *aggScope) match(c *exprCtx, n *pg.Node) (typed, bool, error) {
	inner := &exprCtx{p: c.p, scope: a.input, clause: "aggregate function arguments"}
	if gf := n.GetGroupingFunc(); gf != nil {
		x, err := a.groupingCall(c, gf)
		return x, err == nil, err
	}
	if fc := n.GetFuncCall(); fc != nil && fc.Over == nil {
		name, err := funcName(fc)
		if err == nil && isAggregate(name) {
			args := &exprCtx{p: c.p, scope: a.input, rel: a.inputRel, clause: "aggregate function arguments", depth: a.depth}
			x, err := a.aggregateCall(args, name, fc)
			return x, err == nil, err
		}
	}
	if _, isConst := n.Node.(*pg.Node_AConst); isConst {
		return typed{}, false, nil
	}
	if i, ok := a.subqueryKey(n); ok {
		k := a.keys[i]
		return typed{e: expr.Column(i), t: k.t, w: k.w, mod: k.mod}, true, nil
	}
	if x, err := inner.lowerTyped(n); err == nil && !x.untyped() {
		for i, k := range a.keys {
			if k.e.Equal(x.e) {
				return typed{e: expr.Column(i), t: k.t, w: k.w, mod: k.mod}, true, nil
			}
		}
	}
	if cr := n.GetColumnRef(); cr != nil {
		table, col, _, err := columnRefName(cr)
		if err != nil {
			return typed{}, false, err
		}
		if _, err := a.input.resolve(table, col); err != nil {
			return typed{}, false, err
		}
		if table != "" {
			col = table + "." + col
		}
		return typed{}, false, sqlerr.Errorf(sqlerr.GroupingError,
			"column %q must appear in the GROUP BY clause or be used in an aggregate function", col)
	}
	return typed{}, false, nil
}

func (a *aggScope) aggregateCall(inner *exprCtx, name string, fc *pg.FuncCall) (typed, error) {
	if name == "json_agg" || name == "json_object_agg" {
		return a.jsonAggregate(inner, name, fc)
	}
	ordered := name == "jsonb_agg" && (fc.AggFilter != nil || len(fc.AggOrder) > 0)
	if (name == "jsonb_agg" || name == "jsonb_object_agg") && !ordered {
		// FILTER cannot be a CASE over the argument here: these aggregate
		// NULL arguments too; without ORDER BY their order is value order
		// (docs/sql.md). jsonb_agg with FILTER or ORDER BY is planned as
		// array_agg is, below.
		if fc.AggFilter != nil {
			return typed{}, sqlerr.Unsupported("FILTER in " + name)
		}
		if len(fc.AggOrder) > 0 {
			return typed{}, sqlerr.Unsupported("ORDER BY in " + name)
		}
		return a.jsonbAggregate(inner, name, fc)
	}
	g := aggregate{fn: name, distinct: fc.AggDistinct, star: fc.AggStar}
	switch {
	case fc.AggStar:
		if name != "count" {
			return typed{}, sqlerr.Errorf(sqlerr.SyntaxError, "%s(*) is not valid", name)
		}
		g.distinct = false
	case name == "array_agg" || name == "jsonb_agg":
		if err := a.concatAggArg(inner, &g, fc); err != nil {
			return typed{}, err
		}
	case name == "string_agg":
		if err := a.stringAggArgs(inner, &g, fc); err != nil {
			return typed{}, err
		}
	case len(fc.Args) != 1:
		return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s takes exactly one argument", name)
	default:
		want := row.TypeText
		if name == "bool_and" || name == "bool_or" || name == "every" {
			want = row.TypeBool
		}
		x, err := inner.lowerAs(fc.Args[0], want)
		if err != nil {
			return typed{}, err
		}
		g.arg, g.argType, g.argW, g.argMod = x.e, x.t, x.w, x.mod
	}
	if err := refuseJSONKey(g.argType.Type, "an equality"); g.distinct && err != nil {
		return typed{}, err
	}
	if err := a.aggOrder(inner, &g, fc); err != nil {
		return typed{}, err
	}
	if g.wrap != nil {
		// array_agg and ordered jsonb_agg aggregate NULLs too: wrapped in
		// a one-element array before FILTER, only a filtered-out row's
		// argument is NULL.
		g.arg, g.argType, g.wrap = *g.wrap, g.out, nil
		g.argType.Nullable = false
	}
	if err := a.aggFilter(inner, &g, fc.AggFilter); err != nil {
		return typed{}, err
	}
	if err := refuseOuterAggregate(a.input, g.arg); !g.star && err != nil {
		return typed{}, err
	}
	if y, ok, err := a.moreAggregates(g); ok {
		return y, err
	}
	switch name {
	case "count":
		g.out = row.ColumnType{Type: row.TypeInt64}
	case "sum":
		switch g.argType.Type {
		case row.TypeInt64, row.TypeFloat64, row.TypeNumeric:
			g.out = row.ColumnType{Type: g.argType.Type, Nullable: true}
			if g.argType.Type == row.TypeNumeric && g.argMod.Kind == ModNumeric {
				g.outMod = TypeMod{Kind: ModNumeric, Scale: g.argMod.Scale}
			}
			// sum(bigint) stays bigint (Postgres' is numeric): the
			// engine sums exactly in 128 bits and fails with 22003
			// when the sum leaves bigint's range (docs/sql.md).
		case row.TypeInterval:
			g.out = row.ColumnType{Type: row.TypeInterval, Nullable: true}
		default:
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function sum(%s) does not exist", g.argType.Type.PGName())
		}
	case "avg":
		switch g.argType.Type {
		case row.TypeInt64, row.TypeNumeric:
			return a.avgNumeric(g)
		case row.TypeFloat64, row.TypeInterval:
			// avg(interval) is the field-wise sum divided as
			// interval_div divides (the engine's AggAvg).
			g.out = row.ColumnType{Type: g.argType.Type, Nullable: true}
		default:
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function avg(%s) does not exist", g.argType.Type.PGName())
		}
	case "min", "max":
		if g.argType.Type == row.TypeNull {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(unknown) is not unique", name)
		}
		if g.argType.Type == row.TypeUUID || g.argType.Type == row.TypeJSONB || g.argType.Type == row.TypeJSON {
			// Postgres 15 has no min or max over uuid, jsonb or json.
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, g.argType.Type.PGName())
		}
		g.out = row.ColumnType{Type: g.argType.Type, Nullable: true}
		g.outW = g.argW
		g.outMod = g.argMod
	}
	return a.add(g), nil
}

// add returns the output column of aggregate g, adding it unless the
// same aggregate is already computed.
func (a *aggScope) add(g aggregate) typed {
	for i, h := range a.aggs {
		if h.fn == g.fn && h.distinct == g.distinct && h.star == g.star && h.arg.Equal(g.arg) && sameStringAgg(h, g) &&
			slices.Equal(h.groupingKeys, g.groupingKeys) {
			return typed{e: expr.Column(len(a.keys) + i), t: h.out, w: h.outW, mod: h.outMod}
		}
	}
	a.aggs = append(a.aggs, g)
	return typed{e: expr.Column(len(a.keys) + len(a.aggs) - 1), t: g.out, w: g.outW, mod: g.outMod}
}

// avgNumeric plans avg of integers or numerics as Postgres computes it:
// the exact numeric sum divided by the count with numeric division (its
// result scale), so avg(int) is numeric.
func (a *aggScope) avgNumeric(g aggregate) (typed, error) {
	sum := g
	sum.fn = "sum"
	if g.argType.Type == row.TypeInt64 {
		sum.arg = expr.Cast(g.arg, row.TypeNumeric)
	}
	sum.argType = row.ColumnType{Type: row.TypeNumeric, Nullable: g.argType.Nullable}
	sum.out = row.ColumnType{Type: row.TypeNumeric, Nullable: true}
	sum.argW, sum.outW = 0, 0
	sum.argMod, sum.outMod = TypeMod{}, TypeMod{}
	count := g
	count.fn = "count"
	count.out = row.ColumnType{Type: row.TypeInt64}
	count.argW, count.outW = 0, 0
	count.argMod, count.outMod = TypeMod{}, TypeMod{}
	s, n := a.add(sum), a.add(count)
	e := expr.Call(expr.FuncDiv, s.e, expr.Cast(n.e, row.TypeNumeric))
	return typed{e: e, t: row.ColumnType{Type: row.TypeNumeric, Nullable: true}}, nil
}
