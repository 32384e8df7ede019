package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Subqueries in expressions are planned by adding columns to the relation
// the expression is evaluated over (the rel of the WHERE clause or select
// list, or the output of an aggregation), so that the expression becomes
// an ordinary scalar expression over those columns:
//
//	EXISTS (S)       found: r's row has a partner in distinct(S's keys)
//	                 (uncorrelated: count(*) > 0, one cross join)
//	x IN (S)         found on (keys, x), plus per key n = count(*) and
//	                 nn = count(v): TRUE if found, else FALSE if n = 0,
//	                 else NULL if x is NULL or nn < n (S has a NULL),
//	                 else FALSE -- SQL's three-valued IN
//	(S) as a value   per key n = count(*) and m = max(v):
//	                 single_value(n, m), which is m when n <= 1 and error
//	                 21000 otherwise
//	x op ANY/ALL (S) per key count(*), count(v), min(v), max(v): see
//	                 quantified
//	correlated       the aggregates per key (count 0, others NULL for a
//	aggregate        key without rows), the select list computed per outer
//	                 row; x IN (S) is then x = (S)
//
// found is r ⋈ distinct(keys) mapped to TRUE plus r minus that mapped to
// FALSE. Per-key columns are r ⋈ Reduce(S by keys) plus r's unmatched
// rows padded with the empty-subquery defaults (n = 0); without
// correlation keys the Reduce has at most one row and the defaults are
// added as the global-aggregate default row, then cross-joined.
//
// Because the error of a scalar subquery with several rows is raised by
// the per-row expression, a maintained dataflow reports it through its
// error collection for as long as the subquery has several rows, and
// retracts it when the subquery shrinks back; an outer relation without
// rows raises no error, as in Postgres, where the subquery is never run.
// Correlation keys come from decorrelation (correlate.go); uncorrelated
// subqueries have none.

// whereConjuncts splits a WHERE clause into its AND-ed conjuncts.
func whereConjuncts(n *pg.Node) []*pg.Node {
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg.BoolExprType_AND_EXPR {
		var out []*pg.Node
		for _, a := range b.Args {
			out = append(out, whereConjuncts(a)...)
		}
		return out
	}
	return []*pg.Node{n}
}

// subPlan is a planned subquery of an expression: its rows, whose first
// nKeys columns are correlation keys (equal to outerKeys of the outer row
// it belongs to) followed by its value column, if it has one.
type subPlan struct {
	sub       *rel
	nKeys     int
	outerKeys []expr.Expr
	// agg, instead of sub, is a correlated subquery whose select list
	// aggregates: one value per outer row.
	agg *corrAggregate
	// nullSafe keys (general decorrelation, apply.go) match NULL outer
	// values: each is a key of its own there.
	nullSafe bool
	// order is the subquery's ORDER BY over sub's columns, which follow
	// the value column (ARRAY(subquery) only; nil: no ORDER BY).
	order []plan.ColumnOrder
}

// safeKeys is how many leading keys match NULLs.
func (sp *subPlan) safeKeys() int {
	if sp.nullSafe {
		return sp.nKeys
	}
	return 0
}

// valueType is the type of the subquery's value column.
func (sp *subPlan) valueType() row.ColumnType {
	if sp.agg != nil {
		return sp.agg.value.t
	}
	return sp.sub.scope.cols[sp.nKeys].typ
}

// perRowValue adds to r what the value of a correlated aggregate needs
// and returns the value as an expression over r.
func (sp *subPlan) perRowValue(r *rel) (typed, error) {
	nk := sp.nKeys
	i, err := attachPerKeyDistinct(r, sp.outerKeys, sp.agg.groups, sp.agg.types, sp.agg.defaults, sp.safeKeys())
	if err != nil {
		return typed{}, err
	}
	e := sp.agg.value.e.Substitute(func(c int) (expr.Expr, bool) {
		return expr.Column(i + c - nk), true
	})
	return typed{e: e, t: sp.agg.value.t}, nil
}

