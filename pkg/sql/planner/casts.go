package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

func (c *exprCtx) typeCast(tc *pg.TypeCast) (typed, error) {
	to, prec, err := typeAndPrecision(tc.TypeName)
	if err != nil {
		return typed{}, err
	}
	mod, err := TypeModFromName(tc.TypeName)
	if err != nil {
		return typed{}, err
	}
	x, err := c.castTyped(tc, to)
	if err != nil || prec >= 0 {
		// A date/time precision (timestamp(3)) rounds the value.
		return c.withPrecision(x, err, prec)
	}
	if to == row.TypeInt64 {
		return x, nil
	}
	if mod.Kind == ModNone {
		x.mod = TypeMod{}
		if to == row.TypeNumeric {
			// ::numeric keeps the value's display scale where known.
			if s, ok := displayScale(x); ok {
				x.mod = TypeMod{Kind: ModNumeric, Scale: s}
			}
		}
		return x, nil
	}
	return c.check2(convert(x, mod, true))
}

// timestamptzArrayCast lowers a cast between timestamptz[] and text,
// text[], timestamp[] or date[] to tz_array_cast in the session's time
// zone (ok false: not such a cast). Other casts to or from timestamptz[]
// are refused with 42846, as PostgreSQL has no such cast.
func (c *exprCtx) timestamptzArrayCast(x typed, to row.Type) (typed, bool, error) {
	from := x.t.Type
	if x.untyped() || from == to || from == row.TypeNull || (from != row.TypeTimestampTZArray && to != row.TypeTimestampTZArray) {
		return typed{}, false, nil
	}
	if !expr.TZArrayCastOK(from, to) {
		return typed{}, true, sqlerr.Errorf("42846", "cannot cast type %s to %s", from.PGName(), to.PGName())
	}
	target, err := expr.TZArrayTarget(to)
	if err != nil {
		return typed{}, true, err
	}
	y, err := c.check(expr.Call(expr.FuncTZArrayCast, x.e, c.zone(), target))
	return y, true, err
}

// check2 type-checks x's expression, keeping its width and modifier.
func (c *exprCtx) check2(x typed) (typed, error) {
	y, err := c.check(x.e)
	y.w, y.mod = x.w, x.mod
	return y, err
}

// castTyped lowers the cast of tc's argument to row type to, without
// the type's modifier or date/time precision.
func (c *exprCtx) castTyped(tc *pg.TypeCast, to row.Type) (typed, error) {
	if a := tc.Arg.GetAArrayExpr(); a != nil && len(a.Elements) == 0 && to.IsArray() {
		y, err := emptyArray(to)
		y.w = IntWidthFromName(tc.TypeName)
		return y, err
	}
	x, err := c.lowerTyped(tc.Arg)
	if err != nil {
		return typed{}, err
	}
	if to == row.TypeText {
		x = padCharArray(x)
	}
	if y, ok, err := c.timestamptzArrayCast(x, to); ok {
		return y, err
	}
	if to.IsArray() {
		return c.arrayCast(tc, x, to)
	}
	var w IntWidth
	if to == row.TypeInt64 {
		w = IntWidthFromName(tc.TypeName)
	}
	if x.untyped() {
		// 'text'::type is a typed literal, not a run-time cast.
		if x.lit != nil && w != 0 {
			d, err := expr.Call(intFunc(w), expr.Literal(row.Text(*x.lit))).Eval(nil)
			if err != nil {
				return typed{}, err
			}
			return typed{e: expr.Literal(d), t: row.ColumnType{Type: row.TypeInt64}, w: w}, nil
		}
		y, err := c.settle(x, to)
		if err != nil {
			return typed{}, err
		}
		return c.narrow(y, w)
	}
	if w != 0 {
		return c.narrowCast(x, w)
	}
	if x.t.Type == to {
		x.w = 0 // ::bigint widens
		return x, nil
	}
	if to == row.TypeNumeric && x.t.Type == row.TypeInt64 {
		y, err := c.check(expr.Cast(x.e, to))
		y.mod = TypeMod{Kind: ModNumeric}
		return y, err
	}
	if x.t.Type == row.TypeBool && to == row.TypeText {
		// Postgres' boolean-to-text cast spells the words out, unlike the
		// t/f of boolean output.
		return c.check(expr.If(expr.IsNull(x.e), expr.TypedNull(row.TypeText),
			expr.If(x.e, expr.Literal(row.Text("true")), expr.Literal(row.Text("false")))))
	}
	if x.t.Type == row.TypeNumeric && to == row.TypeText {
		// numeric_out prints the display scale: 1.5 in a numeric(6,2)
		// column is '1.50'.
		return c.check(numericAsText(x))
	}
	if y, ok, err := c.temporalCast(x, to); ok {
		return y, err
	}
	if !expr.CanCast(x.t.Type, to) {
		return typed{}, sqlerr.Errorf("42846", "cannot cast type %s to %s", x.t.Type.PGName(), to.PGName())
	}
	return c.check(expr.Cast(x.e, to))
}

// narrowCast lowers CAST(x AS smallint/integer), checking the range where
// x's type is wider.
func (c *exprCtx) narrowCast(x typed, w IntWidth) (typed, error) {
	switch x.t.Type {
	case row.TypeInt64:
		if x.w != 0 && x.w <= w {
			x.w = w
			return x, nil
		}
		return c.narrow(x, w)
	case row.TypeFloat64, row.TypeText, row.TypeNumeric:
		y, err := c.check(expr.Call(intFunc(w), x.e))
		y.w = w
		return y, err
	case row.TypeNull:
		y, err := c.check(expr.Cast(x.e, row.TypeInt64))
		y.w = w
		return y, err
	case row.TypeJSONB:
		// A jsonb number, rounded as numeric to integer is.
		y, err := c.check(expr.Call(intFunc(w), expr.Cast(x.e, row.TypeNumeric)))
		y.w = w
		return y, err
	case row.TypeBool:
		// Postgres casts boolean to integer but not to smallint.
		if w == IntWidth4 {
			y, err := c.check(expr.Cast(x.e, row.TypeInt64))
			y.w = w
			return y, err
		}
	}
	return typed{}, sqlerr.Errorf("42846", "cannot cast type %s to %s", x.t.Type.PGName(), intWidthName(w))
}
