package planner

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// fromClause plans the FROM list; several items are cross-joined.
func (p *Planner) fromClause(items []*pg.Node, depth int) (*rel, error) {
	if len(items) == 0 {
		return constRel(), nil
	}
	var out *rel
	for _, it := range items {
		if rs := it.GetRangeSubselect(); rs != nil && rs.Lateral && out != nil {
			lat, _, err := p.lateral(out, rs, depth)
			if err != nil {
				return nil, err
			}
			out = lat
			continue
		}
		if rf := it.GetRangeFunction(); rf != nil && out != nil {
			// A function in FROM sees the items to its left (tablefunc.go).
			lat, _, err := p.rangeFunction(out, rf, depth)
			if err != nil {
				return nil, err
			}
			out = lat
			continue
		}
		r, err := p.fromItem(it, depth)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = r
			continue
		}
		out = newRel(plan.NewJoin(out.plan(), r.plan(), nil, nil), out.scope.concat(r.scope))
	}
	return out, nil
}

func (p *Planner) fromItem(n *pg.Node, depth int) (*rel, error) {
	switch v := n.Node.(type) {
	case *pg.Node_RangeVar:
		return p.rangeVar(v.RangeVar, depth)
	case *pg.Node_RangeSubselect:
		// A LATERAL subquery with FROM items to its left is planned by
		// lateral (lateral.go); first in FROM it is a plain subquery.
		sel := v.RangeSubselect.Subquery.GetSelectStmt()
		if sel == nil {
			return nil, sqlerr.Unsupported("this kind of subquery in FROM")
		}
		r, err := p.planSubquery(sel, depth+1)
		if err != nil {
			return nil, err
		}
		return aliased(r, v.RangeSubselect.Alias, "")
	case *pg.Node_JoinExpr:
		return p.join(v.JoinExpr, depth)
	case *pg.Node_RangeFunction:
		r, _, err := p.rangeFunction(constRel(), v.RangeFunction, depth)
		return r, err
	}
	return nil, sqlerr.Unsupported("FROM item " + nodeName(n))
}

// aliased renames r's columns to the table alias (and column aliases).
func aliased(r *rel, a *pg.Alias, defaultName string) (*rel, error) {
	name := defaultName
	var colnames []string
	if a != nil {
		name = a.Aliasname
		for _, c := range a.Colnames {
			colnames = append(colnames, c.GetString_().GetSval())
		}
	}
	if isRowAlias(name) {
		// A row compared with this subquery (rowsublink.go): its columns
		// must match the row's, * included.
		if err := rowArity(visibleArity(r), len(colnames)); err != nil {
			return nil, err
		}
	}
	if len(colnames) > r.arity() {
		return nil, sqlerr.Errorf("42P10", "table %q has %d columns available but %d columns specified", name, r.arity(), len(colnames))
	}
	s := &scope{cols: make([]column, len(r.scope.cols))}
	for i, c := range r.scope.cols {
		c.table = name
		if i < len(colnames) {
			c.name = colnames[i]
		}
		c.hidden = c.hidden && c.name == "?order?"
		s.cols[i] = c
	}
	r.scope = s
	return r, nil
}

func (p *Planner) rangeVar(rv *pg.RangeVar, depth int) (*rel, error) {
	if r, ok, err := p.lookupCTE(rv); ok {
		if err != nil {
			return nil, err
		}
		return aliased(r, rv.Alias, rv.Relname)
	}
	item, err := p.Catalog.Resolve(rv.Schemaname, rv.Relname)
	if err != nil {
		return nil, err
	}
	p.seen(item)
	var r *rel
	switch {
	case item.View != nil && p.ReadIndexedViews && p.indexed(item):
		// An indexed view is read from its index, like a table: the
		// index already holds its rows, so a read of it can take the
		// fast path and a dataflow imports the index rather than
		// recomputing the view.
		r = newRel(plan.NewGet(item.ID), guarded(p.indexedViewScope(item, depth), item.ColumnGuard))
	case item.View != nil:
		// The view's names are resolved in the catalog, not among the
		// CTEs of the query that reads it.
		ctes, cat := p.ctes, p.Catalog
		p.ctes = nil
		if item.ViewCatalog != nil {
			p.Catalog = item.ViewCatalog
		}
		p.viewPlanned(item)
		r, err = p.planSubquery(item.View, depth+1)
		p.ctes, p.Catalog = ctes, cat
		if err != nil {
			return nil, fmt.Errorf("view %s: %w", item.Name, err)
		}
		if r.arity() != item.Desc.Arity() {
			return nil, sqlerr.Errorf(sqlerr.InternalError, "view %s no longer has %d columns", item.Name, item.Desc.Arity())
		}
		for i := range r.scope.cols {
			r.scope.cols[i].name = item.Desc.Name(i)
		}
		guarded(r.scope, item.ColumnGuard)
	case item.Plan != nil:
		// A computed relation is a constant as of this statement: right
		// for a one-shot read (the planner of reads is the one with
		// ReadIndexedViews), wrong inside anything maintained.
		if !p.ReadIndexedViews {
			return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "%s in views, SUBSCRIBE or writes not supported (it is only emulated for reads)", item.Name)
		}
		s := withTypeMods(descScope(item.Desc, item.IntWidths), item.TypeMods)
		for i := range s.cols {
			s.cols[i].emulated = true
		}
		r = newRel(*item.Plan, s)
	default:
		r = newRel(plan.NewGet(item.ID), guarded(withTypeMods(descScope(item.Desc, item.IntWidths), item.TypeMods), item.ColumnGuard))
	}
	return aliased(r, rv.Alias, rv.Relname)
}