// subqueryColumn names the columns subqueries add to a relation: hidden,
// and not resolvable by any name a query can write.
func subqueryColumn(t row.ColumnType) column {
	return column{name: "?subquery?", typ: t, hidden: true}
}

// planSubLinkQuery plans the query of a subquery expression evaluated
// over rows of outer (nil: no outer columns are visible). With withValue
// the subquery must have one column, its value; otherwise (EXISTS) its
// columns are dropped.
func (p *Planner) planSubLinkQuery(sl *pg.SubLink, outerRel *rel, outer *scope, withValue bool, depth int) (*subPlan, error) {
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, sqlerr.Unsupported("this kind of subquery")
	}
	if outer != nil {
		p.outers = append(p.outers, outer)
		defer func() { p.outers = p.outers[:len(p.outers)-1] }()
	}
	// ARRAY(subquery ORDER BY ...) keeps its order columns (keepOrder);
	// the equality form of decorrelation drops ORDER BY, so it is left to
	// the general form.
	ordered := sl.SubLinkType == pg.SubLinkType_ARRAY_SUBLINK && len(sel.SortClause) > 0
	p.keepOrder = ordered
	sub, err := p.planSubquery(sel, depth+1)
	if err != nil {
		if outer == nil || !isUndefinedName(err) && !isCorrelationRefusal(err) {
			return nil, err
		}
		if isUndefinedName(err) && !ordered {
			// The equality form first: it joins on the keys directly.
			sp, derr := p.decorrelate(sel, outer, withValue, err, depth+1)
			if derr == nil || !isCorrelationRefusal(derr) {
				return sp, derr
			}
		}
		p.keepOrder = ordered
		return p.apply(sel, outerRel, outer, sl, withValue, err, depth+1)
	}
	order := p.keptOrder
	if !withValue {
		sub.project(nil, &scope{})
		return &subPlan{sub: sub}, nil
	}
	if err := oneColumn(sub.arity()-len(order), sl); err != nil {
		return nil, err
	}
	settleValueColumn(sub, 0)
	return &subPlan{sub: sub, order: order}, nil
}

func oneColumn(n int, sl *pg.SubLink) error {
	switch {
	case n == 1:
		return nil
	case sl.SubLinkType == pg.SubLinkType_EXPR_SUBLINK && n > 1:
		return sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column")
	case n > 1:
		return sqlerr.New(sqlerr.SyntaxError, "subquery has too many columns")
	}
	return sqlerr.New(sqlerr.SyntaxError, "subquery has too few columns")
}

// settleValueColumn gives a value column of unknown type (SELECT NULL)
// the type text, as Postgres resolves unknown outputs.
func settleValueColumn(sub *rel, i int) {
	if sub.scope.cols[i].typ.Type != row.TypeNull {
		return
	}
	es := make([]expr.Expr, sub.arity())
	s := &scope{cols: append([]column(nil), sub.scope.cols...)}
	for j := range es {
		es[j] = expr.Column(j)
	}
	es[i] = expr.Cast(es[i], row.TypeText)
	s.cols[i].typ = row.ColumnType{Type: row.TypeText, Nullable: true}
	sub.project(es, s)
}

