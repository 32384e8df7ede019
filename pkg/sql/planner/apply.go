package planner

import (
	"errors"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// General decorrelation. A correlated subquery that the equality form of
// correlate.go does not cover (correlation by any predicate, in the select
// list, under GROUP BY, HAVING, DISTINCT, LIMIT or set operations, or
// reaching several levels out) is planned as an "apply" flattened into
// joins and reductions:
//
//	D   = distinct(outer rel projected on the outer columns S names)
//	S'  = S planned with D joined into each of its FROM lists (D's
//	      columns first, named like the outer columns they hold), every
//	      GROUP BY, DISTINCT, set operation and LIMIT (a TopK per key)
//	      carrying D's columns as leading keys, and a global aggregate
//	      producing its one row per key of D (count 0, others NULL for a
//	      key without rows)
//
// S' then has one group of rows per outer value, keyed by D's columns,
// which the outer rows find by a join on those columns exactly as for the
// equality form (subquery.go), except that the keys match NULLs: an outer
// row whose correlation value is NULL has its own key in D. References
// to D's columns in WHERE that are equalities with the subquery's own
// columns become the keys of the join of D with the FROM list; other
// predicates filter the joined rows. A subquery nested in S that names a
// column of a query further out finds it among D's columns (D carries
// every outer column named anywhere inside S), so that it is correlated
// with S only: depth is handled one level at a time.

// corrFrame is the relation of distinct outer values (d, with scope s,
// whose columns are flagged outer) the next query level is planned
// against.
type corrFrame struct {
	d plan.Plan
	s *scope
}

func (f *corrFrame) arity() int { return len(f.s.cols) }

// keyColumns returns the frame's columns as typed expressions at
// positions 0..arity-1.
func (f *corrFrame) keyColumns() []typed {
	out := make([]typed, len(f.s.cols))
	for i, c := range f.s.cols {
		out[i] = typed{e: expr.Column(i), t: c.typ, w: c.w}
	}
	return out
}

// isCorrelationRefusal reports whether err is the equality form's refusal
// of a correlation it does not cover (or of a reference more than one
// level out), which the general form may plan.
func isCorrelationRefusal(err error) bool {
	return err != nil && sqlerr.Code(err) == sqlerr.FeatureNotSupported && correlationRefusal(err)
}

// apply plans sel as correlated with the rows of outerRel (whose scope as
// the subquery sees it is outer) by the general scheme above. cause is the
// error the uncorrelated planning met.
func (p *Planner) apply(sel *pg.SelectStmt, outerRel *rel, outer *scope, sl *pg.SubLink, withValue bool, cause error, depth int) (*subPlan, error) {
	cols := outerColumns(sel, outer)
	if len(cols) == 0 {
		return nil, cause
	}
	if outerRel == nil {
		return nil, cause
	}
	f := &corrFrame{s: &scope{}}
	for _, i := range cols {
		c := outer.cols[i]
		c.outer = true
		f.s.cols = append(f.s.cols, c)
	}
	src, _ := outerRel.rowSource(cols)
	outerRel.readByApply = true
	f.d = plan.NewDistinct(plan.NewMfp(src, expr.MFP{Projection: cols}))
	p.frame = f
	sub, err := p.planSubquery(sel, depth)
	p.frame = nil
	order := p.keptOrder
	if err != nil {
		if isUndefinedName(err) && p.namesOuter(f) {
			// An outer column named where the frame does not reach: a
			// WITH list inside the subquery, or a join nested
			// in another.
			return nil, correlatedUnsupported("naming outer columns in WITH or nested JOIN conditions", err)
		}
		return nil, err
	}
	k := len(cols)
	if withValue {
		if err := oneColumn(sub.arity()-k-len(order), sl); err != nil {
			return nil, err
		}
		settleValueColumn(sub, k)
	} else {
		sub.project(columns(k), &scope{cols: append([]column(nil), sub.scope.cols[:k]...)})
	}
	outerKeys := make([]expr.Expr, k)
	for i, c := range cols {
		outerKeys[i] = expr.Column(c)
	}
	return &subPlan{sub: sub, nKeys: k, outerKeys: outerKeys, nullSafe: true, order: order}, nil
}

// outerColumns returns the positions in outer of the columns that column
// references anywhere in sel (nested subqueries included) resolve to. A
// reference that the subquery's own relations also define is counted
// too: an unneeded key costs a wider D, never a different answer.
func outerColumns(sel *pg.SelectStmt, outer *scope) []int {
	seen := map[int]bool{}
	walkColumnRefs(sel.ProtoReflect(), func(cr *pg.ColumnRef) {
		table, col, star, err := columnRefName(cr)
		if err != nil || star {
			return
		}
		if i, err := outer.resolve(table, col); err == nil {
			seen[i] = true
		}
	})
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// walkColumnRefs calls f on every ColumnRef in the parse tree m.
func walkColumnRefs(m protoreflect.Message, f func(*pg.ColumnRef)) {
	if cr, ok := m.Interface().(*pg.ColumnRef); ok {
		f(cr)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		switch {
		case fd.IsMap():
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walkColumnRefs(l.Get(i).Message(), f)
			}
		default:
			walkColumnRefs(v.Message(), f)
		}
		return true
	})
}

