package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// GROUPING SETS, ROLLUP and CUBE. The GROUP BY items expand into a list
// of grouping sets (the cartesian product of each item's sets, as in
// PostgreSQL); each set is a list of positions in the aggregation's keys.
// The aggregation is then the union of one Reduce per set, each row
// carrying NULL for the keys its set does not group by; an empty set is a
// global aggregate (one row even over no input).

// maxGroupingSets is PostgreSQL's limit.
const maxGroupingSets = 4096

// groupingSets fills agg.keys and agg.sets from a GROUP BY with grouping
// set items.
func (p *Planner) groupingSets(sel *pg.SelectStmt, c *exprCtx, agg *aggScope) error {
	if len(agg.keys) > 0 {
		return sqlerr.Unsupported("GROUPING SETS, ROLLUP and CUBE in a correlated subquery")
	}
	sets := [][]int{{}}
	for _, g := range sel.GroupClause {
		item, err := p.groupItemSets(sel, c, agg, g)
		if err != nil {
			return err
		}
		next := make([][]int, 0, len(sets)*len(item))
		for _, s := range sets {
			for _, t := range item {
				next = append(next, append(append([]int(nil), s...), t...))
			}
		}
		if len(next) > maxGroupingSets {
			return sqlerr.Errorf(statementTooComplex, "too many grouping sets present (maximum %d)", maxGroupingSets)
		}
		sets = next
	}
	agg.sets = sets
	return nil
}

// groupItemSets expands one GROUP BY item into its grouping sets.
func (p *Planner) groupItemSets(sel *pg.SelectStmt, c *exprCtx, agg *aggScope, g *pg.Node) ([][]int, error) {
	gs := g.GetGroupingSet()
	if gs == nil {
		unit, err := p.groupUnit(sel, c, agg, g)
		return [][]int{unit}, err
	}
	switch gs.Kind {
	case pg.GroupingSetKind_GROUPING_SET_EMPTY:
		return [][]int{{}}, nil
	case pg.GroupingSetKind_GROUPING_SET_SIMPLE:
		var set []int
		for _, n := range gs.Content {
			unit, err := p.groupUnit(sel, c, agg, n)
			if err != nil {
				return nil, err
			}
			set = append(set, unit...)
		}
		return [][]int{set}, nil
	case pg.GroupingSetKind_GROUPING_SET_SETS:
		var out [][]int
		for _, n := range gs.Content {
			sets, err := p.groupItemSets(sel, c, agg, n)
			if err != nil {
				return nil, err
			}
			out = append(out, sets...)
		}
		return out, nil
	case pg.GroupingSetKind_GROUPING_SET_ROLLUP, pg.GroupingSetKind_GROUPING_SET_CUBE:
		units := make([][]int, len(gs.Content))
		for i, n := range gs.Content {
			unit, err := p.groupUnit(sel, c, agg, n)
			if err != nil {
				return nil, err
			}
			units[i] = unit
		}
		if gs.Kind == pg.GroupingSetKind_GROUPING_SET_ROLLUP {
			return rollup(units), nil
		}
		if len(units) > 12 {
			return nil, sqlerr.Errorf(statementTooComplex, "CUBE is limited to 12 elements")
		}
		return cube(units), nil
	}
	return nil, sqlerr.Unsupported("this grouping set")
}

// groupUnit lowers a grouping element: an expression, or a parenthesized
// list of them (a row), to key positions.
func (p *Planner) groupUnit(sel *pg.SelectStmt, c *exprCtx, agg *aggScope, n *pg.Node) ([]int, error) {
	items := []*pg.Node{n}
	if row := n.GetRowExpr(); row != nil {
		items = row.Args
	}
	var out []int
	for _, it := range items {
		x, n, err := p.groupExpr(sel, c, it)
		if err != nil {
			return nil, err
		}
		i := agg.keyIndex(x)
		agg.noteSubqueryKey(n, i)
		out = append(out, i)
	}
	return out, nil
}

// rollup is (u1..un), (u1..un-1), ..., ().
func rollup(units [][]int) [][]int {
	out := make([][]int, 0, len(units)+1)
	for n := len(units); n >= 0; n-- {
		var set []int
		for _, u := range units[:n] {
			set = append(set, u...)
		}
		out = append(out, set)
	}
	return out
}