// equalityKeys converts the sides of an equality that a join matches by
// encoded value to one type (their common number type when they differ).
func equalityKeys(a, b typed) (expr.Expr, expr.Expr, row.ColumnType, error) {
	t := row.ColumnType{Type: a.t.Type, Nullable: a.t.Nullable || b.t.Nullable}
	switch {
	case a.t.Type == b.t.Type:
	case a.t.Type == row.TypeNull:
		return expr.Cast(a.e, b.t.Type), b.e, row.ColumnType{Type: b.t.Type, Nullable: true}, nil
	case b.t.Type == row.TypeNull:
		return a.e, expr.Cast(b.e, a.t.Type), row.ColumnType{Type: a.t.Type, Nullable: true}, nil
	case a.t.Type.IsNumeric() && b.t.Type.IsNumeric():
		common, _ := numericCommon(a.t.Type, b.t.Type)
		ae, be := a.e, b.e
		if a.t.Type != common {
			ae = expr.Cast(ae, common)
		}
		if b.t.Type != common {
			be = expr.Cast(be, common)
		}
		return ae, be, row.ColumnType{Type: common, Nullable: t.Nullable}, nil
	default:
		return expr.Expr{}, expr.Expr{}, row.ColumnType{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s = %s",
			a.t.Type.PGName(), b.t.Type.PGName())
	}
	return a.e, b.e, t, nil
}

// columns returns Column(0) .. Column(n-1).
func columns(n int) []expr.Expr {
	out := make([]expr.Expr, n)
	for i := range out {
		out[i] = expr.Column(i)
	}
	return out
}

// semiJoinPlan returns the rows of rp (arity n) whose keys lk equal the
// first len(lk) columns of some row of keys (of arity nk = len(lk)),
// each row with its own multiplicity. NULL keys never match.
// The first safe keys match NULLs too.
func semiJoinPlan(rp plan.Plan, n int, lk []expr.Expr, keys plan.Plan, safe int) plan.Plan {
	kc := columns(len(lk))
	k := plan.NewDistinct(filterNullKeysAfter(keys, len(lk), kc, safe))
	left := filterNullKeysAfter(rp, n, lk, safe)
	return plan.NewMfp(plan.NewJoin(left, k, lk, kc), expr.Identity(n))
}

// filterNullKeysAfter is filterNullKeys for the keys after the first
// safe ones, which match NULLs.
func filterNullKeysAfter(p plan.Plan, arity int, keys []expr.Expr, safe int) plan.Plan {
	m := expr.Identity(arity)
	for _, k := range keys[safe:] {
		m.Predicates = append(m.Predicates, expr.Not(expr.IsNull(k)))
	}
	if len(m.Predicates) == 0 {
		return p
	}
	return plan.NewMfp(p, m)
}

// appendLiterals is the MFP appending the given values to rows of arity
// n.
func appendLiterals(n int, vals []expr.Expr) expr.MFP {
	m := expr.MFP{Expressions: vals, Projection: make([]int, n+len(vals))}
	for i := range m.Projection {
		m.Projection[i] = i
	}
	return m
}

// markFound adds to r a boolean column saying whether the row's keys lk
// match a row of keys, and returns it.
func markFound(r *rel, lk []expr.Expr, keys plan.Plan, safe int) expr.Expr {
	rp, n := r.plan(), r.arity()
	hit := semiJoinPlan(rp, n, lk, keys, safe)
	yes := plan.NewMfp(hit, appendLiterals(n, []expr.Expr{expr.Literal(row.True)}))
	no := plan.NewMfp(plan.NewUnion(rp, plan.NewNegate(hit)), appendLiterals(n, []expr.Expr{expr.Literal(row.False)}))
	r.extend(plan.NewUnion(yes, no), []column{subqueryColumn(row.ColumnType{Type: row.TypeBool})})
	return expr.Column(n)
}

