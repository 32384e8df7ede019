package planner

import (
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// scalarFunc maps a SQL function name to its engine function.
func scalarFunc(name string) (expr.Func, bool) {
	switch name {
	case "abs":
		return expr.FuncAbs, true
	case "round":
		return expr.FuncRound, true
	case "floor":
		return expr.FuncFloor, true
	case "ceil", "ceiling":
		return expr.FuncCeil, true
	case "sqrt":
		return expr.FuncSqrt, true
	case "power", "pow":
		return expr.FuncPower, true
	case "trunc":
		return expr.FuncTrunc, true
	case "sign":
		return expr.FuncSign, true
	case "div":
		return expr.FuncDivTrunc, true
	case "mod":
		return expr.FuncMod, true
	case "exp":
		return expr.FuncExp, true
	case "ln":
		return expr.FuncLn, true
	case "log", "log10":
		return expr.FuncLog10, true
	case "trim_scale":
		return expr.FuncTrimScale, true
	case "lower":
		return expr.FuncLower, true
	case "upper":
		return expr.FuncUpper, true
	case "length", "char_length", "character_length":
		return expr.FuncLength, true
	case "concat":
		return expr.FuncConcat, true
	case "btrim":
		return expr.FuncTrim, true
	case "ltrim":
		return expr.FuncLTrim, true
	case "rtrim":
		return expr.FuncRTrim, true
	case "replace":
		return expr.FuncReplace, true
	case "substr", "substring":
		return expr.FuncSubstr, true
	case "greatest":
		return expr.FuncGreatest, true
	case "least":
		return expr.FuncLeast, true
	case "split_part":
		return expr.FuncSplitPart, true
	case "concat_ws":
		return expr.FuncConcatWS, true
	case "lpad":
		return expr.FuncLPad, true
	case "rpad":
		return expr.FuncRPad, true
	case "left":
		return expr.FuncLeft, true
	case "right":
		return expr.FuncRight, true
	case "initcap":
		return expr.FuncInitcap, true
	case "md5":
		return expr.FuncMD5, true
	case "format":
		return expr.FuncFormat, true
	case "regexp_replace":
		return expr.FuncRegexpReplace, true
	case "regexp_like":
		return expr.FuncRegexpLike, true
	case "regexp_match":
		return expr.FuncRegexpMatch, true
	case "repeat":
		return expr.FuncRepeat, true
	case "reverse":
		return expr.FuncReverse, true
	case "translate":
		return expr.FuncTranslate, true
	case "ascii":
		return expr.FuncASCII, true
	case "chr":
		return expr.FuncChr, true
	case "starts_with":
		return expr.FuncStartsWith, true
	case "cbrt":
		return expr.FuncCbrt, true
	case "degrees":
		return expr.FuncDegrees, true
	case "radians":
		return expr.FuncRadians, true
	case "pi":
		return expr.FuncPi, true
	}
	return expr.FuncInvalid, false
}

// isAggregate reports whether name is an aggregate function the planner
// knows.
func isAggregate(name string) bool {
	switch name {
	case "count", "sum", "min", "max", "avg", "bool_and", "bool_or", "every", "string_agg",
		"stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop", "jsonb_agg", "jsonb_object_agg",
		"array_agg", "json_agg", "json_object_agg":
		return true
	}
	return false
}

func funcName(fc *pg.FuncCall) (string, error) {
	var parts []string
	for _, n := range fc.Funcname {
		parts = append(parts, n.GetString_().GetSval())
	}
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	if len(parts) != 1 {
		return "", sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s does not exist", strings.Join(parts, "."))
	}
	return strings.ToLower(parts[0]), nil
}

func (c *exprCtx) funcCall(fc *pg.FuncCall) (typed, error) {
	name, err := funcName(fc)
	if err != nil {
		return typed{}, err
	}
	if fc.Over != nil {
		return c.windowCall(fc, name)
	}
	if isAggregate(name) {
		// Aggregates reaching here are not under a GROUP BY context that
		// could place them (the aggregation scope intercepts them first).
		return typed{}, sqlerr.Errorf(sqlerr.GroupingError, "aggregate functions are not allowed in %s", c.clauseName())
	}
	if fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0 {
		return typed{}, sqlerr.Errorf(sqlerr.WrongObjectType, "%s is not an aggregate function", name)
	}
	if isSetReturning(name) {
		return c.setReturningCall(fc, name)
	}
	if returnsRecord(name) {
		// Only FROM gives a record function its column definition list.
		return typed{}, sqlerr.New(sqlerr.FeatureNotSupported, "function returning record called in context that cannot accept type record")
	}
	switch name {
	case "version":
		return c.sessionText(len(fc.Args), "PostgreSQL "+c.p.Session.ServerVersion+" on Tandem")
	case "current_database":
		return c.sessionText(len(fc.Args), c.p.Session.Database)
	case "current_schema":
		return c.sessionText(len(fc.Args), "public")
	case "current_user":
		return c.sessionText(len(fc.Args), c.p.Session.User)
	case "session_user":
		return c.sessionText(len(fc.Args), c.p.Session.sessionUser())
	case "pg_get_userbyid":
		// The SQL layer names the oids of roles and of item owners; any
		// other oid reads as the session's user.
		if len(fc.Args) != 1 {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s takes 1 argument", name)
		}
		x, err := c.lowerAs(fc.Args[0], row.TypeInt64)
		if err != nil {
			return typed{}, err
		}
		name := expr.Literal(row.Text(c.p.Session.User))
		oids := make([]int64, 0, len(c.p.Session.RoleNames))
		for oid := range c.p.Session.RoleNames {
			oids = append(oids, oid)
		}
		slices.Sort(oids)
		for _, oid := range oids {
			name = expr.If(expr.Eq(x.e, expr.Literal(row.Int64(oid))), expr.Literal(row.Text(c.p.Session.RoleNames[oid])), name)
		}
		return c.check(expr.If(expr.IsNull(x.e), expr.TypedNull(row.TypeText), name))
	case "pg_get_expr":
		// The catalog emulation stores an expression (pg_policy's
		// polqual) as its SQL text, so its text is the decompiled form.
		if len(fc.Args) != 2 && len(fc.Args) != 3 {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s takes 2 or 3 arguments", name)
		}
		x, err := c.lowerAs(fc.Args[0], row.TypeText)
		if err != nil {
			return typed{}, err
		}
		for _, a := range fc.Args[1:] {
			if _, err := c.lower(a); err != nil {
				return typed{}, err
			}
		}
		return c.check(x.e)
	case "pg_table_is_visible":
		// Relations of the search path (schema public) have the oids
		// the SQL layer's pg_class emulation gives user items.
		if len(fc.Args) != 1 {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s takes 1 argument", name)
		}
		x, err := c.lowerAs(fc.Args[0], row.TypeInt64)
		if err != nil {
			return typed{}, err
		}
		return c.check(expr.Call(expr.FuncGte, x.e, expr.Literal(row.Int64(FirstUserOID))))
	case "position", "strpos":
		if len(fc.Args) != 2 {
			return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s takes 2 arguments", name)
		}
		xs, err := c.lowerList(fc.Args)
		if err != nil {
			return typed{}, err
		}
		// position(sub IN s) arrives as position(s, sub), like strpos(s, sub).
		return c.check(expr.Call(expr.FuncPosition, xs[1].e, xs[0].e))
	}
	if y, ok, err := c.arrayFunc2(name, fc.Args); ok {
		return y, err
	}
	if y, ok, err := c.arrayFunc(name, fc.Args); ok {
		return y, err
	}
	if y, ok, err := c.jsonbFunc(name, fc.Args); ok {
		return y, err
	}
	if y, ok, err := c.datetimeFunc(name, fc.Args); ok {
		return y, err
	}
	f, ok := scalarFunc(name)
	if name == "log" && len(fc.Args) == 2 {
		f = expr.FuncLog // log(b, x); log(x) is base 10
	}
	if !ok {
		if feature := unsupportedFunction(name); feature == "window functions" {
			return typed{}, sqlerr.Errorf(sqlerr.WrongObjectType, "window function %s requires an OVER clause", name)
		} else if feature != "" {
			return typed{}, sqlerr.Unsupported(fmt.Sprintf("%s (function %s)", feature, name))
		}
		return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s does not exist", name)
	}
	args := make([]expr.Expr, len(fc.Args))
	xs := make([]typed, len(fc.Args))
	for i, a := range fc.Args {
		x, err := c.lowerTyped(a)
		if err != nil {
			return typed{}, err
		}
		xs[i] = x
	}
	// An untyped argument of a math function next to a numeric is a
	// numeric (power(2.0, 'NaN')), as Postgres resolves the overload.
	untypedMath := row.TypeText
	for _, x := range xs {
		if isMathFunc(f) && !x.untyped() && x.t.Type == row.TypeNumeric {
			untypedMath = row.TypeNumeric
		}
	}
	for i, x := range xs {
		want := untypedMath
		if intArg(f, i) {
			want = row.TypeInt64
		}
		x, err := c.settle(x, want)
		if err != nil {
			return typed{}, err
		}
		args[i], xs[i] = x.e, x
	}
	if f == expr.FuncConcat || f == expr.FuncConcatWS || f == expr.FuncFormat {
		for i, x := range xs {
			args[i] = numericAsText(x)
		}
	}
	if isMathFunc(f) {
		var err error
		if xs, err = mathArgs(name, f, xs); err != nil {
			return typed{}, err
		}
		args = exprs(xs)
	}
	y, err := c.check(expr.Call(f, args...))
	if err != nil {
		return typed{}, err
	}
	if y.t.Type == row.TypeNumeric {
		y.mod = mathMod(f, xs)
	}
	switch f {
	case expr.FuncAbs:
		// abs(int2/int4) is int2/int4: abs of the minimum overflows.
		return c.narrow(y, xs[0].w)
	case expr.FuncGreatest, expr.FuncLeast:
		return withWidth(y, nil, widthOf(xs))
	}
	return y, nil
}

// FirstUserOID is the oid the SQL layer's pg_catalog emulation gives
// user item u1 (user item uN has FirstUserOID + N - 1); smaller oids are
// catalog schemas and system relations, which are not on the search path.
const FirstUserOID = 16384

// regexMatch lowers s ~ pattern and its negated and case-insensitive
// forms.
func (c *exprCtx) regexMatch(op string, l, r *pg.Node) (typed, error) {
	x, err := c.lowerAs(l, row.TypeText)
	if err != nil {
		return typed{}, err
	}
	y, err := c.lowerAs(r, row.TypeText)
	if err != nil {
		return typed{}, err
	}
	pattern := y.e
	if strings.Contains(op, "*") {
		pattern = expr.Call(expr.FuncConcatOp, expr.Literal(row.Text("(?i)")), pattern)
	}
	e := expr.Call(expr.FuncRegexMatch, x.e, pattern)
	if strings.HasPrefix(op, "!") {
		e = expr.Not(e)
	}
	return c.check(e)
}

func (c *exprCtx) sessionText(nargs int, v string) (typed, error) {
	if nargs != 0 {
		return typed{}, sqlerr.New(sqlerr.UndefinedFunction, "function takes no arguments")
	}
	return typed{e: expr.Literal(row.Text(v)), t: row.ColumnType{Type: row.TypeText}}, nil
}

func (c *exprCtx) sqlValueFunction(f *pg.SQLValueFunction) (typed, error) {
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_USER, pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
		return c.sessionText(0, c.p.Session.User)
	case pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
		return c.sessionText(0, c.p.Session.sessionUser())
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return c.sessionText(0, c.p.Session.Database)
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return c.sessionText(0, "public")
	}
	if y, ok, err := c.sqlTimeFunction(f); ok {
		return y, err
	}
	return typed{}, sqlerr.Unsupported("time functions such as " + strings.TrimPrefix(f.Op.String(), "SVFOP_"))
}

