package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// IndexKeys lowers an index's key expressions over a relation's columns
// and returns them with the words its default name is made of.
func (p *Planner) IndexKeys(desc row.RelationDesc, nodes []*pg.Node) ([]expr.Expr, []string, error) {
	c := &exprCtx{p: p, scope: descScope(desc, nil), clause: "index expressions"}
	keys := make([]expr.Expr, len(nodes))
	names := make([]string, len(nodes))
	for i, n := range nodes {
		x, err := c.lower(n)
		if err != nil {
			return nil, nil, err
		}
		if x.t.Type == row.TypeNull {
			return nil, nil, sqlerr.New(sqlerr.DatatypeMismatch, "index key expressions must have a type")
		}
		if err := RefuseJSONIndexKey(x.t.Type); err != nil {
			return nil, nil, err
		}
		keys[i] = x.e
		names[i] = deriveName(n)
		if names[i] == "?column?" {
			names[i] = "expr"
		}
	}
	return keys, names, nil
}

// PlanInsert plans the rows an INSERT adds to a table with description
// desc, declared integer widths widths (nil: all bigint) and type
// modifiers mods (nil: none; varchar(n), char(n), numeric(p,s)): the source
// query's columns are matched to the named columns (all columns when cols
// is empty), converted to the column types (range-checked for smallint
// and integer columns), and the other columns get their default
// (defaults[i], when defaults is not nil) or NULL. The returned plan
// produces whole table rows.
func (p *Planner) PlanInsert(desc row.RelationDesc, widths []IntWidth, mods []TypeMod, defaults []expr.Expr, cols []string, sel *pg.SelectStmt) (*Query, error) {
	targets := make([]int, 0, desc.Arity())
	if len(cols) == 0 {
		for i := range desc.Types {
			targets = append(targets, i)
		}
	}
	for _, c := range cols {
		i := -1
		for j, n := range desc.Names {
			if n == c {
				i = j
			}
		}
		if i < 0 {
			return nil, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q of relation does not exist", c)
		}
		for _, t := range targets {
			if t == i {
				return nil, sqlerr.Errorf(sqlerr.DuplicateColumn, "column %q specified more than once", c)
			}
		}
		targets = append(targets, i)
	}
	if len(sel.ValuesLists) > 0 {
		hint := make([]row.Type, len(targets))
		for k, t := range targets {
			hint[k] = desc.Types[t].Type
		}
		p.valuesHint = hint
		if s, ok := srfValues(sel); ok {
			sel, p.valuesHint, p.targetHint = s, nil, targetHint{list: s.TargetList, types: hint}
		}
	}
	r, err := p.planSubquery(sel, 0)
	p.valuesHint, p.targetHint = nil, targetHint{}
	if err != nil {
		return nil, err
	}
	if r.arity() > len(targets) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns")
	}
	if r.arity() < len(targets) && len(cols) > 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
	}
	es := make([]expr.Expr, desc.Arity())
	s := withTypeMods(descScope(desc, widths), mods)
	for i := range es {
		es[i] = expr.TypedNull(desc.Types[i].Type)
		if defaults != nil {
			es[i] = defaults[i]
		}
	}
	for k := 0; k < r.arity(); k++ {
		t := targets[k]
		x := typed{e: expr.Column(k), t: r.scope.cols[k].typ, w: r.scope.cols[k].w, mod: r.scope.cols[k].mod}
		e, err := assignExpr(x, desc.Types[t].Type, s.cols[t].w, s.cols[t].mod, desc.Name(t))
		if err != nil {
			return nil, err
		}
		es[t] = e
	}
	r.project(es, s)
	pl := p.finalPlan(r)
	return &Query{Plan: pl, Desc: desc, Finishing: identityFinishing(desc.Arity()), DependsOn: pl.DependsOn()}, nil
}

// assignExpr converts a value to a column's type (integer width w, type
// modifier m) as assignment does: a value wider than a smallint or
// integer column is range-checked, as Postgres' assignment cast does; a
// value too long for a varchar(n) or char(n) column is 22001, a numeric
// rounds to a numeric(p,s) column's scale and fails with 22003 when too
// wide.
func assignExpr(x typed, t row.Type, w IntWidth, m TypeMod, col string) (expr.Expr, error) {
	if t == row.TypeInt64 && w != 0 &&
		(x.t.Type == row.TypeFloat64 || x.t.Type == row.TypeNumeric || x.t.Type == row.TypeInt64 && (x.w == 0 || x.w > w)) {
		return expr.Call(intFunc(w), x.e), nil
	}
	if t.IsArray() {
		e, err := assignArray(x, t, w, col)
		if err != nil || charMod(m).Kind == ModNone {
			return e, err
		}
		return convert(typed{e: e, t: row.ColumnType{Type: t}, mod: x.mod}, m, false).e, nil
	}
	if x.t.Type == t {
		return convert(x, m, false).e, nil
	}
	if x.t.Type == row.TypeNull || (x.t.Type.IsNumeric() && t.IsNumeric()) {
		return convert(typed{e: expr.Cast(x.e, t), t: row.ColumnType{Type: t}}, m, false).e, nil
	}
	return expr.Expr{}, sqlerr.Errorf(sqlerr.DatatypeMismatch, "column %q is of type %s but expression is of type %s",
		col, t.PGName(), x.t.Type.PGName())
}