// attachPerKey adds to r the columns of g, a relation with one row per
// distinct key (its first len(lk) columns) followed by values, for the
// row of g whose key equals lk; rows of r without one get defaults. It
// returns the index of the first added column.
func attachPerKey(r *rel, lk []expr.Expr, g plan.Plan, types []row.ColumnType, defaults []expr.Expr, safe int) int {
	rp, n, nk, nv := r.plan(), r.arity(), len(lk), len(defaults)
	cols := make([]column, nv)
	for i, t := range types {
		cols[i] = subqueryColumn(t)
	}
	if nk == 0 {
		// g has at most one row: complete it with the default row when
		// it has none, then pair it with every row of r.
		desc := row.RelationDesc{Names: make([]string, nv), Types: types}
		vals := make([]row.Datum, nv)
		for i, d := range defaults {
			vals[i] = d.Value // defaults are literals; a typed NULL's Value is NULL
		}
		proj := make([]int, nv)
		for i := range proj {
			proj[i] = nv + i
		}
		cancel := plan.NewNegate(plan.NewMfp(g, expr.MFP{Expressions: defaults, Projection: proj}))
		one := plan.NewUnion(g, plan.NewConstant(desc, plan.ConstantRow{Datums: vals, Diff: 1}), cancel)
		r.extend(plan.NewJoin(rp, one, nil, nil), cols)
		return n
	}
	left := filterNullKeysAfter(rp, n, lk, safe)
	j := plan.NewJoin(left, g, lk, columns(nk))
	proj := make([]int, 0, n+nv)
	for i := 0; i < n; i++ {
		proj = append(proj, i)
	}
	for i := 0; i < nv; i++ {
		proj = append(proj, n+nk+i)
	}
	matched := plan.NewMfp(j, expr.MFP{Projection: proj})
	// g's keys are distinct, so j has each matched row of r once.
	hit := plan.NewMfp(j, expr.Identity(n))
	missed := plan.NewMfp(plan.NewUnion(rp, plan.NewNegate(hit)), appendLiterals(n, defaults))
	r.extend(plan.NewUnion(matched, missed), cols)
	return n
}

// subLink lowers a subquery expression over the context's relation.
func (c *exprCtx) subLink(sl *pg.SubLink) (typed, error) {
	r, outer := c.rel, c.scope
	if c.agg != nil {
		if c.agg.post == nil {
			// The first pass over a grouped query only finds the
			// aggregates; subqueries attach to the aggregation's output,
			// built after it, in the second pass.
			c.agg.sawSubLink = true
			return c.subLinkType(sl)
		}
		r, outer = c.agg.post, c.agg.postScope
	}
	if r == nil {
		return typed{}, sqlerr.Unsupported("subqueries in " + c.clauseName())
	}
	if x, ok := r.subs[sl]; ok {
		return x, nil
	}
	shared := c.p.share(r)
	r.readByApply = false
	x, err := c.attachSubLink(r, outer, sl)
	if err != nil {
		shared.restore()
		return typed{}, err
	}
	shared.bind(r.readByApply)
	r.readByApply = false
	if planSize(r.base, maxPlanNodes) >= maxPlanNodes {
		return typed{}, sqlerr.Errorf(statementTooComplex, "too many subqueries in one query level (the plan exceeds %d nodes)", maxPlanNodes)
	}
	if r.subs == nil {
		r.subs = map[*pg.SubLink]typed{}
	}
	r.subs[sl] = x
	return x, nil
}

// A subquery that depends on each outer row reads the relation it is
// evaluated over several times (its matched rows, and all rows minus
// those). The subqueries of one query level read that relation as it was
// before their columns (distinctkeys.go, conjuncts.go), so each adds a
// bounded number of nodes, and general decorrelation reads it through a
// Let (sharedrel.go), so that nesting adds rather than multiplies; what
// still multiplies (a CTE read twice) and very many subqueries are
// bounded by maxPlanNodes.
const (
	maxPlanNodes        = 1 << 14
	statementTooComplex = "54001"
)

// planSize counts the nodes of p as the plan serialises (a subtree
// referenced twice counts twice; a Let's value once, and each Get of it
// as one node), stopping at limit.
func planSize(p plan.Plan, limit int) int {
	n := 1
	for _, in := range p.Inputs() {
		if n >= limit {
			break
		}
		n += planSize(*in, limit-n)
	}
	return n
}