// indexedViewScope is the scope of a view read from its index: the view's
// columns with the integer widths and type modifiers its query gives them
// (an int4 column stays int4, char(n) stays char(n) and is padded,
// numeric(p,s) keeps its scale), as when the view is read without an
// index. The catalog gives them in item.IntWidths and item.TypeMods,
// derived once per definition, so that a read of the index (a point read
// on the fast path) does not plan the view's query. A catalog that does
// not give them has the query planned apart, by a planner of its own (the
// relations it reads are not the read's); should that fail, the columns
// are described by their row types alone.
func (p *Planner) indexedViewScope(item Relation, depth int) *scope {
	if len(item.IntWidths) == item.Desc.Arity() && len(item.TypeMods) == item.Desc.Arity() {
		return withTypeMods(descScope(item.Desc, item.IntWidths), item.TypeMods)
	}
	s := descScope(item.Desc, nil)
	sub := &Planner{Catalog: p.Catalog, Session: p.Session, Cluster: p.Cluster, Maintained: true, RecursionLimit: p.RecursionLimit, OnViewPlan: p.OnViewPlan}
	if item.ViewCatalog != nil {
		sub.Catalog = item.ViewCatalog
	}
	p.viewPlanned(item)
	r, err := sub.planSubquery(item.View, depth+1)
	if err != nil || r.arity() != len(s.cols) {
		return s
	}
	for i := range s.cols {
		if r.scope.cols[i].typ.Type == s.cols[i].typ.Type {
			s.cols[i].w, s.cols[i].mod = r.scope.cols[i].w, r.scope.cols[i].mod
		}
	}
	return s
}

// viewPlanned reports to OnViewPlan that view's definition is planned.
func (p *Planner) viewPlanned(view Relation) {
	if p.OnViewPlan != nil {
		p.OnViewPlan(view.Name)
	}
}

// indexed reports whether r has an index reads on the planner's cluster may
// use.
func (p *Planner) indexed(r Relation) bool {
	for _, ix := range r.Indexes {
		if p.Cluster == "" || ix.Cluster == p.Cluster {
			return true
		}
	}
	return false
}

func descScope(d row.RelationDesc, widths []IntWidth) *scope {
	s := &scope{cols: make([]column, d.Arity())}
	for i := range s.cols {
		s.cols[i] = column{name: d.Name(i), typ: d.Types[i]}
		if len(widths) == d.Arity() && (d.Types[i].Type == row.TypeInt64 || d.Types[i].Type == row.TypeInt64Array) {
			s.cols[i].w = widths[i]
		}
	}
	return s
}

// withTypeMods gives the columns of s the type modifiers mods (nil: none).
func withTypeMods(s *scope, mods []TypeMod) *scope {
	if len(mods) == len(s.cols) {
		for i := range s.cols {
			s.cols[i].mod = mods[i]
		}
	}
	return s
}

// seen records the relations a query reads, for fast-path detection.
func (p *Planner) seen(r Relation) {
	if p.relations == nil {
		p.relations = map[plan.GlobalID]Relation{}
	}
	p.relations[r.ID] = r
}

