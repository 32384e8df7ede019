package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Decorrelation. A subquery that names columns it does not define is
// planned again as correlated with the query it is evaluated in (its
// "outer" scope): a plain SELECT ... FROM ... WHERE whose references to
// outer columns are all in conjuncts inner_expr = outer_expr of its WHERE.
// Those conjuncts become keys: the subquery is planned without them, with
// the inner sides as its leading columns, and the outer sides are what
// the outer rows join on. Everything else that reaches an outer column is
// refused with 0A000 naming the form; names that resolve nowhere keep
// their 42703/42P01.

// corrAggregate is a correlated subquery SELECT f(aggregates) FROM ...
// WHERE inner = outer AND ...: for an outer row, the aggregation of the
// inner rows with its keys. groups has one row per key present (the keys,
// then the aggregates); defaults are the aggregates over no rows (count
// 0, others NULL), for outer rows whose key has none; value computes the
// select list from the keys and aggregates.
type corrAggregate struct {
	groups   plan.Plan
	types    []row.ColumnType
	defaults []expr.Expr
	value    typed
}

// correlatedAggregate plans the select list of a correlated subquery that
// aggregates (no GROUP BY): an aggregation of r grouped by the inner
// correlation keys. Postgres evaluates it once per outer row, over the
// inner rows matching that row, so a key without rows gets the
// aggregates of an empty input, and the select list is computed per
// outer row (its errors, such as 1/count(*), belong to that row).
func (p *Planner) correlatedAggregate(sel *pg.SelectStmt, r *rel, innerKeys []expr.Expr, keyTypes []row.ColumnType,
	outer *scope, depth int) (*corrAggregate, error) {
	agg := &aggScope{input: r.scope, inputRel: r, depth: depth}
	for i, k := range innerKeys {
		agg.keys = append(agg.keys, typed{e: k, t: keyTypes[i]})
	}
	c := &exprCtx{p: p, scope: r.scope, agg: agg, clause: "the select list", depth: depth}
	tg, err := p.correlatedTarget(sel, c, r.scope, outer)
	if err != nil {
		return nil, err
	}
	if agg.sawSubLink {
		return nil, sqlerr.Unsupported("subqueries in the select list of a correlated subquery with aggregates")
	}
	v := tg.x
	for _, col := range v.e.Columns() {
		if col < len(innerKeys) {
			// The keys are grouped only by decorrelation; the query has no
			// GROUP BY.
			return nil, sqlerr.New(sqlerr.GroupingError, "column must appear in the GROUP BY clause or be used in an aggregate function")
		}
	}
	if v.t.Type == row.TypeNull {
		v = typed{e: expr.Cast(v.e, row.TypeText), t: row.ColumnType{Type: row.TypeText, Nullable: true}}
	}
	red := p.reduce(r, agg)
	ca := &corrAggregate{groups: red.plan(), value: v}
	for _, g := range agg.aggs {
		if g.fn == "count" {
			ca.types = append(ca.types, row.ColumnType{Type: row.TypeInt64})
			ca.defaults = append(ca.defaults, expr.Literal(row.Int64(0)))
		} else {
			ca.types = append(ca.types, row.ColumnType{Type: g.out.Type, Nullable: true})
			ca.defaults = append(ca.defaults, expr.TypedNull(g.out.Type))
		}
	}
	return ca, nil
}

// isUndefinedName reports whether err is a name that did not resolve,
// which in a subquery may be a reference to an outer query.
func isUndefinedName(err error) bool {
	code := sqlerr.Code(err)
	return code == sqlerr.UndefinedColumn || code == sqlerr.UndefinedTable || isEmulatedColumn(err)
}

// correlatedUnsupported refuses a form of correlation, keeping the name
// resolution error that revealed it in the message.
func correlatedUnsupported(what string, cause error) error {
	return sqlerr.Errorf(sqlerr.FeatureNotSupported, "correlated subqueries %s not supported (%v)", what, cause)
}

// correlationRefusal reports whether err's message is that of
// correlatedUnsupported.
func correlationRefusal(err error) bool {
	return strings.Contains(err.Error(), "correlated subqueries ")
}