// subLinkKind classifies a subquery expression: EXISTS, IN (= ANY),
// NOT IN (<> ALL), a pattern match with ANY/ALL or a scalar value.
func subLinkKind(sl *pg.SubLink) (kind string, err error) {
	op := opName(sl.OperName)
	if patternOp(op) >= 0 && (sl.SubLinkType == pg.SubLinkType_ANY_SUBLINK || sl.SubLinkType == pg.SubLinkType_ALL_SUBLINK) {
		return "pattern", nil
	}
	switch sl.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK:
		return "exists", nil
	case pg.SubLinkType_EXPR_SUBLINK:
		return "value", nil
	case pg.SubLinkType_ANY_SUBLINK:
		switch op {
		case "", "=":
			return "in", nil
		case "<", "<=", ">", ">=", "<>", "!=":
			return "any", nil
		}
		return "", sqlerr.Unsupported(op + " ANY (subquery)")
	case pg.SubLinkType_ALL_SUBLINK:
		switch op {
		case "<>", "!=":
			return "not in", nil
		case "<", "<=", ">", ">=", "=":
			return "all", nil
		}
		return "", sqlerr.Unsupported(op + " ALL (subquery)")
	case pg.SubLinkType_ARRAY_SUBLINK:
		return "array", nil
	}
	return "", sqlerr.Unsupported("this kind of subquery expression")
}

// subLinkType lowers a subquery expression to a placeholder of its type,
// lowering its test expression for the aggregates in it.
func (c *exprCtx) subLinkType(sl *pg.SubLink) (typed, error) {
	kind, err := subLinkKind(sl)
	if err != nil {
		return typed{}, err
	}
	if kind != "value" && kind != "exists" && kind != "array" {
		if sl.Testexpr.GetRowExpr() != nil {
			return typed{}, sqlerr.Unsupported("row constructors with IN (subquery)")
		}
		if _, err := c.lowerTyped(sl.Testexpr); err != nil {
			return typed{}, err
		}
	}
	if kind != "value" && kind != "array" {
		return typed{e: expr.TypedNull(row.TypeBool), t: row.ColumnType{Type: row.TypeBool, Nullable: true}}, nil
	}
	in, inScope := c.agg.typingInput()
	sp, err := c.p.planSubLinkQuery(sl, in, inScope, true, c.depth)
	if err != nil {
		return typed{}, err
	}
	t := sp.valueType()
	if kind == "array" {
		at, err := subqueryArrayType(t.Type)
		if err != nil {
			return typed{}, err
		}
		return typed{e: expr.TypedNull(at), t: row.ColumnType{Type: at}}, nil
	}
	return typed{e: expr.TypedNull(t.Type), t: row.ColumnType{Type: t.Type, Nullable: true}}, nil
}

