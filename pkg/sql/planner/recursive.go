package planner

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// DefaultRecursionLimit is the number of rounds a WITH RECURSIVE query may
// iterate before it fails with 54000 (PostgreSQL iterates forever).
const DefaultRecursionLimit = 10000

// invalidRecursion is SQLSTATE 42P19.
const invalidRecursion = "42P19"

// recursiveOrder returns the order in which a WITH RECURSIVE list must be
// planned (every CTE after the ones it reads; in a recursive list a CTE
// may read any other) and which CTEs read themselves. A cycle through
// several CTEs is PostgreSQL's 0A000 "mutual recursion".
func recursiveOrder(ctes []*pg.CommonTableExpr) (order []int, self []bool, err error) {
	names := map[string]int{}
	for i, c := range ctes {
		names[c.Ctename] = i
	}
	deps := make([][]int, len(ctes))
	self = make([]bool, len(ctes))
	for i, c := range ctes {
		refs := map[string]bool{}
		cteRefs(c.Ctequery.ProtoReflect(), names, refs)
		for name := range refs {
			if j := names[name]; j == i {
				self[i] = true
			} else {
				deps[i] = append(deps[i], j)
			}
		}
		slices.Sort(deps[i])
	}
	done := make([]bool, len(ctes))
	for len(order) < len(ctes) {
		progress := false
		for i := range ctes {
			if done[i] || slices.ContainsFunc(deps[i], func(j int) bool { return !done[j] }) {
				continue
			}
			done[i], progress = true, true
			order = append(order, i)
		}
		if !progress {
			return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "mutual recursion between WITH items is not implemented")
		}
	}
	return order, self, nil
}

// cteRefs adds to out the names among names that the tree under m reads
// as unqualified relations, except where an inner WITH redefines them.
func cteRefs(m protoreflect.Message, names map[string]int, out map[string]bool) {
	switch v := m.Interface().(type) {
	case *pg.RangeVar:
		if _, ok := names[v.Relname]; ok && v.Schemaname == "" && v.Catalogname == "" {
			out[v.Relname] = true
		}
		return
	case *pg.SelectStmt:
		if v.WithClause != nil {
			inner := map[string]int{}
			for n, i := range names {
				inner[n] = i
			}
			for _, c := range v.WithClause.Ctes {
				delete(inner, c.GetCommonTableExpr().GetCtename())
			}
			names = inner
		}
	}
	eachChild(m, func(c protoreflect.Message) { cteRefs(c, names, out) })
}

// eachChild calls f on every message directly inside m.
func eachChild(m protoreflect.Message, f func(protoreflect.Message)) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap() || fd.Message() == nil:
		case fd.IsList():
			for i := 0; i < v.List().Len(); i++ {
				f(v.List().Get(i).Message())
			}
		default:
			f(v.Message())
		}
		return true
	})
}

// recursionCheck enforces PostgreSQL's rules for where a recursive
// reference may appear (parse_cte.c's checkWellFormedRecursion).
type recursionCheck struct {
	name string
	refs int
	err  error
}

// checkRecursiveForm checks a self-referencing CTE's query: the form
// "non-recursive term UNION [ALL] recursive term", the reference only in
// the recursive term, once, not inside a subquery, an outer join's
// nullable side, INTERSECT ALL or EXCEPT, and no ORDER BY, LIMIT, OFFSET or
// FOR UPDATE on the whole.
func checkRecursiveForm(name string, sel *pg.SelectStmt) error {
	if sel.Op != pg.SetOperation_SETOP_UNION {
		return sqlerr.Errorf(invalidRecursion, "recursive query %q does not have the form non-recursive-term UNION [ALL] recursive-term", name)
	}
	c := &recursionCheck{name: name}
	c.walk(sel.Larg.ProtoReflect(), "its non-recursive term")
	c.walk(sel.Rarg.ProtoReflect(), "")
	if c.err != nil {
		return c.err
	}
	switch {
	case len(sel.SortClause) > 0:
		return sqlerr.New(sqlerr.FeatureNotSupported, "ORDER BY in a recursive query is not implemented")
	case sel.LimitOffset != nil:
		return sqlerr.New(sqlerr.FeatureNotSupported, "OFFSET in a recursive query is not implemented")
	case sel.LimitCount != nil:
		return sqlerr.New(sqlerr.FeatureNotSupported, "LIMIT in a recursive query is not implemented")
	case len(sel.LockingClause) > 0:
		return sqlerr.New(sqlerr.FeatureNotSupported, "FOR UPDATE/SHARE in a recursive query is not implemented")
	}
	return nil
}