// isMathFunc reports whether f is a math function over numbers, whose
// arguments mathArgs promotes.
func isMathFunc(f expr.Func) bool {
	switch f {
	case expr.FuncAbs, expr.FuncRound, expr.FuncTrunc, expr.FuncFloor, expr.FuncCeil, expr.FuncSqrt,
		expr.FuncPower, expr.FuncSign, expr.FuncDivTrunc, expr.FuncMod, expr.FuncExp, expr.FuncLn, expr.FuncLog10,
		expr.FuncLog, expr.FuncCbrt, expr.FuncDegrees, expr.FuncRadians:
		return true
	}
	return false
}

// mathArgs resolves the argument types of a math function as Postgres'
// overloads do: round(x, n) and trunc(x, n) and div take numerics (an
// integer x is cast), mod and power take a common type, log(b, x) takes
// numerics only.
func mathArgs(name string, f expr.Func, xs []typed) ([]typed, error) {
	toNumeric := func(x typed) typed {
		if x.t.Type != row.TypeInt64 {
			return x
		}
		return typed{e: expr.Cast(x.e, row.TypeNumeric), t: row.ColumnType{Type: row.TypeNumeric, Nullable: x.t.Nullable},
			mod: TypeMod{Kind: ModNumeric}}
	}
	switch f {
	case expr.FuncRound, expr.FuncTrunc:
		if len(xs) == 2 {
			xs[0] = toNumeric(xs[0])
		}
	case expr.FuncLog:
		for _, x := range xs {
			if x.t.Type != row.TypeInt64 && x.t.Type != row.TypeNumeric && x.t.Type != row.TypeNull {
				return nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function log(%s, %s) does not exist",
					xs[0].t.Type.PGName(), xs[1].t.Type.PGName())
			}
		}
		for i := range xs {
			xs[i] = toNumeric(xs[i])
		}
	case expr.FuncDivTrunc:
		xs = promoteNumeric(xs)
		for i := range xs {
			xs[i] = toNumeric(xs[i])
		}
	case expr.FuncMod, expr.FuncPower:
		xs = promoteNumeric(xs)
	}
	return xs, nil
}

