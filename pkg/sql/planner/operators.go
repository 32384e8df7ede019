package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// binaryFunc maps a binary operator to its engine function.
func binaryFunc(op string) (expr.Func, bool) {
	switch op {
	case "+":
		return expr.FuncAdd, true
	case "-":
		return expr.FuncSub, true
	case "*":
		return expr.FuncMul, true
	case "/":
		return expr.FuncDiv, true
	case "%":
		return expr.FuncMod, true
	case "=":
		return expr.FuncEq, true
	case "<>", "!=":
		return expr.FuncNeq, true
	case "<":
		return expr.FuncLt, true
	case "<=":
		return expr.FuncLte, true
	case ">":
		return expr.FuncGt, true
	case ">=":
		return expr.FuncGte, true
	case "||":
		return expr.FuncConcatOp, true
	}
	return expr.FuncInvalid, false
}

func opName(names []*pg.Node) string {
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1].GetString_().GetSval()
}

// binary lowers two operands, settling an untyped one to the other's type.
func (c *exprCtx) binary(l, r *pg.Node) (typed, typed, error) {
	a, b, err := c.lowerPair(l, r)
	if err != nil {
		return typed{}, typed{}, err
	}
	return c.unifyOperands(a, b)
}

// unifyOperands settles two lowered operands to a common type: untyped
// ones to the other's type, integers with numerics to numeric (and
// either with float8 to float8), an untyped literal next to char(n) to
// char, and mixed date/timestamp/timestamptz along that order.
func (c *exprCtx) unifyOperands(a, b typed) (typed, typed, error) {
	xs, err := c.unify([]typed{a, b})
	if err != nil {
		return typed{}, typed{}, err
	}
	xs = promoteNumeric(xs)
	// An untyped literal compared with char(n) is char too: its trailing
	// spaces do not count (char values are stored without them).
	for i, u := range []typed{a, b} {
		if o := xs[1-i]; u.untyped() && o.mod.Kind == ModBpchar && (xs[i].t.Type == row.TypeText || xs[i].t.Type == row.TypeTextArray) {
			xs[i] = convert(xs[i], TypeMod{Kind: ModBpchar}, true)
		}
	}
	return c.promoteDatetimes(xs[0], xs[1])
}