// attachSubLink plans sl and adds the columns it needs to r, returning
// the expression over r it lowers to. outer is r's scope as correlated
// subqueries may see it.
func (c *exprCtx) attachSubLink(r *rel, outer *scope, sl *pg.SubLink) (typed, error) {
	kind, err := subLinkKind(sl)
	if err != nil {
		return typed{}, err
	}
	p := c.p
	switch kind {
	case "exists":
		sp, err := p.planSubLinkQuery(sl, r, outer, false, c.depth)
		if err != nil {
			return typed{}, err
		}
		if sp.nKeys == 0 {
			// Uncorrelated: one count cross-joined reads r only once.
			g := plan.NewReduce(sp.sub.plan(), nil, plan.Aggregate{Func: plan.AggCountStar})
			i := attachPerKey(r, nil, g, []row.ColumnType{{Type: row.TypeInt64}}, []expr.Expr{expr.Literal(row.Int64(0))}, 0)
			return typed{e: expr.Call(expr.FuncGt, expr.Column(i), expr.Literal(row.Int64(0))), t: row.ColumnType{Type: row.TypeBool}}, nil
		}
		found, err := markFoundDistinct(r, sp.outerKeys, sp.sub.plan(), sp.safeKeys())
		if err != nil {
			return typed{}, err
		}
		return typed{e: found, t: row.ColumnType{Type: row.TypeBool}}, nil
	case "array":
		return c.arraySubLink(r, outer, sl)
	case "pattern":
		return c.patternSubLink(r, outer, sl)
	case "value":
		sp, err := p.planSubLinkQuery(sl, r, outer, true, c.depth)
		if err != nil {
			return typed{}, err
		}
		if sp.agg != nil {
			// One row per outer row: no cardinality check needed.
			return sp.perRowValue(r)
		}
		nk := sp.nKeys
		vt := sp.sub.scope.cols[nk].typ
		g := plan.NewReduce(sp.sub.plan(), columns(nk),
			plan.Aggregate{Func: plan.AggCountStar}, plan.Aggregate{Func: plan.AggMax, Expr: expr.Column(nk)})
		nullable := row.ColumnType{Type: vt.Type, Nullable: true}
		i, err := attachPerKeyDistinct(r, sp.outerKeys, g, []row.ColumnType{{Type: row.TypeInt64}, nullable},
			[]expr.Expr{expr.Literal(row.Int64(0)), expr.TypedNull(vt.Type)}, sp.safeKeys())
		if err != nil {
			return typed{}, err
		}
		return typed{e: expr.Call(expr.FuncSingleValue, expr.Column(i), expr.Column(i+1)), t: nullable}, nil
	}
	// IN and NOT IN.
	if sl.Testexpr.GetRowExpr() != nil {
		return typed{}, sqlerr.Unsupported("row constructors with IN (subquery)")
	}
	x, err := c.lowerTyped(sl.Testexpr)
	if err != nil {
		return typed{}, err
	}
	sp, err := p.planSubLinkQuery(sl, r, outer, true, c.depth)
	if err != nil {
		return typed{}, err
	}
	nk := sp.nKeys
	vt := sp.valueType()
	if x, err = c.settle(x, vt.Type); err != nil {
		return typed{}, err
	}
	if sp.agg != nil {
		// Over exactly one row v, x IN (v) is x = v, NULLs included, and
		// x op ANY/ALL (v) is x op v.
		v, err := sp.perRowValue(r)
		if err != nil {
			return typed{}, err
		}
		a, b, _, err := equalityKeys(x, v)
		if err != nil {
			return typed{}, err
		}
		var in expr.Expr
		switch kind {
		case "in", "not in":
			in = expr.Eq(a, b)
			if kind == "not in" {
				in = expr.Not(in)
			}
		default:
			f, _ := binaryFunc(opName(sl.OperName))
			in = expr.Call(f, a, b)
		}
		return typed{e: in, t: row.ColumnType{Type: row.TypeBool, Nullable: true}}, nil
	}
	if kind == "any" || kind == "all" {
		return quantified(r, sp, kind, opName(sl.OperName), x)
	}
	lk, vk, _, err := equalityKeys(x, typed{e: expr.Column(nk), t: vt})
	if err != nil {
		return typed{}, err
	}
	keyed := plan.NewMfp(sp.sub.plan(), keyProjection(append(columns(nk), vk), nk+1))
	// Both attachments go to the distinct (outer keys, x) tuples, joined
	// back to r once (distinctkeys.go).
	keys := append(append([]expr.Expr(nil), sp.outerKeys...), lk)
	d, err := distinctKeys(r, keys)
	if err != nil {
		return typed{}, err
	}
	target, tk := d, columns(nk+1)
	if d == nil {
		target, tk = r, keys
	}
	found := markFound(target, tk, keyed, sp.safeKeys())
	g := plan.NewReduce(sp.sub.plan(), columns(nk),
		plan.Aggregate{Func: plan.AggCountStar}, plan.Aggregate{Func: plan.AggCount, Expr: expr.Column(nk)})
	i := attachPerKey(target, tk[:nk], g, []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}},
		[]expr.Expr{expr.Literal(row.Int64(0)), expr.Literal(row.Int64(0))}, sp.safeKeys())
	n, nn := expr.Column(i), expr.Column(i+1)
	if d != nil {
		back := joinBack(r, d, keys)
		found, n, nn = back(found), back(n), back(nn)
	}
	in := expr.Case([][2]expr.Expr{
		{found, expr.Literal(row.True)},
		{expr.Eq(n, expr.Literal(row.Int64(0))), expr.Literal(row.False)},
		{expr.Or(expr.IsNull(x.e), expr.Call(expr.FuncLt, nn, n)), expr.TypedNull(row.TypeBool)},
	}, expr.Literal(row.False))
	if kind == "not in" {
		in = expr.Not(in)
	}
	return typed{e: in, t: row.ColumnType{Type: row.TypeBool, Nullable: true}}, nil
}

