package planner

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// values plans a VALUES list. Rows of constants are evaluated now into a
// Constant (crossed with the frame's outer values when the level is
// correlated). A list with subqueries, or naming outer columns (`LATERAL
// (VALUES (t.a), (t.b))`, a VALUES in a correlated subquery), is planned
// as a union of one-row selects, each over the frame's outer values (or
// one empty row) to which its subqueries attach. The output starts with
// the frame's columns when frame is set.
func (p *Planner) values(lists []*pg.Node, depth int, frame *corrFrame) (*rel, error) {
	overRows := valuesNeedRows(lists, frame != nil)
	var rows [][]typed
	var bases []*rel
	width := -1
	for _, l := range lists {
		items := l.GetList().GetItems()
		if width >= 0 && len(items) != width {
			return nil, sqlerr.New(sqlerr.SyntaxError, "VALUES lists must all be the same length")
		}
		width = len(items)
		c := &exprCtx{p: p, scope: &scope{}, clause: "VALUES"}
		if overRows {
			base := constRel()
			if frame != nil {
				base = newRel(frame.d, frame.s)
			}
			bases = append(bases, base)
			c = &exprCtx{p: p, scope: base.scope, rel: base, clause: "VALUES", depth: depth}
		}
		xs, err := p.valuesRow(c, items)
		if err != nil {
			return nil, err
		}
		rows = append(rows, xs)
	}
	s, err := p.unifyValues(rows, width)
	if err != nil {
		return nil, err
	}
	if overRows {
		return valuesUnion(bases, rows, s, frame), nil
	}
	r, err := valuesConstant(rows, s)
	if err != nil {
		return nil, err
	}
	if frame != nil {
		r = frameRel(frame, r)
	}
	return r, nil
}

// valuesNeedRows reports whether a VALUES list has a subquery, or, in a
// correlated level (framed), names a column (necessarily an outer one).
func valuesNeedRows(lists []*pg.Node, framed bool) bool {
	for _, l := range lists {
		for _, it := range l.GetList().GetItems() {
			named := false
			if framed {
				walkColumnRefs(it.ProtoReflect(), func(*pg.ColumnRef) { named = true })
			}
			if named || hasSubLink(it) {
				return true
			}
		}
	}
	return false
}

// valuesRow lowers one row's items, typed by the INSERT's columns where it
// gives them.
func (p *Planner) valuesRow(c *exprCtx, items []*pg.Node) ([]typed, error) {
	xs := make([]typed, len(items))
	for i, it := range items {
		x, err := c.lowerTyped(it)
		if err != nil {
			return nil, err
		}
		if i < len(p.valuesHint) {
			if x, err = c.settle(x, p.valuesHint[i]); err != nil {
				return nil, err
			}
		}
		xs[i] = x
	}
	return xs, nil
}

// unifyValues gives each column one type across rows, as a UNION of the
// rows would, converting the rows' values to it, and returns the columns'
// scope (column1, column2, ...).
func (p *Planner) unifyValues(rows [][]typed, width int) (*scope, error) {
	c := &exprCtx{p: p, scope: &scope{}, clause: "VALUES"}
	s := &scope{}
	for col := 0; col < width; col++ {
		vals := make([]typed, len(rows))
		for i := range rows {
			vals[i] = rows[i][col]
		}
		vals, err := c.unify(vals)
		if err != nil {
			return nil, err
		}
		t := row.ColumnType{Type: row.TypeNull}
		for i := range rows {
			rows[i][col] = vals[i]
			if common, ok := numericCommon(t.Type, vals[i].t.Type); ok {
				t.Type = common
			}
			if t.Type == row.TypeNull {
				t.Type = vals[i].t.Type
			}
			t.Nullable = t.Nullable || vals[i].t.Nullable || vals[i].t.Type == row.TypeNull
		}
		if t.Type == row.TypeNull && col < len(p.valuesHint) {
			t.Type = p.valuesHint[col]
		}
		if t.Type == row.TypeNull {
			t.Type = row.TypeText
		}
		for i := range rows {
			if rows[i][col].t.Type != t.Type {
				e, err := coerceExpr(rows[i][col], t.Type, "VALUES")
				if err != nil {
					return nil, err
				}
				rows[i][col] = typed{e: e, t: t}
			}
		}
		s.cols = append(s.cols, column{name: fmt.Sprintf("column%d", col+1), typ: t, w: widthOf(vals), mod: commonMod(vals)})
	}
	return s, nil
}

// valuesConstant evaluates rows of constant expressions now; a row whose
// evaluation fails reports the error (as PostgreSQL does at execution).
func valuesConstant(rows [][]typed, s *scope) (*rel, error) {
	desc := row.RelationDesc{Names: s.names(), Types: s.types()}
	out := make([]plan.ConstantRow, 0, len(rows))
	for _, xs := range rows {
		datums := make([]row.Datum, len(xs))
		for i, x := range xs {
			if len(x.e.Columns()) > 0 {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "VALUES cannot reference columns")
			}
			d, err := x.e.Eval(nil)
			if err != nil {
				return nil, err
			}
			datums[i] = d
		}
		out = append(out, plan.ConstantRow{Datums: datums, Diff: 1})
	}
	return newRel(plan.NewConstant(desc, out...), s), nil
}

// valuesUnion projects each row's base (the frame's outer values or one
// empty row, with the row's subqueries attached) onto the frame's columns
// and the row's values, and unions the rows.
func valuesUnion(bases []*rel, rows [][]typed, s *scope, frame *corrFrame) *rel {
	k := 0
	out := s
	if frame != nil {
		k = frame.arity()
		out = frame.s.concat(s)
	}
	plans := make([]plan.Plan, len(rows))
	for i, base := range bases {
		es := make([]expr.Expr, 0, k+len(rows[i]))
		for c := range k {
			es = append(es, expr.Column(c))
		}
		for _, x := range rows[i] {
			es = append(es, x.e)
		}
		base.project(es, out)
		plans[i] = base.plan()
	}
	if len(plans) == 1 {
		return newRel(plans[0], out)
	}
	return newRel(plan.NewUnion(plans...), out)
}
