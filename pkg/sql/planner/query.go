package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Finishing is what is applied to a query's result after it is computed:
// ORDER BY, LIMIT and OFFSET, then a projection that drops columns only
// needed for ordering. It is the engine's plan.Finishing (the planner always
// sets Project), so the finishing the SQL layer applies, the cut it offers
// the replicas and the controller's merge are one type with one comparator.
type Finishing = plan.Finishing

// FastPath is a read answered by an existing index without building a
// dataflow: look up Keys in the index (or walk all of it when Keys is
// nil) and apply MFP to each row.
type FastPath struct {
	Index plan.GlobalID
	On    plan.GlobalID
	Keys  []row.Row
	MFP   expr.MFP
}

// Query is a planned SELECT.
type Query struct {
	// Plan computes the result's rows (before finishing) over Gets of
	// catalog ids.
	Plan plan.Plan
	// Desc describes Plan's output.
	Desc row.RelationDesc
	// Finishing orders, limits and projects the output. Columns after
	// finishing are Desc's columns Finishing.Project.
	Finishing Finishing
	// FastPath, when set, answers the query from an index instead.
	FastPath *FastPath
	// DependsOn are the catalog ids the plan reads.
	DependsOn []plan.GlobalID
	// Widths and Mods are the integer widths and type modifiers of Desc's
	// columns (nil: unknown), which describe and format the result as
	// Postgres would (int4, varchar(30), numeric(10,2)).
	Widths []IntWidth
	Mods   []TypeMod
}

// ColumnTypes returns the integer widths and type modifiers of the
// finished result's columns.
func (q *Query) ColumnTypes() ([]IntWidth, []TypeMod) {
	ws := make([]IntWidth, len(q.Finishing.Project))
	ms := make([]TypeMod, len(q.Finishing.Project))
	for i, c := range q.Finishing.Project {
		if c < len(q.Widths) {
			ws[i] = q.Widths[c]
		}
		if c < len(q.Mods) {
			ms[i] = q.Mods[c]
		}
	}
	return ws, ms
}

// setColumnTypes records r's columns' widths and modifiers in q.
func (q *Query) setColumnTypes(r *rel) *Query {
	q.Widths = make([]IntWidth, len(r.scope.cols))
	q.Mods = make([]TypeMod, len(r.scope.cols))
	for i, c := range r.scope.cols {
		q.Widths[i], q.Mods[i] = c.w, c.mod
	}
	return q
}

// Columns returns the names and types of the finished result.
func (q *Query) Columns() ([]string, []row.ColumnType) {
	names := make([]string, len(q.Finishing.Project))
	types := make([]row.ColumnType, len(q.Finishing.Project))
	for i, c := range q.Finishing.Project {
		names[i], types[i] = q.Desc.Names[c], q.Desc.Types[c]
	}
	return names, types
}

// maxViewDepth bounds view inlining (views of views), which also bounds
// planning work for hostile catalogs.
const maxViewDepth = 64

// PlanQuery plans a SELECT (or VALUES, or set operation) at the top level:
// ORDER BY / LIMIT / OFFSET become the finishing.
func (p *Planner) PlanQuery(sel *pg.SelectStmt) (*Query, error) {
	r, fin, err := p.planSelect(sel, 0)
	if err != nil {
		return nil, err
	}
	pl := p.finalPlan(r)
	if err := checkTemporal(pl); err != nil {
		return nil, err
	}
	q := &Query{Plan: pl, Desc: r.desc(), Finishing: fin, DependsOn: pl.DependsOn()}
	q.setColumnTypes(r)
	q.FastPath = p.fastPath(r)
	return q, nil
}

// PlanRelation plans a query whose ordering is irrelevant (a view, a
// subscribe, a subquery): ORDER BY only matters with LIMIT/OFFSET, and
// then becomes a TopK.
func (p *Planner) PlanRelation(sel *pg.SelectStmt) (*Query, error) {
	r, err := p.planSubquery(sel, 0)
	if err != nil {
		return nil, err
	}
	pl := p.finalPlan(r)
	if err := checkTemporal(pl); err != nil {
		return nil, err
	}
	d := r.desc()
	q := &Query{Plan: pl, Desc: d, Finishing: identityFinishing(d.Arity()), DependsOn: pl.DependsOn()}
	return q.setColumnTypes(r), nil
}

func identityFinishing(n int) Finishing {
	f := Finishing{Project: make([]int, n)}
	for i := range f.Project {
		f.Project[i] = i
	}
	return f
}

func (r *rel) desc() row.RelationDesc {
	return row.RelationDesc{Names: r.scope.names(), Types: r.scope.types()}
}