// decorrelate plans a subquery that referenced names it does not define
// (cause is that error) as correlated with outer: a plain SELECT ... FROM
// ... WHERE whose references to outer columns are all in conjuncts
// inner_expr = outer_expr of its WHERE.
func (p *Planner) decorrelate(sel *pg.SelectStmt, outer *scope, withValue bool, cause error, depth int) (*subPlan, error) {
	switch {
	case sel.Op != pg.SetOperation_SETOP_NONE && sel.Op != pg.SetOperation_SET_OPERATION_UNDEFINED, len(sel.ValuesLists) > 0:
		return nil, correlatedUnsupported("with set operations", cause)
	case sel.WithClause != nil:
		return nil, correlatedUnsupported("with WITH", cause)
	case len(sel.GroupClause) > 0 || sel.HavingClause != nil:
		return nil, correlatedUnsupported("with GROUP BY or HAVING", cause)
	case !withValue && hasAggregate(sel.TargetList):
		return nil, correlatedUnsupported("EXISTS with aggregates", cause)
	case sel.LimitCount != nil || sel.LimitOffset != nil:
		return nil, correlatedUnsupported("with LIMIT or OFFSET", cause)
	case len(sel.WindowClause) > 0 || len(sel.LockingClause) > 0 || sel.IntoClause != nil:
		return nil, correlatedUnsupported("of this form", cause)
	case len(sel.DistinctClause) > 0 && (len(sel.DistinctClause) > 1 || sel.DistinctClause[0].Node != nil):
		return nil, correlatedUnsupported("with DISTINCT ON", cause)
	}
	r, err := p.fromClause(sel.FromClause, depth)
	if err != nil {
		if isUndefinedName(err) {
			return nil, correlatedUnsupported("outside WHERE", err)
		}
		return nil, err
	}
	var innerKeys, outerKeys []expr.Expr
	var keyTypes []row.ColumnType
	var temporal []temporalSide
	if sel.WhereClause != nil {
		conjuncts := whereConjuncts(sel.WhereClause)
		if p.Maintained {
			conjuncts, temporal = splitTemporal(conjuncts)
		}
		for _, cj := range conjuncts {
			c := &exprCtx{p: p, scope: r.scope, rel: r, clause: "WHERE", depth: depth}
			x, err := c.lowerAs(cj, row.TypeBool)
			if err == nil {
				if err := wantBool(x, "WHERE"); err != nil {
					return nil, err
				}
				r.filter(x.e)
				continue
			}
			if !isUndefinedName(err) {
				return nil, err
			}
			ik, ok, kerr := p.correlationKey(cj, r.scope, outer)
			if kerr != nil {
				return nil, kerr
			}
			if !ok {
				if outerRef, rerr := refersToOuter([]*pg.Node{cj}, r.scope, outer); rerr != nil || !outerRef {
					return nil, err
				}
				return nil, correlatedUnsupported("other than by equality conditions AND-ed into WHERE", err)
			}
			innerKeys = append(innerKeys, ik[0].e)
			outerKeys = append(outerKeys, ik[1].e)
			keyTypes = append(keyTypes, ik[0].t)
		}
	}
	if len(temporal) > 0 {
		if r, err = p.temporalFilter(r, temporal, depth); err != nil {
			return nil, err
		}
	}
	if len(innerKeys) == 0 {
		// Nothing correlated in WHERE: the unresolved name is elsewhere.
		if outerRef, err := refersToOuter(sel.TargetList, r.scope, outer); err == nil && outerRef {
			return nil, correlatedUnsupported("outside WHERE", cause)
		}
		return nil, cause
	}
	es := append([]expr.Expr(nil), innerKeys...)
	s := &scope{}
	for _, t := range keyTypes {
		s.cols = append(s.cols, column{name: "?key?", typ: t})
	}
	if hasAggregate(sel.TargetList) {
		ca, err := p.correlatedAggregate(sel, r, innerKeys, keyTypes, outer, depth)
		if err != nil {
			return nil, err
		}
		return &subPlan{nKeys: len(innerKeys), outerKeys: outerKeys, agg: ca}, nil
	}
	if withValue {
		c := &exprCtx{p: p, scope: r.scope, rel: r, clause: "the select list", depth: depth}
		tg, err := p.correlatedTarget(sel, c, r.scope, outer)
		if err != nil {
			return nil, err
		}
		es = append(es, tg.x.e)
		s.cols = append(s.cols, column{name: tg.name, typ: tg.x.t, w: tg.x.w})
	}
	r.project(es, s)
	if withValue {
		settleValueColumn(r, len(innerKeys))
	}
	if len(sel.DistinctClause) > 0 {
		r = newRel(plan.NewDistinct(r.plan()), r.scope)
	}
	return &subPlan{sub: r, nKeys: len(innerKeys), outerKeys: outerKeys}, nil
}