// walk visits m; where names the construct a reference found there would
// be inside ("" where one is allowed).
func (c *recursionCheck) walk(m protoreflect.Message, where string) {
	if c.err != nil || !m.IsValid() {
		return
	}
	switch v := m.Interface().(type) {
	case *pg.RangeVar:
		if v.Relname != c.name || v.Schemaname != "" || v.Catalogname != "" {
			return
		}
		c.refs++
		switch {
		case where != "":
			c.err = sqlerr.Errorf(invalidRecursion, "recursive reference to query %q must not appear within %s", c.name, where)
		case c.refs > 1:
			c.err = sqlerr.Errorf(invalidRecursion, "recursive reference to query %q must not appear more than once", c.name)
		}
		return
	case *pg.SelectStmt:
		c.selectStmt(v, where)
		return
	case *pg.JoinExpr:
		left, right := where, where
		switch v.Jointype {
		case pg.JoinType_JOIN_LEFT:
			right = "an outer join"
		case pg.JoinType_JOIN_RIGHT:
			left = "an outer join"
		case pg.JoinType_JOIN_FULL:
			left, right = "an outer join", "an outer join"
		}
		c.walk(v.Larg.ProtoReflect(), left)
		c.walk(v.Rarg.ProtoReflect(), right)
		c.walk(v.Quals.ProtoReflect(), where)
		return
	case *pg.SubLink:
		c.walk(v.Testexpr.ProtoReflect(), where)
		c.walk(v.Subselect.ProtoReflect(), "a subquery")
		return
	}
	eachChild(m, func(k protoreflect.Message) { c.walk(k, where) })
}

func (c *recursionCheck) selectStmt(s *pg.SelectStmt, where string) {
	if s.WithClause != nil {
		for _, cte := range s.WithClause.Ctes {
			if cte.GetCommonTableExpr().GetCtename() == c.name {
				return // an inner WITH redefines the name
			}
		}
	}
	switch s.Op {
	case pg.SetOperation_SETOP_UNION:
		c.walk(s.Larg.ProtoReflect(), where)
		c.walk(s.Rarg.ProtoReflect(), where)
		return
	case pg.SetOperation_SETOP_INTERSECT, pg.SetOperation_SETOP_EXCEPT:
		what := "INTERSECT"
		if s.Op == pg.SetOperation_SETOP_EXCEPT {
			what = "EXCEPT"
		}
		left := where
		if s.All {
			left = what
		}
		c.walk(s.Larg.ProtoReflect(), left)
		right := left
		if s.Op == pg.SetOperation_SETOP_EXCEPT {
			right = what
		}
		c.walk(s.Rarg.ProtoReflect(), right)
		return
	}
	before := c.refs
	eachChild(s.ProtoReflect(), func(k protoreflect.Message) { c.walk(k, where) })
	if c.err == nil && where == "" && c.refs > before && fromReads(s.FromClause, c.name) &&
		hasAggregate(append(append([]*pg.Node(nil), s.TargetList...), s.HavingClause)) {
		c.err = sqlerr.New(invalidRecursion, "aggregate functions are not allowed in a recursive query's recursive term")
	}
}

// fromReads reports whether a FROM list reads name directly (not inside a
// subquery): aggregates are refused at that query level.
func fromReads(from []*pg.Node, name string) bool {
	for _, n := range from {
		switch {
		case n.GetRangeVar() != nil:
			rv := n.GetRangeVar()
			if rv.Relname == name && rv.Schemaname == "" {
				return true
			}
		case n.GetJoinExpr() != nil:
			if fromReads([]*pg.Node{n.GetJoinExpr().Larg, n.GetJoinExpr().Rarg}, name) {
				return true
			}
		}
	}
	return false
}