// join plans a JoinExpr. Inner joins are a Join node on the equality
// conjuncts of ON (or USING), followed by a filter on the rest. Outer
// joins add the unmatched rows of the preserved side(s), padded with
// NULLs; a side's unmatched rows are its rows minus those that matched
// (Union with Negate), where "matched" is found by joining the side with
// the distinct join keys of the other side (or, when ON has conditions
// other than key equalities, with the distinct matched rows themselves).
func (p *Planner) join(j *pg.JoinExpr, depth int) (*rel, error) {
	frame := p.onFrame
	p.onFrame = nil
	l, err := p.fromItem(j.Larg, depth)
	if err != nil {
		return nil, err
	}
	// lat, for a LATERAL subquery on the right, is l joined with it
	// already (lateral.go); r is then its columns only.
	var lat, r *rel
	if rs := j.Rarg.GetRangeSubselect(); rs != nil && rs.Lateral {
		if j.Jointype != pg.JoinType_JOIN_INNER && j.Jointype != pg.JoinType_JOIN_LEFT {
			return nil, sqlerr.New("42P10", "the combining JOIN type must be INNER or LEFT for a LATERAL reference")
		}
		lat, r, err = p.lateral(l, rs, depth)
	} else if rf := j.Rarg.GetRangeFunction(); rf != nil && (j.Jointype == pg.JoinType_JOIN_INNER || j.Jointype == pg.JoinType_JOIN_LEFT) {
		lat, r, err = p.rangeFunction(l, rf, depth)
	} else {
		r, err = p.fromItem(j.Rarg, depth)
	}
	if err != nil {
		return nil, err
	}
	// fk: the frame's keys lead both sides (a RIGHT or FULL join naming
	// outer columns, framedJoinSides).
	var fk int
	if frame != nil {
		if l, r, fk, err = framedJoinSides(frame, j, l, r); err != nil {
			return nil, err
		}
	}
	switch j.Jointype {
	case pg.JoinType_JOIN_INNER, pg.JoinType_JOIN_LEFT, pg.JoinType_JOIN_RIGHT, pg.JoinType_JOIN_FULL:
	default:
		return nil, sqlerr.Unsupported("join type " + j.Jointype.String())
	}
	la, ra := l.arity(), r.arity()
	both := l.scope.concat(r.scope)
	c := &exprCtx{p: p, scope: both, clause: "JOIN conditions"}

	var using []string
	if j.IsNatural {
		for _, lc := range l.scope.cols {
			for _, rc := range r.scope.cols {
				if lc.name == rc.name && !lc.hidden && !rc.hidden {
					using = append(using, lc.name)
				}
			}
		}
	}
	for _, u := range j.UsingClause {
		using = append(using, u.GetString_().GetSval())
	}
	var conjuncts []typed
	var usingPairs [][2]int
	for _, name := range using {
		li, err := l.scope.resolve("", name)
		if err != nil {
			return nil, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q specified in USING clause does not exist in left table", name)
		}
		ri, err := r.scope.resolve("", name)
		if err != nil {
			return nil, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q specified in USING clause does not exist in right table", name)
		}
		if err := l.scope.use(li); err != nil {
			return nil, err
		}
		if err := r.scope.use(ri); err != nil {
			return nil, err
		}
		x, err := c.check(expr.Eq(expr.Column(li), expr.Column(la+ri)))
		if err != nil {
			return nil, err
		}
		conjuncts = append(conjuncts, x)
		usingPairs = append(usingPairs, [2]int{li, ri})
	}
	// Conjuncts of ON with subqueries apply to the matched pairs after
	// the others (subqueryConds), as a residual.
	var subConds []*pg.Node
	if j.Quals != nil {
		for _, q := range whereConjuncts(j.Quals) {
			if hasSubLink(q) {
				subConds = append(subConds, q)
				continue
			}
			x, err := c.lowerAs(q, row.TypeBool)
			if err != nil {
				return nil, err
			}
			if err := wantBool(x, "JOIN/ON"); err != nil {
				return nil, err
			}
			for _, e := range splitAnd(x.e) {
				conjuncts = append(conjuncts, typed{e: e})
			}
		}
	}
	// Split the condition into key equalities (one side's columns each)
	// and a residual.
	var lk, rk []expr.Expr
	var residual []expr.Expr
	for _, cj := range conjuncts {
		if a, b, ok := equiKey(cj.e, la, la+ra); ok && lat == nil {
			at, err := a.Type(both.types())
			if err != nil {
				return nil, err
			}
			bt, err := b.Type(both.types())
			if err != nil {
				return nil, err
			}
			if at.Type == bt.Type && !encodedEquality(at.Type) {
				residual = append(residual, cj.e)
				continue
			}
			if at.Type != bt.Type {
				// Keys match by encoded bytes; bring both to their
				// common number type.
				common, ok := numericCommon(at.Type, bt.Type)
				if !ok {
					residual = append(residual, cj.e)
					continue
				}
				if at.Type != common {
					a = expr.Cast(a, common)
				}
				if bt.Type != common {
					b = expr.Cast(b, common)
				}
			}
			lk = append(lk, a)
			rk = append(rk, shift(b, -la))
			continue
		}
		residual = append(residual, cj.e)
	}
	lp, rp := l.plan(), r.plan()
	lf, rf := filterNullKeys(lp, la, lk), filterNullKeys(rp, ra, rk)
	if fk > 0 {
		// Pairs match per outer value, a NULL one included (keys match by
		// their encodings): these keys are not filtered for NULLs.
		lk, rk = append(columns(fk), lk...), append(columns(fk), rk...)
	}
	matched := newRel(plan.NewJoin(lf, rf, lk, rk), both)
	if lat != nil {
		matched = newRel(lat.plan(), both)
	}
	matched.filter(residual...)
	if len(subConds) > 0 {
		if matched, err = p.subqueryConds(matched, subConds, depth); err != nil {
			return nil, err
		}
	}
	// With conditions beyond key equalities, a row matched iff it is in
	// a matched pair.
	byPairs := len(residual) > 0 || len(subConds) > 0 || lat != nil

	preserveL := j.Jointype == pg.JoinType_JOIN_LEFT || j.Jointype == pg.JoinType_JOIN_FULL
	preserveR := j.Jointype == pg.JoinType_JOIN_RIGHT || j.Jointype == pg.JoinType_JOIN_FULL
	out := matched
	if preserveL || preserveR {
		parts := []plan.Plan{matched.plan()}
		oj := &outerJoin{left: lp, right: rp, la: la, ra: ra, preserveL: preserveL, preserveR: preserveR, matched: matched.plan()}
		outScope := &scope{cols: append([]column(nil), both.cols...)}
		if preserveL {
			un := unmatched(lp, la, lf, rf, ra, lk, rk, matched.plan(), 0, byPairs)
			oj.padL = pad(un, la, 0, r.scope.types())
			parts = append(parts, oj.padL)
			for i := la; i < la+ra; i++ {
				outScope.cols[i].typ.Nullable = true
			}
		}
		if preserveR {
			un := unmatched(rp, ra, rf, lf, la, rk, lk, matched.plan(), la, byPairs)
			oj.padR = pad(un, ra, la, l.scope.types())
			parts = append(parts, oj.padR)
			for i := 0; i < la; i++ {
				outScope.cols[i].typ.Nullable = true
			}
		}
		u := plan.NewUnion(parts...)
		if lat == nil {
			// outerpush.go: the join planner may push filters into it.
			p.noteOuterJoin(u, oj)
		}
		out = newRel(u, outScope)
	}
	if fk > 0 {
		out = frameKeysFirst(out, fk, la)
	}
	if len(usingPairs) > 0 {
		out = mergeUsing(out, usingPairs, using, la, j.Jointype)
	}
	if j.Alias != nil {
		return aliased(out, j.Alias, "")
	}
	return out, nil
}