// quantified lowers x op ANY (S) and x op ALL (S) for op other than the
// IN forms, from per-key aggregates of S's value v: n = count(*), nn =
// count(v), lo = min(v), hi = max(v). x op ANY is TRUE when x op v holds
// for some v, which for an ordering is x op lo (> and >=) or x op hi (<
// and <=), and for <> is x <> lo or x <> hi; it is FALSE over no rows,
// NULL when x is NULL or S has a NULL and no v decided it, else FALSE.
// x op ALL is dually FALSE when x op v fails for some v (x op hi for >
// and >=, x op lo for < and <=, x = lo and x = hi for =), TRUE over no
// rows, and otherwise NULL or TRUE. The conditions are NULL while S has no
// non-NULL value (lo and hi NULL), and CASE passes over NULL conditions.
func quantified(r *rel, sp *subPlan, kind, op string, x typed) (typed, error) {
	nk := sp.nKeys
	vt := sp.valueType()
	a, v, _, err := equalityKeys(x, typed{e: expr.Column(nk), t: vt})
	if err != nil {
		return typed{}, err
	}
	g := plan.NewReduce(sp.sub.plan(), columns(nk),
		plan.Aggregate{Func: plan.AggCountStar}, plan.Aggregate{Func: plan.AggCount, Expr: v},
		plan.Aggregate{Func: plan.AggMin, Expr: v}, plan.Aggregate{Func: plan.AggMax, Expr: v})
	vtype, err := v.Type(sp.sub.scope.types())
	if err != nil {
		return typed{}, err
	}
	ext := row.ColumnType{Type: vtype.Type, Nullable: true}
	i, err := attachPerKeyDistinct(r, sp.outerKeys, g, []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, ext, ext},
		[]expr.Expr{expr.Literal(row.Int64(0)), expr.Literal(row.Int64(0)), expr.TypedNull(vtype.Type), expr.TypedNull(vtype.Type)}, sp.safeKeys())
	if err != nil {
		return typed{}, err
	}
	n, nn, lo, hi := expr.Column(i), expr.Column(i+1), expr.Column(i+2), expr.Column(i+3)
	f, _ := binaryFunc(op)
	cmp := func(b expr.Expr) expr.Expr { return expr.Call(f, a, b) }
	var decides expr.Expr // some v decides the result
	switch {
	case kind == "any" && (op == ">" || op == ">="):
		decides = cmp(lo)
	case kind == "any" && (op == "<" || op == "<="):
		decides = cmp(hi)
	case kind == "any": // <>
		decides = expr.Or(cmp(lo), cmp(hi))
	case op == ">" || op == ">=":
		decides = expr.Not(cmp(hi))
	case op == "<" || op == "<=":
		decides = expr.Not(cmp(lo))
	default: // = ALL
		decides = expr.Or(expr.Not(cmp(lo)), expr.Not(cmp(hi)))
	}
	decided, empty := expr.Literal(row.True), expr.Literal(row.False)
	if kind == "all" {
		decided, empty = empty, decided
	}
	e := expr.Case([][2]expr.Expr{
		{expr.Eq(n, expr.Literal(row.Int64(0))), empty},
		{expr.IsNull(x.e), expr.TypedNull(row.TypeBool)},
		{decides, decided},
		{expr.Call(expr.FuncLt, nn, n), expr.TypedNull(row.TypeBool)},
	}, empty)
	return typed{e: e, t: row.ColumnType{Type: row.TypeBool, Nullable: true}}, nil
}