// PlanUpdate plans an UPDATE of a table: the result has the old row's
// columns followed by the new row's, for each row the WHERE selects.
func (p *Planner) PlanUpdate(table Relation, alias string, set []*pg.Node, where *pg.Node) (*Query, error) {
	r, s, err := p.writeTarget(table, alias, where)
	if err != nil {
		return nil, err
	}
	es := make([]expr.Expr, 0, 2*table.Desc.Arity())
	for i := range table.Desc.Types {
		es = append(es, expr.Column(i))
	}
	// Subqueries in SET add columns to r (its own copy of the scope); the
	// projection below keeps only the old and new rows.
	r.scope = &scope{cols: append([]column(nil), s.cols...)}
	c := &exprCtx{p: p, scope: r.scope, rel: r, clause: "UPDATE"}
	newCols, err := c.assignments(table, s, set, "UPDATE ... SET")
	if err != nil {
		return nil, err
	}
	es = append(es, newCols...)
	out := &scope{cols: append(append([]column(nil), s.cols...), s.cols...)}
	r.project(es, out)
	pl := p.finalPlan(r)
	d := r.desc()
	return &Query{Plan: pl, Desc: d, Finishing: identityFinishing(d.Arity()), DependsOn: pl.DependsOn()}, nil
}

// PlanDelete plans the rows a DELETE removes.
func (p *Planner) PlanDelete(table Relation, alias string, where *pg.Node) (*Query, error) {
	r, _, err := p.writeTarget(table, alias, where)
	if err != nil {
		return nil, err
	}
	pl := p.finalPlan(r)
	d := r.desc()
	return &Query{Plan: pl, Desc: d, Finishing: identityFinishing(d.Arity()), DependsOn: pl.DependsOn()}, nil
}

func (p *Planner) whereClause(r *rel, where *pg.Node) error {
	if where == nil {
		return nil
	}
	// Subqueries add columns to the rel while the condition is lowered:
	// give it its own copy of the scope, and project back to the table's
	// columns afterwards.
	orig, n := r.scope, r.arity()
	r.scope = &scope{cols: append([]column(nil), orig.cols...)}
	c := &exprCtx{p: p, scope: r.scope, rel: r, clause: "WHERE"}
	x, err := c.lowerAs(where, row.TypeBool)
	if err != nil {
		return err
	}
	if err := wantBool(x, "WHERE"); err != nil {
		return err
	}
	r.filter(x.e)
	r.project(columns(n), orig)
	return nil
}

// assignments lowers the SET list of an UPDATE or ON CONFLICT DO UPDATE:
// the new row of table, each column its old value (a column of cols)
// unless set assigns it, converted to the column's type, width and
// modifier. form names the statement in refusals.
func (c *exprCtx) assignments(table Relation, cols *scope, set []*pg.Node, form string) ([]expr.Expr, error) {
	out := make([]expr.Expr, table.Desc.Arity())
	for i := range out {
		out[i] = expr.Column(i)
	}
	assigned := map[int]bool{}
	for _, n := range set {
		rt := n.GetResTarget()
		if rt == nil || len(rt.Indirection) > 0 {
			return nil, sqlerr.Unsupported("this form of " + form)
		}
		col, err := cols.resolve("", rt.Name)
		if err != nil {
			return nil, err
		}
		if assigned[col] {
			return nil, sqlerr.Errorf(sqlerr.DuplicateColumn, "multiple assignments to same column %q", rt.Name)
		}
		assigned[col] = true
		x, err := c.lowerAs(rt.Val, table.Desc.Types[col].Type)
		if err != nil {
			return nil, err
		}
		if out[col], err = assignExpr(x, table.Desc.Types[col].Type, cols.cols[col].w, cols.cols[col].mod, rt.Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// writeTarget scans the table an UPDATE or DELETE writes, its columns
// named by alias (the table's name when empty), filtered by where. It
// returns the relation and the table's own scope.
func (p *Planner) writeTarget(table Relation, alias string, where *pg.Node) (*rel, *scope, error) {
	if alias == "" {
		alias = table.Name
	}
	s := guarded(withTypeMods(descScope(table.Desc, table.IntWidths), table.TypeMods), table.ColumnGuard)
	for i := range s.cols {
		s.cols[i].table = alias
	}
	r := newRel(plan.NewGet(table.ID), s)
	if err := p.whereClause(r, where); err != nil {
		return nil, nil, err
	}
	return r, s, nil
}