// splitAnd returns the conjuncts of e.
func splitAnd(e expr.Expr) []expr.Expr {
	if e.Op == expr.OpAnd {
		var out []expr.Expr
		for _, a := range e.Args {
			out = append(out, splitAnd(a)...)
		}
		return out
	}
	return []expr.Expr{e}
}

// equiKey recognises a = b with a over columns [0, la) and b over
// [la, n) (or swapped), returning (left side, right side).
func equiKey(e expr.Expr, la, n int) (expr.Expr, expr.Expr, bool) {
	if e.Op != expr.OpCall || e.Func != expr.FuncEq || len(e.Args) != 2 {
		return expr.Expr{}, expr.Expr{}, false
	}
	side := func(x expr.Expr) int { // 0 left, 1 right, -1 mixed or none
		cols := x.Columns()
		if len(cols) == 0 {
			return -1
		}
		if cols[len(cols)-1] < la {
			return 0
		}
		if cols[0] >= la && cols[len(cols)-1] < n {
			return 1
		}
		return -1
	}
	a, b := e.Args[0], e.Args[1]
	switch {
	case side(a) == 0 && side(b) == 1:
		return a, b, true
	case side(a) == 1 && side(b) == 0:
		return b, a, true
	}
	return expr.Expr{}, expr.Expr{}, false
}