func (c *exprCtx) aexpr(a *pg.A_Expr) (typed, error) {
	if err := rowComparison(a); err != nil {
		if !c.p.rows.fields[a] {
			return typed{}, err
		}
		// Rows that are fields of compared rows compare as records.
		if err := c.checkRecordFields(a); err != nil {
			return typed{}, err
		}
	}
	op := opName(a.Name)
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if a.Lexpr == nil {
			x, err := c.lowerAs(a.Rexpr, row.TypeInt64)
			if err != nil {
				return typed{}, err
			}
			switch op {
			case "-":
				y, err := c.check(expr.Call(expr.FuncNeg, x.e))
				if err != nil {
					return typed{}, err
				}
				y.mod = x.mod
				return c.narrow(y, x.w)
			case "+":
				return x, nil
			}
			return typed{}, sqlerr.Unsupported("prefix operator " + op)
		}
		switch op {
		case "~", "!~", "~*", "!~*":
			return c.regexMatch(op, a.Lexpr, a.Rexpr)
		}
		if op == "@>" || op == "<@" || op == "&&" {
			x, y, err := c.lowerPair(a.Lexpr, a.Rexpr)
			if err != nil {
				return typed{}, err
			}
			return c.containment(op, x, y)
		}
		if y, ok, err := c.jsonbOp(op, a.Lexpr, a.Rexpr); ok {
			return y, err
		}
		f, ok := binaryFunc(op)
		if !ok {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s", op)
		}
		if op == "||" {
			x, y, err := c.lowerPair(a.Lexpr, a.Rexpr)
			if err != nil {
				return typed{}, err
			}
			if x.t.Type == row.TypeJSONB && (y.t.Type == row.TypeJSONB || y.untyped()) || y.t.Type == row.TypeJSONB && x.untyped() {
				return c.jsonbConcat(x, y)
			}
			if x.t.Type.IsArray() || y.t.Type.IsArray() {
				return c.arrayConcat("||", x, y)
			}
			// Untyped operands of || are text whatever the other side is.
			if x, err = c.settle(x, row.TypeText); err != nil {
				return typed{}, err
			}
			if y, err = c.settle(y, row.TypeText); err != nil {
				return typed{}, err
			}
			// A timestamptz operand prints in the session's zone.
			if x.t.Type == row.TypeTimestampTZ {
				x, err = c.castTo(x, row.TypeText)
			}
			if err == nil && y.t.Type == row.TypeTimestampTZ {
				y, err = c.castTo(y, row.TypeText)
			}
			if err != nil {
				return typed{}, err
			}
			return c.check(expr.Call(f, x.e, y.e))
		}
		x, y, err := c.binaryOp(op, a.Lexpr, a.Rexpr)
		if err != nil {
			return typed{}, err
		}
		if z, ok, err := c.temporalArith(f, x, y); ok {
			return z, err
		}
		if f == expr.FuncSub && x.t.Type == row.TypeJSONB {
			return c.check(expr.Call(expr.FuncJSONDelete, x.e, y.e))
		}
		z, err := c.check(expr.Call(f, x.e, y.e))
		if err == nil && z.t.Type == row.TypeNumeric {
			z.mod = scaleMod(f, x, y)
		}
		if err != nil || !isArithmetic(f) || x.t.Type != row.TypeInt64 || y.t.Type != row.TypeInt64 {
			return z, err
		}
		return c.narrow(z, wider(x.w, y.w))
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		if a.Rexpr.GetFuncCall() != nil {
			return typed{}, sqlerr.Unsupported("LIKE ... ESCAPE")
		}
		x, y, err := c.binary(a.Lexpr, a.Rexpr)
		if err != nil {
			return typed{}, err
		}
		f := expr.FuncLike
		if a.Kind == pg.A_Expr_Kind_AEXPR_ILIKE {
			f = expr.FuncILike
		}
		e := expr.Call(f, x.e, y.e)
		if strings.HasPrefix(op, "!") {
			e = expr.Not(e)
		}
		return c.check(e)
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		x, y, err := c.binary(a.Lexpr, a.Rexpr)
		if err != nil {
			return typed{}, err
		}
		z, err := c.check(expr.NullIf(x.e, y.e))
		z.mod = x.mod
		return withWidth(z, err, x.w)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		x, y, err := c.binary(a.Lexpr, a.Rexpr)
		if err != nil {
			return typed{}, err
		}
		// a IS DISTINCT FROM b: NULLs compare as equal to each other and
		// unequal to any value, and the result is never NULL.
		distinct := expr.If(expr.IsNull(x.e), expr.Not(expr.IsNull(y.e)),
			expr.If(expr.IsNull(y.e), expr.Literal(row.True), expr.Neq(x.e, y.e)))
		if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT {
			distinct = expr.Not(distinct)
		}
		return c.check(distinct)
	case pg.A_Expr_Kind_AEXPR_IN:
		list := a.Rexpr.GetList()
		if list == nil {
			return typed{}, sqlerr.Unsupported("IN with a subquery")
		}
		xs, err := c.lowerList(append([]*pg.Node{a.Lexpr}, list.Items...))
		if err != nil {
			return typed{}, err
		}
		e := expr.In(xs[0].e, exprs(xs[1:])...)
		if op == "<>" {
			e = expr.Not(e)
		}
		return c.check(e)
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		list := a.Rexpr.GetList()
		if list == nil || len(list.Items) != 2 {
			return typed{}, sqlerr.New(sqlerr.SyntaxError, "malformed BETWEEN")
		}
		xs, err := c.lowerList([]*pg.Node{a.Lexpr, list.Items[0], list.Items[1]})
		if err != nil {
			return typed{}, err
		}
		e := expr.Between(xs[0].e, xs[1].e, xs[2].e)
		if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			e = expr.Not(e)
		}
		return c.check(e)
	}
	if ok, all := anyAllKind(a.Kind); ok {
		return c.anyAll(op, all, a.Lexpr, a.Rexpr)
	}
	return typed{}, sqlerr.Unsupported("operator form " + strings.TrimPrefix(a.Kind.String(), "AEXPR_"))
}

// lowerPair lowers a binary operator's two operands, left first.
func (c *exprCtx) lowerPair(l, r *pg.Node) (typed, typed, error) {
	a, err := c.lowerTyped(l)
	if err != nil {
		return typed{}, typed{}, err
	}
	b, err := c.lowerTyped(r)
	if err != nil {
		return typed{}, typed{}, err
	}
	return a, b, nil
}
