package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Expressions a table's declaration and a write statement evaluate row by
// row in the SQL layer: column defaults, CHECK constraints, RETURNING
// lists and ON CONFLICT DO UPDATE assignments. They are lowered like
// query expressions but evaluated with expr.Eval over one row, so
// subqueries are refused (exprCtx without a rel).

// ColumnDefault lowers column col's DEFAULT expression, which may not
// reference columns, converted to the column's type (integer width and
// type modifier: mods may be nil) as an assignment is.
func (p *Planner) ColumnDefault(desc row.RelationDesc, widths []IntWidth, mods []TypeMod, col int, n *pg.Node) (expr.Expr, error) {
	c := &exprCtx{p: p, scope: &scope{}, clause: "DEFAULT expressions"}
	x, err := c.lowerAs(n, desc.Types[col].Type)
	if err != nil {
		return expr.Expr{}, err
	}
	s := withTypeMods(descScope(desc, widths), mods)
	return assignExpr(x, desc.Types[col].Type, s.cols[col].w, s.cols[col].mod, desc.Name(col))
}

// CheckExpr lowers a CHECK constraint's condition over a table's row.
func (p *Planner) CheckExpr(desc row.RelationDesc, widths []IntWidth, mods []TypeMod, n *pg.Node) (expr.Expr, error) {
	c := &exprCtx{p: p, scope: withTypeMods(descScope(desc, widths), mods), clause: "check constraints"}
	x, err := c.lowerAs(n, row.TypeBool)
	if err != nil {
		return expr.Expr{}, err
	}
	if err := wantBool(x, "CHECK"); err != nil {
		return expr.Expr{}, err
	}
	return x.e, nil
}

// Returning is a lowered RETURNING list: expressions over a written row.
type Returning struct {
	Exprs []expr.Expr
	Names []string
	Types []row.ColumnType
	// Widths and Mods are the columns' integer widths and type modifiers
	// (what RowDescription and the text format need).
	Widths []IntWidth
	Mods   []TypeMod
}

// ReturningList lowers a RETURNING list over a table's row; alias (or
// the table's name) qualifies its columns, and * expands to all of them.
func (p *Planner) ReturningList(table Relation, alias string, targets []*pg.Node) (*Returning, error) {
	if alias == "" {
		alias = table.Name
	}
	s := guarded(withTypeMods(descScope(table.Desc, table.IntWidths), table.TypeMods), table.ColumnGuard)
	for i := range s.cols {
		s.cols[i].table = alias
	}
	c := &exprCtx{p: p, scope: s, clause: "RETURNING"}
	out := &Returning{}
	for _, n := range targets {
		rt := n.GetResTarget()
		if rt == nil {
			return nil, sqlerr.Unsupported("this form of RETURNING")
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && isStar(cr) {
			for i, col := range s.cols {
				if err := s.use(i); err != nil {
					return nil, err
				}
				out.Exprs = append(out.Exprs, expr.Column(i))
				out.Names = append(out.Names, col.name)
				out.Types = append(out.Types, col.typ)
				out.Widths = append(out.Widths, col.w)
				out.Mods = append(out.Mods, col.mod)
			}
			continue
		}
		name, x, err := c.namedValue(rt)
		if err != nil {
			return nil, err
		}
		out.Exprs = append(out.Exprs, x.e)
		out.Names = append(out.Names, name)
		out.Types = append(out.Types, x.t)
		out.Widths = append(out.Widths, x.w)
		out.Mods = append(out.Mods, x.mod)
	}
	return out, nil
}

// isStar reports whether a column reference is * or alias.*.
func isStar(cr *pg.ColumnRef) bool {
	if len(cr.Fields) == 0 {
		return false
	}
	return cr.Fields[len(cr.Fields)-1].GetAStar() != nil
}

// ConflictUpdate is a lowered ON CONFLICT DO UPDATE: expressions over the
// existing row (columns 0..n-1) followed by the proposed row (n..2n-1,
// named excluded).
type ConflictUpdate struct {
	// New are the updated row's columns.
	New []expr.Expr
	// Where, when set, must be true for the update to happen.
	Where *expr.Expr
}

// PlanConflictUpdate lowers the SET list and WHERE of ON CONFLICT DO
// UPDATE over the existing row (named alias or the table's name) and the
// row proposed for insertion (named excluded).
func (p *Planner) PlanConflictUpdate(table Relation, alias string, set []*pg.Node, where *pg.Node) (*ConflictUpdate, error) {
	if alias == "" {
		alias = table.Name
	}
	old := guarded(withTypeMods(descScope(table.Desc, table.IntWidths), table.TypeMods), table.ColumnGuard)
	for i := range old.cols {
		old.cols[i].table = alias
	}
	ex := guarded(withTypeMods(descScope(table.Desc, table.IntWidths), table.TypeMods), table.ColumnGuard)
	for i := range ex.cols {
		ex.cols[i].table = "excluded"
	}
	s := old.concat(ex)
	c := &exprCtx{p: p, scope: s, clause: "ON CONFLICT DO UPDATE"}
	newRow, err := c.assignments(table, old, set, "ON CONFLICT DO UPDATE SET")
	if err != nil {
		return nil, err
	}
	out := &ConflictUpdate{New: newRow}
	if where != nil {
		x, err := c.lowerAs(where, row.TypeBool)
		if err != nil {
			return nil, err
		}
		if err := wantBool(x, "WHERE"); err != nil {
			return nil, err
		}
		out.Where = &x.e
	}
	return out, nil
}