// mathMod is the display scale Postgres gives a math function's numeric
// result where it follows from the arguments' types.
func mathMod(f expr.Func, xs []typed) TypeMod {
	switch f {
	case expr.FuncAbs:
		return xs[0].mod
	case expr.FuncFloor, expr.FuncCeil, expr.FuncSign, expr.FuncDivTrunc:
		return TypeMod{Kind: ModNumeric}
	case expr.FuncRound, expr.FuncTrunc:
		if len(xs) == 1 {
			return TypeMod{Kind: ModNumeric}
		}
		if xs[1].e.Op == expr.OpLiteral && xs[1].e.Value.Type() == row.TypeInt64 {
			return TypeMod{Kind: ModNumeric, Scale: int32(min(max(xs[1].e.Value.Int64(), 0), 1000))}
		}
	case expr.FuncMod:
		return scaleMod(expr.FuncMod, xs[0], xs[1])
	}
	return TypeMod{}
}

// intArg reports whether argument i of f is an integer (which untyped
// literals and parameters become); the others are text.
func intArg(f expr.Func, i int) bool {
	switch f {
	case expr.FuncSubstr, expr.FuncRound, expr.FuncTrunc:
		return i > 0
	case expr.FuncLPad, expr.FuncRPad, expr.FuncLeft, expr.FuncRight, expr.FuncRepeat:
		return i == 1
	case expr.FuncSplitPart:
		return i == 2
	case expr.FuncChr:
		return i == 0
	}
	return false
}

// numericAsText is x, or for a numeric of known display scale its text at
// that scale, as concat and format print their arguments.
func numericAsText(x typed) expr.Expr {
	if x.t.Type != row.TypeNumeric {
		return x.e
	}
	if s, ok := displayScale(x); ok {
		return expr.Call(expr.FuncNumericText, x.e, expr.Literal(row.Int64(int64(s))))
	}
	return x.e
}