// outerReference returns the error for a name that did not resolve
// (err): 0A000 when it names a column of a query enclosing the immediately
// enclosing one, which decorrelation does not reach; err otherwise (the
// immediately enclosing query's columns are found by decorrelation).
func (p *Planner) outerReference(table, col string, err error) error {
	n := len(p.outers)
	if n < 2 {
		return err
	}
	if _, ierr := p.outers[n-1].resolve(table, col); ierr == nil {
		return err
	}
	for i := n - 2; i >= 0; i-- {
		if _, oerr := p.outers[i].resolve(table, col); oerr == nil {
			return correlatedUnsupported("with a query more than one level out", err)
		}
	}
	return err
}

// refersToOuter reports whether the expressions name a column of outer
// that inner does not have, or returns the error of a name neither has.
func refersToOuter(nodes []*pg.Node, inner, outer *scope) (bool, error) {
	found := false
	var err error
	for _, n := range nodes {
		walkExpr(n, func(m *pg.Node) bool {
			cr := m.GetColumnRef()
			if cr == nil {
				return err == nil
			}
			table, col, star, cerr := columnRefName(cr)
			if cerr != nil || star {
				return err == nil
			}
			if _, ierr := inner.resolve(table, col); ierr == nil {
				return err == nil
			} else if _, oerr := outer.resolve(table, col); oerr == nil {
				found = true
			} else {
				err = ierr
			}
			return err == nil
		})
	}
	return found, err
}

// correlationKey recognises inner_expr = outer_expr (either way round)
// and returns the two sides, converted to one type.
func (p *Planner) correlationKey(n *pg.Node, inner, outer *scope) ([2]typed, bool, error) {
	a := n.GetAExpr()
	if a == nil || a.Kind != pg.A_Expr_Kind_AEXPR_OP || opName(a.Name) != "=" || a.Lexpr == nil || a.Rexpr == nil {
		return [2]typed{}, false, nil
	}
	for _, sides := range [][2]*pg.Node{{a.Lexpr, a.Rexpr}, {a.Rexpr, a.Lexpr}} {
		ci := &exprCtx{p: p, scope: inner, clause: "WHERE"}
		co := &exprCtx{p: p, scope: outer, clause: "WHERE"}
		xi, err := ci.lowerTyped(sides[0])
		if err != nil {
			continue
		}
		xo, err := co.lowerTyped(sides[1])
		if err != nil {
			continue
		}
		xs, err := ci.unify([]typed{xi, xo})
		if err != nil {
			return [2]typed{}, false, err
		}
		ie, oe, t, err := equalityKeys(xs[0], xs[1])
		if err != nil {
			return [2]typed{}, false, err
		}
		return [2]typed{{e: ie, t: t}, {e: oe, t: t}}, true, nil
	}
	return [2]typed{}, false, nil
}

// correlatedTarget plans the single select-list entry of a correlated
// scalar subquery over in. An error in a list that refers to the outer
// query is reported as an unsupported correlation.
func (p *Planner) correlatedTarget(sel *pg.SelectStmt, c *exprCtx, in, outer *scope) (target, error) {
	targets, err := p.targetList(sel.TargetList, c, in)
	if err != nil {
		if outerRef, rerr := refersToOuter(sel.TargetList, in, outer); rerr == nil && outerRef {
			return target{}, correlatedUnsupported("in the select list", err)
		}
		return target{}, err
	}
	if len(targets) != 1 {
		return target{}, sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column")
	}
	return targets[0], nil
}
