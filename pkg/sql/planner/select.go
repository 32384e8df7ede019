package planner

import (
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// target is one output column of a SELECT.
type target struct {
	name string
	x    typed
}

// selectCore plans FROM, WHERE, GROUP BY, HAVING, the select list,
// DISTINCT and the ORDER BY expressions of one SELECT. The returned rel's
// first outCols columns are the select list; columns after them exist
// only for ORDER BY and are projected away by the finishing, whose order
// is returned in ctxOrder.
//
// A correlated level (frame not nil, apply.go) joins the frame's outer
// values into FROM and keeps them as the first columns of its output.
func (p *Planner) selectCore(sel *pg.SelectStmt, depth int, frame *corrFrame) (*rel, *orderInfo, int, error) {
	var conjuncts []*pg.Node
	if sel.WhereClause != nil {
		conjuncts = whereConjuncts(sel.WhereClause)
	}
	var temporal []temporalSide
	if p.Maintained {
		conjuncts, temporal = splitTemporal(conjuncts)
	}
	r, nk, conjuncts, err := p.fromWithFrame(sel.FromClause, conjuncts, depth, frame)
	if err != nil {
		return nil, nil, 0, err
	}
	r, subPreds, err := p.applyConjuncts(r, conjuncts, "WHERE", "WHERE", depth)
	if err != nil {
		return nil, nil, 0, err
	}
	distinctOn := len(sel.DistinctClause) > 0 && (len(sel.DistinctClause) > 1 || sel.DistinctClause[0].Node != nil)
	distinct := len(sel.DistinctClause) > 0 && !distinctOn
	// Aggregates of this level written inside its subqueries (outeragg.go).
	hoisted, err := p.hoistOuterAggregates(sel, r.scope)
	if err != nil {
		return nil, nil, 0, err
	}
	grouped := len(sel.GroupClause) > 0 || sel.HavingClause != nil || hasAggregate(sel.TargetList) ||
		hasAggregate(sortNodes(sel.SortClause)) || len(hoisted) > 0
	windowed := hasWindow(sel.TargetList) || hasWindow(sortNodes(sel.SortClause))
	var srf *srfScope
	outputs := append(sortNodes(sel.SortClause), sel.TargetList...)
	if distinctOn {
		// DISTINCT ON items are resjunk outputs, their calls evaluated
		// with the select list's.
		outputs = append(outputs, sel.DistinctClause...)
	}
	if hasSetReturning(outputs) {
		if err := checkSRFPlacement(outputs); err != nil {
			return nil, nil, 0, err
		}
		srf = &srfScope{}
	}
	if len(temporal) > 0 || grouped || windowed || srf != nil {
		// These read r's rows: WHERE applies first.
		r.filter(subPreds...)
		subPreds = nil
	}
	if len(temporal) > 0 {
		if r, err = p.temporalFilter(r, temporal, depth); err != nil {
			return nil, nil, 0, err
		}
	}
	var agg *aggScope
	if grouped {
		if sel.GroupDistinct {
			return nil, nil, 0, sqlerr.Unsupported("GROUP BY DISTINCT")
		}
		agg = &aggScope{input: r.scope, inputRel: r, depth: depth}
		if frame != nil {
			agg.keys = frame.keyColumns()
			if len(sel.GroupClause) == 0 {
				agg.frame = frame
			}
		}
		if err := p.groupKeys(sel, r.scope, agg); err != nil {
			return nil, nil, 0, err
		}
		ctx := &exprCtx{p: p, scope: r.scope, rel: r, clause: "aggregate function arguments", depth: depth}
		if err := agg.registerOuterAggregates(ctx, hoisted); err != nil {
			return nil, nil, 0, err
		}
	}
	named, err := namedWindows(sel.WindowClause)
	if err != nil {
		return nil, nil, 0, err
	}
	var win *winScope
	if windowed {
		win = &winScope{named: named}
	}
	out, err := p.lowerOutputs(sel, r, agg, depth, win, srf.fresh())
	if err != nil {
		return nil, nil, 0, err
	}
	if grouped {
		r = p.reduce(r, agg)
		agg.appendOuterExprs(r)
		if agg.sawSubLink || windowed {
			// Subqueries over the aggregation's output attach to it now
			// that it exists: lower the outputs again over it (the
			// aggregates found by the first pass are the same).
			agg.post = r
			agg.postScope = agg.groupedScope(r.scope)
			if windowed {
				win = &winScope{named: named}
			}
			if out, err = p.lowerOutputs(sel, r, agg, depth, win, srf.fresh()); err != nil {
				return nil, nil, 0, err
			}
		}
		if out.having != nil {
			r.filter(out.having.e)
		}
	}
	if windowed {
		// Window functions see the rows after WHERE, GROUP BY and
		// HAVING; the outputs are lowered again over their results.
		r = buildWindows(r, win, nk)
		if grouped {
			agg.post, agg.postScope = r, agg.groupedScope(r.scope)
		}
		win.resolve = true
		if out, err = p.lowerOutputs(sel, r, agg, depth, win, srf.fresh()); err != nil {
			return nil, nil, 0, err
		}
	}
	for srf != nil && !srf.resolve {
		// Set-returning calls run over the rows so far, a level at a
		// time; the last lowering's calls are over r as it now is.
		r = buildSRFs(r, srf)
		if grouped {
			agg.post, agg.postScope = r, agg.groupedScope(r.scope)
		}
		if out, err = p.lowerOutputs(sel, r, agg, depth, win, srf); err != nil {
			return nil, nil, 0, err
		}
	}
	targets, extras, order := out.targets, out.extras, out.order
	for _, tg := range targets {
		if err := refuseJSONKey(tg.x.t.Type, "an equality"); distinct && err != nil {
			return nil, nil, 0, err
		}
	}
	if distinct && len(extras) > 0 {
		return nil, nil, 0, sqlerr.New("42P10", "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
	}
	es := make([]expr.Expr, 0, nk+len(targets)+len(extras))
	s := &scope{}
	for i := 0; i < nk; i++ {
		es = append(es, expr.Column(i))
		s.cols = append(s.cols, column{name: "?key?", typ: r.scope.cols[i].typ, w: r.scope.cols[i].w, hidden: true})
	}
	for i := range order {
		order[i].Column += nk
	}
	for _, t := range targets {
		es = append(es, t.x.e)
		s.cols = append(s.cols, column{name: t.name, typ: t.x.t, w: t.x.w, mod: t.x.mod})
	}
	for _, x := range extras {
		es = append(es, x.e)
		s.cols = append(s.cols, column{name: "?order?", typ: x.t, w: x.w, hidden: true})
	}
	// The select list's subqueries were attached to r's relation before
	// its WHERE subquery columns, as those were (conjuncts.go); the MFP
	// evaluates the outputs only for rows that pass.
	r.filter(subPreds...)
	r.project(es, s)
	if distinct {
		r = newRel(plan.NewDistinct(r.plan()), r.scope)
	}
	if distinctOn {
		// The first row in ORDER BY order of each DISTINCT ON group (per
		// outer value in a correlated subquery): a maintained TopK.
		group := identityInts(nk)
		for _, c := range out.distinctOn {
			group = append(group, c+nk)
		}
		one := int64(1)
		r = newRel(plan.NewTopK(r.plan(), group, order, &one, 0), r.scope)
	}
	return r, &orderInfo{order: order}, nk + len(targets), nil
}

// outputs are the lowered select list, HAVING and ORDER BY of a SELECT.
type outputs struct {
	targets []target
	having  *typed
	order   []plan.ColumnOrder
	extras  []typed
	// distinctOn are the output columns of DISTINCT ON (...).
	distinctOn []int
}

// checkDistinctOn is PostgreSQL's rule: with ORDER BY, the DISTINCT ON
// expressions must be its leading items (in any order among themselves).
func checkDistinctOn(on []int, order []plan.ColumnOrder) error {
	skipped := false
	seen := map[int]bool{}
	for _, o := range order {
		if !slices.Contains(on, o.Column) {
			skipped = true
			continue
		}
		if skipped {
			return sqlerr.New("42P10", "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")
		}
		seen[o.Column] = true
	}
	for _, c := range on {
		if !seen[c] && skipped {
			return sqlerr.New("42P10", "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")
		}
	}
	return nil
}

// lowerOutputs lowers the select list, HAVING and ORDER BY of sel over r
// (over the aggregation described by agg when grouped).
//
// win, when the query has window calls, collects or resolves them in the
// select list and ORDER BY.
//
// srf likewise collects or resolves set-returning calls (srf.go).
func (p *Planner) lowerOutputs(sel *pg.SelectStmt, r *rel, agg *aggScope, depth int, win *winScope, srf *srfScope) (outputs, error) {
	ctx := func(clause string) *exprCtx {
		c := &exprCtx{p: p, scope: r.scope, rel: r, clause: clause, depth: depth}
		if agg != nil {
			c = &exprCtx{p: p, scope: r.scope, agg: agg, clause: clause, depth: depth}
		}
		if clause != "HAVING" {
			c.win, c.srf = win, srf
		}
		return c
	}
	var out outputs
	var err error
	if out.targets, err = p.targetList(sel.TargetList, ctx("the select list"), agg.inputScope(r.scope)); err != nil {
		return outputs{}, err
	}
	if sel.HavingClause != nil {
		x, err := ctx("HAVING").lowerAs(sel.HavingClause, row.TypeBool)
		if err != nil {
			return outputs{}, err
		}
		if err := wantBool(x, "HAVING"); err != nil {
			return outputs{}, err
		}
		out.having = &x
	}
	if len(sel.DistinctClause) > 0 && sel.DistinctClause[0].Node != nil {
		// DISTINCT ON items resolve like ORDER BY items: lower both
		// together, the DISTINCT ON ones first.
		sorts := make([]*pg.Node, 0, len(sel.DistinctClause)+len(sel.SortClause))
		for _, n := range sel.DistinctClause {
			sorts = append(sorts, &pg.Node{Node: &pg.Node_SortBy{SortBy: &pg.SortBy{Node: n}}})
		}
		sorts = append(sorts, sel.SortClause...)
		all, extras, err := p.orderBy(sorts, out.targets, ctx("DISTINCT ON"))
		if err != nil {
			return outputs{}, err
		}
		nd := len(sel.DistinctClause)
		out.extras, out.order = extras, all[nd:]
		for _, o := range all[:nd] {
			out.distinctOn = append(out.distinctOn, o.Column)
		}
		return out, checkDistinctOn(out.distinctOn, out.order)
	}
	if out.order, out.extras, err = p.orderBy(sel.SortClause, out.targets, ctx("ORDER BY")); err != nil {
		return outputs{}, err
	}
	return out, nil
}

// groupedScope is the scope of an aggregation's output as a correlated
// subquery sees it: the grouped columns keep their names, the aggregates
// cannot be named.
func (a *aggScope) groupedScope(s *scope) *scope {
	out := &scope{cols: append([]column(nil), s.cols...)}
	for i := len(a.keys); i < len(out.cols); i++ {
		out.cols[i] = column{name: "?aggregate?", typ: out.cols[i].typ, hidden: true}
		if name, ok := a.outerCols[i]; ok {
			// An aggregate moved out of a subquery, which reads it by
			// this name (outeragg.go).
			out.cols[i] = column{name: name, typ: out.cols[i].typ, unstarred: true}
		}
	}
	return out
}

// orderInfo carries the ORDER BY a SELECT resolved itself.
type orderInfo struct {
	order []plan.ColumnOrder
}

func wantBool(x typed, clause string) error {
	if x.t.Type != row.TypeBool && x.t.Type != row.TypeNull {
		return sqlerr.Errorf(sqlerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s", clause, x.t.Type.PGName())
	}
	return nil
}

func sortNodes(sorts []*pg.Node) []*pg.Node {
	out := make([]*pg.Node, 0, len(sorts))
	for _, s := range sorts {
		if sb := s.GetSortBy(); sb != nil {
			out = append(out, sb.Node)
		}
	}
	return out
}

// hasAggregate reports whether any expression calls an aggregate outside
// a subquery.
func hasAggregate(nodes []*pg.Node) bool { return callsOf(nodes, isAggregate) }

// callsOf reports whether any expression calls, outside subqueries and
// without OVER, a function of the class.
func callsOf(nodes []*pg.Node, class func(name string) bool) bool {
	found := false
	for _, n := range nodes {
		walkExpr(n, func(m *pg.Node) bool {
			if fc := m.GetFuncCall(); fc != nil && fc.Over == nil {
				if name, err := funcName(fc); err == nil && class(name) {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// walkExpr calls f on n and its sub-expressions (not descending into
// subqueries) while f returns true.
func walkExpr(n *pg.Node, f func(*pg.Node) bool) {
	if n == nil || !f(n) {
		return
	}
	var kids []*pg.Node
	switch v := n.Node.(type) {
	case *pg.Node_ResTarget:
		kids = []*pg.Node{v.ResTarget.Val}
	case *pg.Node_AExpr:
		kids = []*pg.Node{v.AExpr.Lexpr, v.AExpr.Rexpr}
	case *pg.Node_List:
		kids = v.List.Items
	case *pg.Node_BoolExpr:
		kids = v.BoolExpr.Args
	case *pg.Node_FuncCall:
		kids = v.FuncCall.Args
	case *pg.Node_NullTest:
		kids = []*pg.Node{v.NullTest.Arg}
	case *pg.Node_BooleanTest:
		kids = []*pg.Node{v.BooleanTest.Arg}
	case *pg.Node_CaseExpr:
		kids = append([]*pg.Node{v.CaseExpr.Arg, v.CaseExpr.Defresult}, v.CaseExpr.Args...)
	case *pg.Node_CaseWhen:
		kids = []*pg.Node{v.CaseWhen.Expr, v.CaseWhen.Result}
	case *pg.Node_CoalesceExpr:
		kids = v.CoalesceExpr.Args
	case *pg.Node_MinMaxExpr:
		kids = v.MinMaxExpr.Args
	case *pg.Node_TypeCast:
		kids = []*pg.Node{v.TypeCast.Arg}
	}
	for _, k := range kids {
		walkExpr(k, f)
	}
}

// groupKeys lowers the GROUP BY items: a position in the select list, an
// expression over the input, or (as Postgres allows) an output alias.
func (p *Planner) groupKeys(sel *pg.SelectStmt, in *scope, agg *aggScope) error {
	// rel: a subquery in GROUP BY attaches to the aggregated relation,
	// as one in WHERE does (subquery_groupby.go).
	c := &exprCtx{p: p, scope: in, rel: agg.inputRel, clause: "GROUP BY", depth: agg.depth}
	for _, g := range sel.GroupClause {
		if _, ok := g.Node.(*pg.Node_GroupingSet); ok {
			return p.groupingSets(sel, c, agg)
		}
	}
	for _, g := range sel.GroupClause {
		x, n, err := p.groupExpr(sel, c, g)
		if err != nil {
			return err
		}
		if err := refuseJSONKey(x.t.Type, "an equality"); err != nil {
			return err
		}
		agg.noteSubqueryKey(n, agg.keyIndex(x))
	}
	return nil
}

// keyIndex returns the position of x among the group keys, adding it.
func (a *aggScope) keyIndex(x typed) int {
	for i, k := range a.keys {
		if k.e.Equal(x.e) {
			return i
		}
	}
	a.keys = append(a.keys, x)
	return len(a.keys) - 1
}

// groupExpr lowers one GROUP BY item: a position in the select list, an
// expression over the input, or (as Postgres allows) an output alias. It
// also returns the expression the item stands for.
func (p *Planner) groupExpr(sel *pg.SelectStmt, c *exprCtx, g *pg.Node) (typed, *pg.Node, error) {
	in := c.scope
	n := g
	if k := g.GetAConst(); k != nil && k.GetIval() != nil {
		pos := int(k.GetIval().Ival)
		if pos < 1 || pos > len(sel.TargetList) {
			return typed{}, nil, sqlerr.Errorf("42P10", "GROUP BY position %d is not in select list", pos)
		}
		n = sel.TargetList[pos-1].GetResTarget().GetVal()
		if n == nil || n.GetColumnRef() != nil && starRef(n.GetColumnRef()) {
			return typed{}, nil, sqlerr.Unsupported("GROUP BY position of *")
		}
	} else if cr := g.GetColumnRef(); cr != nil {
		if t, col, _, err := columnRefName(cr); err == nil && t == "" {
			if _, err := in.resolve("", col); err != nil {
				for _, tn := range sel.TargetList {
					if rt := tn.GetResTarget(); rt != nil && rt.Name == col {
						n = rt.Val
						break
					}
				}
			}
		}
	}
	x, err := c.lower(n)
	return x, n, err
}

func starRef(cr *pg.ColumnRef) bool {
	_, _, star, _ := columnRefName(cr)
	return star
}

// reduce builds the aggregation of r described by agg. A global
// aggregate (no GROUP BY) has exactly one output row even over no input:
// the plan adds a default row and cancels it whenever the reduction
// produced one, with Union(R, default, Negate(R mapped to default)).
func (p *Planner) reduce(r *rel, agg *aggScope) *rel {
	if agg.sets != nil {
		return p.reduceSets(r, agg)
	}
	keys := make([]expr.Expr, len(agg.keys))
	for i, k := range agg.keys {
		keys[i] = k.e
	}
	aggs := make([]plan.Aggregate, len(agg.aggs))
	for i, g := range agg.aggs {
		switch {
		case g.star:
			aggs[i] = plan.Aggregate{Func: plan.AggCountStar}
		default:
			aggs[i] = plan.Aggregate{Func: plan.AggregateFunc(g.fn), Expr: g.arg, Distinct: g.distinct, Sep: g.sep, OrderBy: g.order}
		}
	}
	red := plan.NewReduce(r.plan(), keys, aggs...)
	s := &scope{}
	for i, k := range agg.keys {
		col := column{name: exprName(k.e, agg.input, i), typ: k.t, w: k.w, mod: k.mod}
		if k.e.Op == expr.OpColumn && k.e.Index < len(agg.input.cols) {
			// A grouped column keeps its table, so that a correlated
			// subquery over the aggregation can name it qualified.
			col.table = agg.input.cols[k.e.Index].table
			col.outer = agg.input.cols[k.e.Index].outer
		}
		s.cols = append(s.cols, col)
	}
	for _, g := range agg.aggs {
		t := g.out
		if (len(agg.keys) == 0 || agg.frame != nil) && g.fn != "count" {
			t.Nullable = true
		}
		s.cols = append(s.cols, column{name: g.fn, typ: t, w: g.outW, mod: g.outMod})
	}
	if agg.frame != nil {
		return newRel(perKeyDefaults(agg.frame, red, aggDefaults(agg)), s)
	}
	if len(agg.keys) > 0 {
		return newRel(red, s)
	}
	defaults := make([]row.Datum, len(agg.aggs))
	lits := make([]expr.Expr, len(agg.aggs))
	desc := row.RelationDesc{Names: s.names(), Types: s.types()}
	for i, g := range agg.aggs {
		if g.fn == "count" {
			defaults[i] = row.Int64(0)
			lits[i] = expr.Literal(row.Int64(0))
		} else {
			defaults[i] = row.Null()
			lits[i] = expr.TypedNull(g.out.Type)
			desc.Types[i].Nullable = true
		}
	}
	proj := make([]int, len(lits))
	for i := range proj {
		proj[i] = len(agg.aggs) + i
	}
	cancel := plan.NewNegate(plan.NewMfp(red, expr.MFP{Expressions: lits, Projection: proj}))
	def := plan.NewConstant(desc, plan.ConstantRow{Datums: defaults, Diff: 1})
	return newRel(plan.NewUnion(red, def, cancel), s)
}

func exprName(e expr.Expr, s *scope, i int) string {
	if e.Op == expr.OpColumn && e.Index < len(s.cols) {
		return s.cols[e.Index].name
	}
	return "?column?"
}

// targetList lowers the select list, expanding * and t.*.
func (p *Planner) targetList(list []*pg.Node, c *exprCtx, in *scope) ([]target, error) {
	var out []target
	for i, n := range list {
		rt := n.GetResTarget()
		if rt == nil {
			return nil, sqlerr.New(sqlerr.SyntaxError, "malformed select list")
		}
		if tg, ok, err := p.hintedLiteral(c, list, i, rt); err != nil {
			return nil, err
		} else if ok {
			out = append(out, tg)
			continue
		}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			table, _, star, err := columnRefName(cr)
			if err != nil {
				return nil, err
			}
			if star {
				if table != "" && !in.hasTableLevel(table, false) {
					return nil, sqlerr.Errorf(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", table)
				}
				if table == "" && len(in.cols) == 0 {
					return nil, sqlerr.New(sqlerr.SyntaxError, "SELECT * with no tables specified is not valid")
				}
				for i, col := range in.cols {
					if col.hidden || col.unstarred || col.outer || (table != "" && col.table != table) {
						continue
					}
					var x typed
					if c.agg != nil {
						// * under GROUP BY is allowed only for grouped columns.
						ref := &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: []*pg.Node{
							{Node: &pg.Node_String_{String_: &pg.String{Sval: col.table}}},
							{Node: &pg.Node_String_{String_: &pg.String{Sval: col.name}}}}}}}
						if col.table == "" {
							ref.GetColumnRef().Fields = ref.GetColumnRef().Fields[1:]
						}
						if x, err = c.lower(ref); err != nil {
							return nil, err
						}
					} else {
						if err := in.use(i); err != nil {
							return nil, err
						}
						x = typed{e: expr.Column(i), t: col.typ, w: col.w, mod: col.mod}
					}
					out = append(out, target{name: col.name, x: x})
				}
				continue
			}
		}
		name, x, err := c.namedValue(rt)
		if err != nil {
			return nil, err
		}
		out = append(out, target{name: name, x: x})
	}
	return out, nil
}

// namedValue lowers a select-list (or RETURNING) item and names it: its
// alias, or the name PostgreSQL derives from the expression.
func (c *exprCtx) namedValue(rt *pg.ResTarget) (string, typed, error) {
	x, err := c.lower(rt.Val)
	if err != nil {
		return "", typed{}, err
	}
	name := rt.Name
	if name == "" {
		name = deriveName(rt.Val)
	}
	return name, x, nil
}

// deriveName is Postgres' FigureColname: the name a select-list item
// gets without an alias.
func deriveName(n *pg.Node) string {
	switch v := n.Node.(type) {
	case *pg.Node_ColumnRef:
		if _, col, _, err := columnRefName(v.ColumnRef); err == nil && col != "" {
			return col
		}
	case *pg.Node_FuncCall:
		if name, err := funcName(v.FuncCall); err == nil {
			return name
		}
	case *pg.Node_TypeCast:
		if d := deriveName(v.TypeCast.Arg); d != "?column?" {
			return d
		}
		if names := v.TypeCast.TypeName.GetNames(); len(names) > 0 {
			return names[len(names)-1].GetString_().GetSval()
		}
	case *pg.Node_CaseExpr:
		return "case"
	case *pg.Node_CoalesceExpr:
		return "coalesce"
	case *pg.Node_MinMaxExpr:
		if v.MinMaxExpr.Op == pg.MinMaxOp_IS_LEAST {
			return "least"
		}
		return "greatest"
	case *pg.Node_AExpr:
		if v.AExpr.Kind == pg.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif"
		}
	case *pg.Node_SqlvalueFunction:
		return strings.ToLower(strings.TrimPrefix(v.SqlvalueFunction.Op.String(), "SVFOP_"))
	}
	return "?column?"
}

// orderBy resolves ORDER BY items: a position, an output column name,
// or an expression (added as an extra column when not in the output).
func (p *Planner) orderBy(sorts []*pg.Node, targets []target, c *exprCtx) ([]plan.ColumnOrder, []typed, error) {
	var order []plan.ColumnOrder
	var extras []typed
	for _, s := range sorts {
		sb := s.GetSortBy()
		if sb == nil {
			return nil, nil, sqlerr.New(sqlerr.SyntaxError, "malformed ORDER BY")
		}
		if sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return nil, nil, sqlerr.Unsupported("ORDER BY ... USING")
		}
		col := -1
		if k := sb.Node.GetAConst(); k != nil && k.GetIval() != nil {
			pos := int(k.GetIval().Ival)
			if pos < 1 || pos > len(targets) {
				return nil, nil, sqlerr.Errorf("42P10", "ORDER BY position %d is not in select list", pos)
			}
			col = pos - 1
		} else if cr := sb.Node.GetColumnRef(); cr != nil {
			if t, name, star, err := columnRefName(cr); err == nil && t == "" && !star {
				for i, tg := range targets {
					if tg.name == name {
						if col >= 0 {
							return nil, nil, sqlerr.Errorf(sqlerr.AmbiguousColumn, "ORDER BY %q is ambiguous", name)
						}
						col = i
					}
				}
			}
		}
		if col < 0 && c != nil {
			x, err := c.lower(sb.Node)
			if err != nil {
				return nil, nil, err
			}
			for i, tg := range targets {
				if tg.x.e.Equal(x.e) {
					col = i
					break
				}
			}
			if col < 0 {
				for i, ex := range extras {
					if ex.e.Equal(x.e) {
						col = len(targets) + i
					}
				}
			}
			if col < 0 {
				extras = append(extras, x)
				col = len(targets) + len(extras) - 1
			}
		}
		if col < 0 {
			return nil, nil, sqlerr.Errorf(sqlerr.UndefinedColumn, "ORDER BY term does not match any column in the result")
		}
		t := row.TypeNull
		if col < len(targets) {
			t = targets[col].x.t.Type
		} else if col-len(targets) < len(extras) {
			t = extras[col-len(targets)].t.Type
		}
		if err := refuseJSONKey(t, "an ordering"); err != nil {
			return nil, nil, err
		}
		desc, nullsLast := sortDirection(sb)
		order = append(order, plan.ColumnOrder{Column: col, Desc: desc, NullsLast: nullsLast})
	}
	return order, extras, nil
}

// finishing resolves LIMIT and OFFSET, and ORDER BY for queries whose
// core did not (set operations and VALUES order by output columns only).
func (p *Planner) finishing(sel *pg.SelectStmt, r *rel, outCols int, oi *orderInfo) (Finishing, error) {
	f := identityFinishing(outCols)
	if oi != nil {
		f.Order = oi.order
	} else if len(sel.SortClause) > 0 {
		targets := make([]target, outCols)
		for i := range targets {
			targets[i] = target{name: r.scope.cols[i].name, x: typed{e: expr.Column(i), t: r.scope.cols[i].typ}}
		}
		order, _, err := p.orderBy(sel.SortClause, targets, nil)
		if err != nil {
			return Finishing{}, err
		}
		f.Order = order
	}
	if sel.LimitCount != nil {
		v, null, err := p.constInt(sel.LimitCount, "LIMIT")
		if err != nil {
			return Finishing{}, err
		}
		if !null {
			f.Limit = &v
		}
	}
	if sel.LimitOffset != nil {
		v, _, err := p.constInt(sel.LimitOffset, "OFFSET")
		if err != nil {
			return Finishing{}, err
		}
		f.Offset = v
	}
	return f, nil
}

// constInt evaluates a LIMIT or OFFSET expression, which must not
// reference columns.
func (p *Planner) constInt(n *pg.Node, what string) (int64, bool, error) {
	c := &exprCtx{p: p, scope: &scope{}, clause: what}
	x, err := c.lowerAs(n, row.TypeInt64)
	if err != nil {
		return 0, false, err
	}
	if len(x.e.Columns()) > 0 {
		return 0, false, sqlerr.Errorf(sqlerr.SyntaxError, "argument of %s must not contain variables", what)
	}
	if x.t.Type != row.TypeInt64 && x.t.Type != row.TypeNull {
		return 0, false, sqlerr.Errorf(sqlerr.DatatypeMismatch, "argument of %s must be type bigint, not type %s", what, x.t.Type.PGName())
	}
	d, err := x.e.Eval(nil)
	if err != nil {
		return 0, false, err
	}
	if d.IsNull() {
		return 0, true, nil
	}
	if d.Int64() < 0 {
		code := "2201W"
		if what == "OFFSET" {
			code = "2201X"
		}
		return 0, false, sqlerr.Errorf(code, "%s must not be negative", what)
	}
	return d.Int64(), false, nil
}

// sortDirection is an ORDER BY item's direction and NULLs placement. As in
// PostgreSQL, NULLs sort as larger than any value by default: last
// ascending and first descending.
func sortDirection(sb *pg.SortBy) (desc, nullsLast bool) {
	desc = sb.SortbyDir == pg.SortByDir_SORTBY_DESC
	nullsLast = !desc
	switch sb.SortbyNulls {
	case pg.SortByNulls_SORTBY_NULLS_FIRST:
		nullsLast = false
	case pg.SortByNulls_SORTBY_NULLS_LAST:
		nullsLast = true
	}
	return desc, nullsLast
}