// planRecursiveCTE plans a self-referencing CTE: the non-recursive term,
// then the recursive term with the name bound to the working table (a
// local id of the Recursive node), its columns converted to the
// non-recursive term's types as PostgreSQL requires, and the columns
// SEARCH and CYCLE add computed by both terms (searchcycle.go).
func (p *Planner) planRecursiveCTE(c *pg.CommonTableExpr, sel *pg.SelectStmt, frame cteFrame, depth int) (cte, error) {
	if err := checkSearchCycleNames(c); err != nil {
		return cte{}, err
	}
	if err := checkRecursiveForm(c.Ctename, sel); err != nil {
		return cte{}, err
	}
	if err := checkSearchCycleForm(c, sel); err != nil {
		return cte{}, err
	}
	base, err := p.planSubquery(sel.Larg, depth+1)
	if err != nil {
		return cte{}, err
	}
	cols, err := cteColumns(c, base)
	if err != nil {
		return cte{}, err
	}
	for i := range cols {
		if cols[i].typ.Type == row.TypeNull {
			// An untyped NULL in the non-recursive term is text, as an
			// unknown-type literal is in PostgreSQL.
			cols[i].typ.Type = row.TypeText
		}
	}
	n := len(cols)
	basePlan := castTo(base, &scope{cols: cols})
	sc, added, stepSel, err := p.searchCycleStep(c, sel.Rarg, cols)
	if err != nil {
		return cte{}, err
	}
	all := append(append([]column(nil), cols...), added...)
	p.locals++
	id := plan.Local(p.locals)
	binding := make([]column, len(all))
	for i, col := range all {
		binding[i] = col
		binding[i].typ.Nullable = true
		binding[i].unstarred = i >= n
	}
	frame[c.Ctename] = cte{plan: plan.NewGet(id), cols: binding}
	if err := nameClash(sc, cols); err != nil {
		// PostgreSQL reads the recursive term first, where a reference
		// to the clashing name is ambiguous (42702).
		if _, perr := p.planSubquery(sel.Rarg, depth+1); perr != nil {
			err = perr
		}
		delete(frame, c.Ctename)
		return cte{}, err
	}
	step, err := p.planSubquery(stepSel, depth+1)
	delete(frame, c.Ctename)
	if err != nil {
		return cte{}, err
	}
	if step.arity() != len(all) {
		return cte{}, sqlerr.New(sqlerr.SyntaxError, "each UNION query must have the same number of columns")
	}
	for i, sc := range step.scope.cols[:n] {
		if err := recursiveColumnType(c.Ctename, i, cols[i], sc); err != nil {
			return cte{}, err
		}
	}
	stepPlan := castTo(step, &scope{cols: all})
	for i, sc := range step.scope.cols[:n] {
		cols[i].typ.Nullable = cols[i].typ.Nullable || sc.typ.Nullable || sc.typ.Type == row.TypeNull
	}
	if sc != nil {
		all = append(append([]column(nil), cols...), added...)
		basePlan = withAdded(newRel(basePlan, &scope{cols: cols}), n, sc.baseAdded(), nil, &scope{cols: all})
		values, keep := sc.stepAdded(n)
		stepPlan = withAdded(newRel(stepPlan, &scope{cols: binding}), n, values, keep, &scope{cols: all})
	}
	out := plan.NewRecursive(id, c.Ctename, basePlan, stepPlan, !sel.All, p.recursionLimit())
	return cte{plan: out, cols: all}, nil
}

func (p *Planner) recursionLimit() int64 {
	if p.RecursionLimit > 0 {
		return p.RecursionLimit
	}
	return DefaultRecursionLimit
}

// recursiveColumnType checks that the recursive term's column can take
// the non-recursive term's type: the UNION's common type must be the
// non-recursive term's, or PostgreSQL fails with 42804.
func recursiveColumnType(name string, i int, base, step column) error {
	bt, st := base.typ.Type, step.typ.Type
	common := bt
	switch {
	case st == bt || st == row.TypeNull:
	case bt.IsNumeric() && st.IsNumeric():
		common, _ = numericCommon(bt, st)
	default:
		return sqlerr.Errorf(sqlerr.DatatypeMismatch, "UNION types %s and %s cannot be matched",
			SQLTypeName(bt, base.w, base.mod), SQLTypeName(st, step.w, step.mod))
	}
	w := base.w
	if common == row.TypeInt64 && st == row.TypeInt64 {
		w = wider(base.w, step.w)
	}
	mod := base.mod
	if st != row.TypeNull && step.mod != base.mod {
		mod = TypeMod{}
	}
	if common != bt || w != base.w || mod != base.mod {
		err := sqlerr.Errorf(sqlerr.DatatypeMismatch,
			"recursive query %q column %d has type %s in non-recursive term but type %s overall",
			name, i+1, SQLTypeName(bt, base.w, base.mod), SQLTypeName(common, w, mod))
		err.Hint = "Cast the output of the non-recursive term to the correct type."
		return err
	}
	return nil
}

// cteColumns names a CTE's columns by its column list.
func cteColumns(c *pg.CommonTableExpr, r *rel) ([]column, error) {
	if len(c.Aliascolnames) > r.arity() {
		return nil, sqlerr.Errorf("42P10", "WITH query %q has %d columns available but %d columns specified",
			c.Ctename, r.arity(), len(c.Aliascolnames))
	}
	cols := make([]column, len(r.scope.cols))
	for i, col := range r.scope.cols {
		cols[i] = column{name: col.name, typ: col.typ, w: col.w, mod: col.mod}
		if i < len(c.Aliascolnames) {
			cols[i].name = c.Aliascolnames[i].GetString_().GetSval()
		}
	}
	return cols, nil
}

// explainRecursive is EXPLAIN's line for a Recursive node.
func explainRecursive(r *plan.Recursive) string {
	union := "UNION ALL"
	if r.Distinct {
		union = "UNION"
	}
	mode := "full: fixed point re-derived from scratch on one worker when an input changes"
	if r.Incremental() {
		mode = "incremental: fixed point maintained on one worker, inserts continued semi-naively, deletes by delete-and-rederive"
	}
	return fmt.Sprintf("Recursive %s %q %s max_iterations=%d (%s)", r.ID, r.Name, union, r.MaxIterations, mode)
}