// hasSubLink reports whether n contains a subquery expression.
func hasSubLink(n *pg.Node) bool {
	found := false
	walkExpr(n, func(m *pg.Node) bool {
		if m.GetSubLink() != nil {
			found = true
		}
		return !found
	})
	return found
}

// joinFrame joins the frame's outer values with r (the FROM list of a
// correlated query level), D's columns first, and applies the WHERE
// conjuncts without subqueries: equalities between a D column and the
// level's own columns are the join's keys (SQL equality: NULLs never
// match), the rest filter the joined rows. It returns the joined rel and
// the conjuncts left (those with subqueries).
func (p *Planner) joinFrame(f *corrFrame, r *rel, conjuncts []*pg.Node, depth int) (*rel, []*pg.Node, error) {
	k, m := f.arity(), r.arity()
	both := f.s.concat(r.scope)
	var rest []*pg.Node
	var plain []expr.Expr
	for _, cj := range conjuncts {
		if hasSubLink(cj) {
			rest = append(rest, cj)
			continue
		}
		c := &exprCtx{p: p, scope: both, clause: "WHERE", depth: depth}
		x, err := c.lowerAs(cj, row.TypeBool)
		if err != nil {
			return nil, nil, err
		}
		if err := wantBool(x, "WHERE"); err != nil {
			return nil, nil, err
		}
		plain = append(plain, x.e)
	}
	var lk, rk, residual []expr.Expr
	types := both.types()
	for _, e := range plain {
		// Key equalities cannot fail, so moving them into the join keeps
		// the residual's order, which decides which error a row raises.
		for _, cj := range splitAnd(e) {
			a, b, ok := equiKey(cj, k, k+m)
			if !ok {
				residual = append(residual, cj)
				continue
			}
			at, aerr := a.Type(types)
			bt, berr := b.Type(types)
			if aerr != nil || berr != nil {
				residual = append(residual, cj)
				continue
			}
			switch {
			case at.Type == bt.Type:
			case at.Type == row.TypeInt64 && bt.Type == row.TypeFloat64:
				a = expr.Cast(a, row.TypeFloat64)
			case at.Type == row.TypeFloat64 && bt.Type == row.TypeInt64:
				b = expr.Cast(b, row.TypeFloat64)
			default:
				residual = append(residual, cj)
				continue
			}
			lk = append(lk, a)
			rk = append(rk, shift(b, -k))
		}
	}
	lf, rf := filterNullKeys(f.d, k, lk), filterNullKeys(r.plan(), m, rk)
	out := newRel(plan.NewJoin(lf, rf, lk, rk), both)
	out.filter(residual...)
	return out, rest, nil
}

// frameRel is the relation of a correlated query level without FROM
// items of its own (SELECT without FROM, VALUES): the frame's rows
// paired with r's.
func frameRel(f *corrFrame, r *rel) *rel {
	return newRel(plan.NewJoin(f.d, r.plan(), nil, nil), f.s.concat(r.scope))
}

// perKeyDefaults completes a global aggregate's per-key rows (red, whose
// first k columns are the frame's keys, then the aggregates) with one
// default row for each key of the frame that has no input rows.
func perKeyDefaults(f *corrFrame, red plan.Plan, defaults []expr.Expr) plan.Plan {
	k := f.arity()
	present := plan.NewMfp(red, expr.MFP{Projection: identityInts(k)})
	missing := plan.NewUnion(f.d, plan.NewNegate(present))
	return plan.NewUnion(red, plan.NewMfp(missing, appendLiterals(k, defaults)))
}

func identityInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// frameFinishing resolves ORDER BY, LIMIT and OFFSET of a correlated set
// operation or VALUES over its columns after the frame's k keys, and
// keeps the keys in front of the output.
func (p *Planner) frameFinishing(sel *pg.SelectStmt, r *rel, k int) (Finishing, error) {
	view := &rel{scope: &scope{cols: r.scope.cols[k:]}, mfp: expr.Identity(r.arity() - k)}
	fin, err := p.finishing(sel, view, r.arity()-k, nil)
	if err != nil {
		return Finishing{}, err
	}
	for i := range fin.Order {
		fin.Order[i].Column += k
	}
	proj := identityInts(k)
	for _, c := range fin.Project {
		proj = append(proj, c+k)
	}
	fin.Project = proj
	return fin, nil
}