// cube is every subset of the units.
func cube(units [][]int) [][]int {
	var out [][]int
	for mask := (1 << len(units)) - 1; mask >= 0; mask-- {
		var set []int
		for i, u := range units {
			if mask&(1<<i) != 0 {
				set = append(set, u...)
			}
		}
		out = append(out, set)
	}
	return out
}

// groupingCall lowers GROUPING(args): a bit per argument, the last
// argument's the lowest, set when the row's grouping set does not group
// by it. Each argument must be one of the keys (42803). Without grouping
// sets every row groups by every key, so it is 0; with them it is a
// constant of each set's aggregation (reduceSets).
func (a *aggScope) groupingCall(c *exprCtx, gf *pg.GroupingFunc) (typed, error) {
	if len(gf.Args) > 31 {
		return typed{}, sqlerr.New("54023", "GROUPING must have fewer than 32 arguments")
	}
	inner := &exprCtx{p: c.p, scope: a.input, clause: "GROUPING"}
	keys := make([]int, len(gf.Args))
	for i, arg := range gf.Args {
		if j, ok := a.subqueryKey(arg); ok {
			keys[i] = j
			continue
		}
		x, err := inner.lowerTyped(arg)
		if err != nil {
			return typed{}, err
		}
		keys[i] = -1
		for j, k := range a.keys {
			if k.e.Equal(x.e) {
				keys[i] = j
				break
			}
		}
		if keys[i] < 0 || a.frame != nil && keys[i] < a.frame.arity() {
			return typed{}, errGroupingArgs
		}
	}
	out := row.ColumnType{Type: row.TypeInt64}
	if a.sets == nil {
		return typed{e: expr.Literal(row.Int64(0)), t: out, w: IntWidth4}, nil
	}
	return a.add(aggregate{fn: "grouping", groupingKeys: keys, out: out, outW: IntWidth4}), nil
}

// errGroupingArgs is PostgreSQL's error for GROUPING over an expression
// that is not grouped by (or outside a grouped query).
var errGroupingArgs = sqlerr.New(sqlerr.GroupingError, "arguments to GROUPING must be grouping expressions of the associated query level")

// groupingMask is GROUPING's value for the rows of one grouping set.
func groupingMask(keys, set []int) int64 {
	var mask int64
	for _, k := range keys {
		mask <<= 1
		if !slices.Contains(set, k) {
			mask |= 1
		}
	}
	return mask
}

// reduceSets is the union of one aggregation per grouping set, each
// padded to all the keys (NULL where the set does not group by a key).
// GROUPING(...) columns are each set's constant, not aggregates.
func (p *Planner) reduceSets(r *rel, agg *aggScope) *rel {
	full := *agg
	full.sets = nil
	shape := p.reduce(r, &full) // for the output scope only
	s := &scope{cols: append([]column(nil), shape.scope.cols...)}
	for i := range s.cols {
		s.cols[i].typ.Nullable = s.cols[i].typ.Nullable || i >= len(agg.keys) && agg.aggs[i-len(agg.keys)].fn != "count"
	}
	parts := make([]plan.Plan, 0, len(agg.sets))
	var computed []aggregate
	for _, g := range agg.aggs {
		if g.fn != "grouping" {
			computed = append(computed, g)
		}
	}
	for _, set := range agg.sets {
		sub := full
		sub.aggs = computed
		sub.keys = make([]typed, len(set))
		for i, k := range set {
			sub.keys[i] = agg.keys[k]
		}
		red := p.reduce(r, &sub)
		es := make([]expr.Expr, 0, len(s.cols))
		for i, k := range agg.keys {
			pos := -1
			for j, c := range set {
				if c == i && pos < 0 {
					pos = j
				}
			}
			if pos < 0 {
				es = append(es, expr.TypedNull(k.t.Type))
				s.cols[i].typ.Nullable = true
			} else {
				es = append(es, expr.Column(pos))
			}
		}
		j := 0
		for _, g := range agg.aggs {
			if g.fn == "grouping" {
				es = append(es, expr.Literal(row.Int64(groupingMask(g.groupingKeys, set))))
				continue
			}
			es = append(es, expr.Column(len(set)+j))
			j++
		}
		red.project(es, s)
		parts = append(parts, red.plan())
	}
	return newRel(plan.NewUnion(parts...), s)
}