// planSubquery plans a query used as a relation, turning its finishing
// into plan nodes.
func (p *Planner) planSubquery(sel *pg.SelectStmt, depth int) (*rel, error) {
	var perKey []int // a correlated level's LIMIT applies per outer key
	if p.frame != nil {
		perKey = identityInts(p.frame.arity())
	}
	keepOrder := p.keepOrder // this level's only, not its subqueries'
	p.keepOrder = false
	r, fin, err := p.planSelect(sel, depth)
	if err != nil {
		return nil, err
	}
	if fin.Limit != nil || fin.Offset != 0 {
		r = newRel(plan.NewTopK(r.plan(), perKey, fin.Order, fin.Limit, fin.Offset), r.scope)
	}
	proj := fin.Project
	p.keptOrder = nil
	if keepOrder && len(fin.Order) > 0 {
		// The ORDER BY columns stay, after the output's, for the caller
		// to order by (ARRAY(subquery)).
		proj = slices.Clone(fin.Project)
		for _, o := range fin.Order {
			p.keptOrder = append(p.keptOrder, plan.ColumnOrder{Column: len(proj), Desc: o.Desc, NullsLast: o.NullsLast})
			proj = append(proj, o.Column)
		}
		fin.Project = proj
	}
	if len(fin.Project) != r.arity() || !fin.IsTrivial(len(fin.Project)) {
		es := make([]expr.Expr, len(fin.Project))
		s := &scope{}
		for i, c := range fin.Project {
			es[i] = expr.Column(c)
			s.cols = append(s.cols, r.scope.cols[c])
		}
		r.project(es, s)
	}
	return r, nil
}

// planSelect plans one query level and returns its finishing separately.
func (p *Planner) planSelect(sel *pg.SelectStmt, depth int) (*rel, Finishing, error) {
	// The frame of a correlated subquery is this level's only: its CTEs,
	// FROM items and nested subqueries are planned without it.
	frame := p.frame
	p.frame = nil
	if depth > maxViewDepth {
		return nil, Finishing{}, sqlerr.New(sqlerr.FeatureNotSupported, "query nesting too deep")
	}
	if sel == nil {
		return nil, Finishing{}, sqlerr.New(sqlerr.SyntaxError, "missing query")
	}
	var ctes cteFrame
	if sel.WithClause != nil {
		pop, err := p.pushCTEs(sel.WithClause, depth, frame)
		if err != nil {
			return nil, Finishing{}, err
		}
		defer pop()
		ctes = p.ctes[len(p.ctes)-1]
	}
	if len(sel.LockingClause) > 0 {
		return nil, Finishing{}, sqlerr.Unsupported("FOR UPDATE/SHARE")
	}
	if sel.IntoClause != nil {
		return nil, Finishing{}, sqlerr.Unsupported("SELECT INTO")
	}
	if sel.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		return nil, Finishing{}, sqlerr.Unsupported("FETCH ... WITH TIES")
	}
	var r *rel
	var outExprs int // columns of r that are the query's output
	var orderScope *orderInfo
	var err error
	switch {
	case sel.Op != pg.SetOperation_SETOP_NONE && sel.Op != pg.SetOperation_SET_OPERATION_UNDEFINED:
		if r, err = p.setOp(sel, depth, frame); err != nil {
			return nil, Finishing{}, err
		}
		outExprs = r.arity()
	case len(sel.ValuesLists) > 0:
		if r, err = p.values(sel.ValuesLists, depth, frame); err != nil {
			return nil, Finishing{}, err
		}
		outExprs = r.arity()
	default:
		if r, orderScope, outExprs, err = p.selectCore(sel, depth, frame); err != nil {
			return nil, Finishing{}, err
		}
	}
	var fin Finishing
	if frame != nil && orderScope == nil {
		fin, err = p.frameFinishing(sel, r, frame.arity())
	} else {
		fin, err = p.finishing(sel, r, outExprs, orderScope)
	}
	if err != nil {
		return nil, Finishing{}, err
	}
	p.bindCTEs(r, ctes)
	return r, fin, nil
}

// constRel is the relation with one empty row: the input of a SELECT
// without FROM.
func constRel() *rel {
	return newRel(plan.NewConstant(row.RelationDesc{}, plan.ConstantRow{Diff: 1}), &scope{})
}

// coerceExpr converts x to type t where an implicit conversion exists
// (NULL to anything, int64 to float64).
func coerceExpr(x typed, t row.Type, what string) (expr.Expr, error) {
	switch {
	case x.t.Type == t:
		return x.e, nil
	case x.t.Type == row.TypeNull:
		return expr.Cast(x.e, t), nil
	case x.t.Type.IsNumeric() && t.IsNumeric():
		if common, ok := numericCommon(x.t.Type, t); ok && common == t {
			return expr.Cast(x.e, t), nil
		}
	}
	return expr.Expr{}, sqlerr.Errorf(sqlerr.DatatypeMismatch, "%s types %s and %s cannot be matched",
		what, x.t.Type.PGName(), t.PGName())
}