// refuseOuterAggregate refuses an aggregate whose argument names only
// outer columns: Postgres evaluates it in the outer query (it is an
// aggregate of that query), which this planner does not do.
func refuseOuterAggregate(s *scope, arg expr.Expr) error {
	cols := arg.Columns()
	if len(cols) == 0 {
		return nil
	}
	for _, c := range cols {
		if c >= len(s.cols) || !s.cols[c].outer {
			return nil
		}
	}
	return sqlerr.Unsupported("aggregates over only outer columns in a subquery")
}

// framedFrom plans the FROM list of a correlated query level. A subquery
// in it that names outer columns is planned against the frame too (its
// rows keyed by the outer values first): then the level's relation is
// built here, starting from the frame's rows, each such subquery joined
// on the outer values (NULLs match: they are the same rows of D) and the
// other items cross-joined; joined reports that. Otherwise it is the
// plain FROM list, which joinFrame joins with the frame.
func (p *Planner) framedFrom(items []*pg.Node, depth int, f *corrFrame) (r *rel, joined bool, err error) {
	if len(items) == 0 {
		return constRel(), false, nil
	}
	parts := make([]*rel, len(items))
	keyed := make([]bool, len(items))
	lateral := make([]*pg.RangeSubselect, len(items))
	for i, it := range items {
		if rs := it.GetRangeSubselect(); rs != nil && rs.Lateral && i > 0 {
			// Planned below against everything to its left, the frame's
			// outer values included.
			lateral[i], joined = rs, true
			continue
		}
		part, err := p.fromItem(it, depth)
		if err != nil {
			if !isUndefinedName(err) && !isCorrelationRefusal(err) {
				return nil, false, err
			}
			rs, je, rf, rv := it.GetRangeSubselect(), it.GetJoinExpr(), it.GetRangeFunction(), it.GetRangeVar()
			switch {
			case rv != nil && errors.Is(err, errOuterCTE):
				part, err = p.framedCTE(rv, depth, f)
			case rs != nil && !rs.Lateral && rs.Subquery.GetSelectStmt() != nil:
				part, err = p.framedSubselect(rs, depth, f)
			case rf != nil && isUndefinedName(err) && p.namesOuter(f):
				// A function of outer values: its rows follow the frame's keys.
				part, _, err = p.rangeFunction(newRel(f.d, f.s), rf, depth)
			case je != nil && isUndefinedName(err) && p.namesOuter(f):
				p.onFrame = f
				part, err = p.join(je, depth)
				p.onFrame = nil
			}
			if err != nil {
				return nil, false, err
			}
			keyed[i], joined = true, true
		}
		parts[i] = part
	}
	if !joined {
		out := parts[0]
		for _, part := range parts[1:] {
			out = newRel(plan.NewJoin(out.plan(), part.plan(), nil, nil), out.scope.concat(part.scope))
		}
		return out, false, nil
	}
	k := f.arity()
	out := newRel(f.d, f.s)
	for i, part := range parts {
		n := out.arity()
		if lateral[i] != nil {
			lat, _, err := p.lateral(out, lateral[i], depth)
			if err != nil {
				return nil, false, err
			}
			out = lat
			continue
		}
		if !keyed[i] {
			out = newRel(plan.NewJoin(out.plan(), part.plan(), nil, nil), out.scope.concat(part.scope))
			continue
		}
		j := plan.NewJoin(out.plan(), part.plan(), columns(k), columns(k))
		proj := identityInts(n)
		for c := k; c < part.arity(); c++ {
			proj = append(proj, n+c)
		}
		out = newRel(plan.NewMfp(j, expr.MFP{Projection: proj}), out.scope.concat(&scope{cols: part.scope.cols[k:]}))
	}
	return out, true, nil
}

// framedSubselect plans a subquery in FROM against the frame: its output
// is the frame's keys, then its columns, named by its alias.
func (p *Planner) framedSubselect(rs *pg.RangeSubselect, depth int, f *corrFrame) (*rel, error) {
	p.frame = f
	r, err := p.planSubquery(rs.Subquery.GetSelectStmt(), depth+1)
	p.frame = nil
	if err != nil {
		return nil, err
	}
	k := f.arity()
	vals := &rel{scope: &scope{cols: append([]column(nil), r.scope.cols[k:]...)}, mfp: expr.Identity(r.arity() - k)}
	if _, err := aliased(vals, rs.Alias, ""); err != nil {
		return nil, err
	}
	r.scope = &scope{cols: append(append([]column(nil), f.s.cols...), vals.scope.cols...)}
	return r, nil
}