// semiJoin applies a WHERE conjunct that is a subquery test a semi-join
// answers exactly, returning false when n is not one:
//
//	x IN (S)          r ⋈ distinct(keys, v) on (outer keys, x)
//	EXISTS (S)        r ⋈ distinct(keys) on outer keys
//	NOT EXISTS (S)    r - (the above)
//
// As a top-level conjunct of WHERE, a NULL from IN drops the row just as
// false does, so the semi-join needs none of the NULL bookkeeping of the
// general form. NOT IN does need it, and takes the general path.
func (p *Planner) semiJoin(r *rel, n *pg.Node, depth int) (*rel, bool, error) {
	shared := p.share(r)
	r.readByApply = false
	out, done, err := p.semiJoinShared(r, n, depth)
	keep := r.readByApply
	r.readByApply = false
	if err != nil {
		shared.restore()
		return nil, false, err
	}
	if done {
		out.base = shared.closed(out.base, keep)
	}
	shared.bind(keep)
	return out, done, nil
}

// semiJoinShared is semiJoin over r shared (sharedrel.go).
func (p *Planner) semiJoinShared(r *rel, n *pg.Node, depth int) (*rel, bool, error) {
	negate := false
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg.BoolExprType_NOT_EXPR && len(b.Args) == 1 && b.Args[0].GetSubLink() != nil {
		negate, n = true, b.Args[0]
	}
	sl := n.GetSubLink()
	if sl == nil {
		return r, false, nil
	}
	kind, err := subLinkKind(sl)
	if err != nil {
		return nil, false, err
	}
	if kind == "in" && !negate {
		if n, err := p.rowSemiJoin(sl); err != nil || n != nil {
			if err != nil {
				return nil, false, err
			}
			return p.semiJoinShared(r, n, depth)
		}
	}
	arity := r.arity()
	switch {
	case kind == "exists":
		sp, err := p.planSubLinkQuery(sl, r, r.scope, false, depth)
		if err != nil {
			return nil, false, err
		}
		rp := r.plan()
		out := semiJoinPlan(rp, arity, sp.outerKeys, sp.sub.plan(), sp.safeKeys())
		if negate {
			out = plan.NewUnion(rp, plan.NewNegate(out))
		}
		return newRel(out, r.scope), true, nil
	case kind == "in" && !negate && sl.Testexpr.GetRowExpr() == nil:
		c := &exprCtx{p: p, scope: r.scope, rel: r, clause: "WHERE", depth: depth}
		x, err := c.lowerTyped(sl.Testexpr)
		if err != nil {
			return nil, false, err
		}
		sp, err := p.planSubLinkQuery(sl, r, r.scope, true, depth)
		if err != nil {
			return nil, false, err
		}
		if sp.agg != nil {
			// A correlated aggregate is one value per row: the general
			// path compares with it.
			return r, false, nil
		}
		nk := sp.nKeys
		vt := sp.sub.scope.cols[nk].typ
		if x, err = c.settle(x, vt.Type); err != nil {
			return nil, false, err
		}
		lk, vk, _, err := equalityKeys(x, typed{e: expr.Column(nk), t: vt})
		if err != nil {
			return nil, false, err
		}
		keyed := plan.NewMfp(sp.sub.plan(), keyProjection(append(columns(nk), vk), nk+1))
		// The test expression may have added columns to r; the semi-join
		// keeps r's current columns.
		out := semiJoinPlan(r.plan(), r.arity(), append(append([]expr.Expr(nil), sp.outerKeys...), lk), keyed, sp.safeKeys())
		return newRel(out, r.scope), true, nil
	}
	return r, false, nil
}