// shift moves every column reference by d.
func shift(e expr.Expr, d int) expr.Expr {
	return e.Substitute(func(c int) (expr.Expr, bool) { return expr.Column(c + d), true })
}

// filterNullKeys drops rows whose key is NULL: SQL equality never matches
// NULL, but the Join node matches equal encodings, NULLs included.
func filterNullKeys(p plan.Plan, arity int, keys []expr.Expr) plan.Plan {
	if len(keys) == 0 {
		return p
	}
	m := expr.Identity(arity)
	for _, k := range keys {
		m.Predicates = append(m.Predicates, expr.Not(expr.IsNull(k)))
	}
	return plan.NewMfp(p, m)
}

// unmatched returns the rows of one join side (all, with arity n) that
// have no partner: side minus the side's matched rows. When the join
// condition is only key equalities, a row matched iff its key occurs
// among the other side's keys; otherwise it matched iff it occurs among
// the matched pairs' projections onto this side (columns [off, off+n)).
func unmatched(side plan.Plan, n int, sideF, otherF plan.Plan, otherArity int, sideKey, otherKey []expr.Expr,
	matched plan.Plan, off int, residual bool) plan.Plan {
	var hit plan.Plan
	if !residual {
		otherKeys := plan.NewDistinct(plan.NewMfp(otherF, keyProjection(otherKey, otherArity)))
		kc := make([]expr.Expr, len(otherKey))
		for i := range kc {
			kc[i] = expr.Column(i)
		}
		j := plan.NewJoin(sideF, otherKeys, sideKey, kc)
		hit = plan.NewMfp(j, expr.Identity(n))
	} else {
		proj := make([]int, n)
		for i := range proj {
			proj[i] = off + i
		}
		rows := plan.NewDistinct(plan.NewMfp(matched, expr.MFP{Projection: proj}))
		all := make([]expr.Expr, n)
		for i := range all {
			all[i] = expr.Column(i)
		}
		hit = plan.NewMfp(plan.NewJoin(side, rows, all, all), expr.Identity(n))
	}
	return plan.NewUnion(side, plan.NewNegate(hit))
}

// keyProjection is the MFP projecting rows of the given arity to their
// key values.
func keyProjection(keys []expr.Expr, arity int) expr.MFP {
	m := expr.MFP{Expressions: keys, Projection: make([]int, len(keys))}
	for i := range keys {
		m.Projection[i] = arity + i
	}
	return m
}

// pad appends (or, with off > 0, prepends) NULL columns of the given
// types to rows of arity n.
func pad(p plan.Plan, n, off int, nullTypes []row.ColumnType) plan.Plan {
	m := expr.MFP{}
	for _, t := range nullTypes {
		m.Expressions = append(m.Expressions, expr.TypedNull(t.Type))
	}
	nulls := make([]int, len(nullTypes))
	for i := range nulls {
		nulls[i] = n + i
	}
	own := make([]int, n)
	for i := range own {
		own[i] = i
	}
	if off == 0 {
		m.Projection = append(own, nulls...)
	} else {
		m.Projection = append(nulls, own...)
	}
	return plan.NewMfp(p, m)
}

// mergeUsing puts the USING columns first (COALESCE of both sides for a
// FULL join), and hides the originals from unqualified reference.
func mergeUsing(r *rel, pairs [][2]int, names []string, la int, jt pg.JoinType) *rel {
	var es []expr.Expr
	s := &scope{}
	for i, pr := range pairs {
		li, ri := pr[0], la+pr[1]
		var e expr.Expr
		t, w := r.scope.cols[li].typ, r.scope.cols[li].w
		switch jt {
		case pg.JoinType_JOIN_RIGHT:
			e, t, w = expr.Column(ri), r.scope.cols[ri].typ, r.scope.cols[ri].w
		case pg.JoinType_JOIN_FULL:
			e = expr.Coalesce(expr.Column(li), expr.Column(ri))
			t.Nullable = r.scope.cols[li].typ.Nullable && r.scope.cols[ri].typ.Nullable
			w = wider(w, r.scope.cols[ri].w)
		default:
			e = expr.Column(li)
		}
		es = append(es, e)
		s.cols = append(s.cols, column{name: names[i], typ: t, w: w})
	}
	hidden := map[int]bool{}
	for _, pr := range pairs {
		hidden[pr[0]], hidden[la+pr[1]] = true, true
	}
	for i, c := range r.scope.cols {
		c.hidden = c.hidden || hidden[i]
		es = append(es, expr.Column(i))
		s.cols = append(s.cols, c)
	}
	r.project(es, s)
	return r
}