// fromWithFrame plans a query level's FROM list, joined with the frame's
// outer values when the level is correlated (frame not nil): it returns
// the relation, how many leading columns are the frame's, and the WHERE
// conjuncts still to apply.
func (p *Planner) fromWithFrame(items []*pg.Node, conjuncts []*pg.Node, depth int, frame *corrFrame) (*rel, int, []*pg.Node, error) {
	if frame == nil {
		r, err := p.fromClause(items, depth)
		return r, 0, conjuncts, err
	}
	r, joined, err := p.framedFrom(items, depth, frame)
	if err != nil {
		return nil, 0, nil, err
	}
	if !joined {
		if r, conjuncts, err = p.joinFrame(frame, r, conjuncts, depth); err != nil {
			return nil, 0, nil, err
		}
	}
	return r, frame.arity(), conjuncts, nil
}

// framedJoinSides pairs a JOIN whose ON condition names outer columns
// with the frame's rows, so that the join's output starts with the outer
// values and each outer value's rows are joined on their own. For an
// inner or LEFT join the left side is paired (D × l), and returned with
// fk 0. A RIGHT or FULL join must preserve the unmatched rows of the
// right side (and the left) for each outer value: both sides are paired
// (D × l, D × r, the right's copy of the outer columns unnamed), the
// join's caller matches pairs on the frame's fk keys as well as on ON,
// and frameKeysFirst puts one copy of the outer values in front. USING,
// NATURAL or an alias would reorder or rename the outer columns: those
// are refused.
func framedJoinSides(f *corrFrame, j *pg.JoinExpr, l, r *rel) (*rel, *rel, int, error) {
	if j.IsNatural || len(j.UsingClause) > 0 || j.Alias != nil {
		return nil, nil, 0, sqlerr.Unsupported("outer columns in a correlated subquery's join with USING, NATURAL or an alias")
	}
	if j.Jointype != pg.JoinType_JOIN_RIGHT && j.Jointype != pg.JoinType_JOIN_FULL {
		return frameRel(f, l), r, 0, nil
	}
	unnamed := &scope{cols: make([]column, len(f.s.cols))}
	for i, c := range f.s.cols {
		c.name, c.table, c.hidden = "", "", true
		unnamed.cols[i] = c
	}
	paired := newRel(plan.NewJoin(f.d, r.plan(), nil, nil), unnamed.concat(r.scope))
	return frameRel(f, l), paired, f.arity(), nil
}

// frameKeysFirst turns the output of a join of two framed sides, (D, l,
// D', r) with la the left's width, into (D, l, r): a row either side left
// unmatched has the other side's copy of the outer values NULL, so each
// outer column is the one copy that is set (both are equal when matched).
func frameKeysFirst(out *rel, fk, la int) *rel {
	n := out.arity()
	exprs := make([]expr.Expr, fk)
	for i := range exprs {
		exprs[i] = expr.Coalesce(expr.Column(i), expr.Column(la+i))
	}
	proj := make([]int, 0, n-fk)
	for i := range fk {
		proj = append(proj, n+i)
	}
	for i := fk; i < la; i++ {
		proj = append(proj, i)
	}
	for i := la + fk; i < n; i++ {
		proj = append(proj, i)
	}
	cols := make([]column, 0, n-fk)
	for i := range fk {
		c := out.scope.cols[i]
		c.typ.Nullable = out.scope.cols[i].typ.Nullable && out.scope.cols[la+i].typ.Nullable
		cols = append(cols, c)
	}
	cols = append(cols, out.scope.cols[fk:la]...)
	cols = append(cols, out.scope.cols[la+fk:]...)
	return newRel(plan.NewMfp(out.plan(), expr.MFP{Expressions: exprs, Projection: proj}), &scope{cols: cols})
}

// namesOuter reports whether the last name that did not resolve is a
// column of the frame (a reference to an outer query from a place the
// frame does not reach).
func (p *Planner) namesOuter(f *corrFrame) bool {
	_, err := f.s.resolveLevel(p.unresolved[0], p.unresolved[1], true)
	return err == nil
}

// subqueryConds applies conditions with subqueries (of a JOIN's ON) to
// the matched pairs r, as WHERE would, and returns the pairs with r's
// columns only (the subqueries' added columns projected away).
func (p *Planner) subqueryConds(r *rel, conds []*pg.Node, depth int) (*rel, error) {
	n, s := r.arity(), r.scope
	r, preds, err := p.applyConjuncts(r, conds, "JOIN conditions", "JOIN/ON", depth)
	if err != nil {
		return nil, err
	}
	r.filter(preds...)
	r.project(columns(n), &scope{cols: append([]column(nil), s.cols[:n]...)})
	return r, nil
}
