package planner

import (
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// typed is a lowered scalar expression with its type. An untyped literal
// (a quoted string) or a parameter whose type is not yet known adapts to
// the type its context expects, as in Postgres: `a = '3'` compares a with
// the integer 3 when a is an integer.
type typed struct {
	e   expr.Expr
	t   row.ColumnType
	lit *string // an untyped string literal
	// param is n for an untyped parameter $n, else 0.
	param int
	// w is the declared width of an integer value (zero: bigint).
	w IntWidth
	// mod is the value's type modifier: varchar(n), char(n), numeric's
	// display scale.
	mod TypeMod
}

func (x typed) untyped() bool { return x.lit != nil || x.param > 0 }

// exprCtx is what lowering an expression needs: the scope its columns
// resolve in and, after aggregation, how grouped expressions and
// aggregates map to the aggregation's output.
type exprCtx struct {
	p     *Planner
	scope *scope
	// clause names where the expression appears, for errors
	// ("aggregate functions are not allowed in WHERE").
	clause string
	// agg is set when lowering expressions evaluated over the output of a
	// GROUP BY: grouped expressions and aggregates become its columns.
	agg *aggScope
	// rel, when set, is the relation the expression is evaluated over,
	// to which subqueries in the expression add their columns (its scope
	// is scope). Without it subqueries are refused.
	rel *rel
	// depth is the query nesting depth, for subqueries.
	depth int
	// win, in the select list and ORDER BY, collects or resolves window
	// function calls (window.go); elsewhere they are refused.
	win *winScope
	// srf, in the select list and ORDER BY, collects or resolves
	// set-returning function calls (srf.go); elsewhere they are refused.
	srf *srfScope
}

// lower lowers an expression and fixes untyped literals as text.
func (c *exprCtx) lower(n *pg.Node) (typed, error) {
	x, err := c.lowerTyped(n)
	if err != nil {
		return typed{}, err
	}
	return c.settle(x, row.TypeText)
}

// lowerAs lowers an expression expected to have type want (which untyped
// literals and parameters adopt; typed values are left alone).
func (c *exprCtx) lowerAs(n *pg.Node, want row.Type) (typed, error) {
	x, err := c.lowerTyped(n)
	if err != nil {
		return typed{}, err
	}
	return c.settle(x, want)
}

// settle gives an untyped value the type t.
func (c *exprCtx) settle(x typed, t row.Type) (typed, error) {
	switch {
	case x.lit != nil:
		if t == row.TypeNull || t == row.TypeInvalid {
			t = row.TypeText
		}
		if t == row.TypeTimestampTZ || t == row.TypeTimestampTZArray {
			// A literal without a zone is local time in the session's.
			loc, err := c.p.location()
			if err != nil {
				return typed{}, err
			}
			d, err := expr.ParseTemporal(*x.lit, t, loc)
			if t == row.TypeTimestampTZArray {
				d, err = expr.ParseArrayIn(*x.lit, t, loc)
			}
			if err != nil {
				return typed{}, err
			}
			return typed{e: expr.Literal(d), t: row.ColumnType{Type: t}}, nil
		}
		d, err := expr.CastDatum(row.Text(*x.lit), t)
		if err != nil {
			return typed{}, err
		}
		return typed{e: expr.Literal(d), t: row.ColumnType{Type: t}}, nil
	case x.param > 0:
		if t == row.TypeNull || t == row.TypeInvalid {
			t = row.TypeText
		}
		return c.p.param(x.param, t)
	}
	return x, nil
}

// unify settles untyped members of xs to the type (and integer width) of
// the first typed one.
func (c *exprCtx) unify(xs []typed) ([]typed, error) {
	t := row.TypeText
	var w IntWidth
	for _, x := range xs {
		if !x.untyped() && x.t.Type != row.TypeNull {
			t, w = x.t.Type, x.w
			break
		}
	}
	out := make([]typed, len(xs))
	for i, x := range xs {
		var err error
		if out[i], err = c.settle(x, t); err != nil {
			return nil, err
		}
		if x.untyped() && t == row.TypeInt64 {
			out[i].w = w
		}
	}
	return out, nil
}

// widthOf is the integer width of a value chosen among xs (CASE,
// COALESCE, VALUES rows): the widest of the integer members, as
// Postgres resolves a common type.
func widthOf(xs []typed) IntWidth {
	var w IntWidth
	seen := false
	for _, x := range xs {
		if x.t.Type != row.TypeInt64 {
			continue
		}
		if !seen {
			w, seen = x.w, true
			continue
		}
		w = wider(w, x.w)
	}
	return w
}

// narrow gives an integer result of width w (zero: bigint) Postgres'
// range check for that type: an int2 or int4 computation whose 64-bit
// result leaves the type's range fails with 22003 as Postgres' would.
func (c *exprCtx) narrow(x typed, w IntWidth) (typed, error) {
	if w == 0 || x.t.Type != row.TypeInt64 {
		return x, nil
	}
	y, err := c.check(expr.Call(intFunc(w), x.e))
	y.w = w
	return y, err
}

// withWidth sets x's integer width (an error passes through).
func withWidth(x typed, err error, w IntWidth) (typed, error) {
	if x.t.Type == row.TypeInt64 {
		x.w = w
	}
	return x, err
}

// isArithmetic reports whether f is an integer operator whose result
// has its operands' (promoted) type.
func isArithmetic(f expr.Func) bool {
	switch f {
	case expr.FuncAdd, expr.FuncSub, expr.FuncMul, expr.FuncDiv, expr.FuncMod:
		return true
	}
	return false
}

// check type-checks e over the scope and returns it typed.
func (c *exprCtx) check(e expr.Expr) (typed, error) {
	var in []row.ColumnType
	if c.agg != nil {
		in = c.agg.outTypes()
	} else {
		in = c.scope.types()
	}
	t, err := e.Type(in)
	if err != nil {
		return typed{}, err
	}
	return typed{e: e, t: t}, nil
}

func (c *exprCtx) lowerTyped(n *pg.Node) (typed, error) {
	if n == nil {
		return typed{}, sqlerr.New(sqlerr.SyntaxError, "missing expression")
	}
	if c.agg != nil {
		if x, ok, err := c.agg.match(c, n); err != nil || ok {
			return x, err
		}
	}
	if out, err := c.p.expandRows(n); err != nil || out != nil {
		if err != nil {
			return typed{}, err
		}
		return c.lowerTyped(out)
	}
	switch v := n.Node.(type) {
	case *pg.Node_AConst:
		return c.constant(v.AConst)
	case *pg.Node_ColumnRef:
		return c.columnRef(v.ColumnRef)
	case *pg.Node_ParamRef:
		return c.p.paramRef(int(v.ParamRef.Number))
	case *pg.Node_AExpr:
		return c.aexpr(v.AExpr)
	case *pg.Node_BoolExpr:
		args := make([]expr.Expr, 0, len(v.BoolExpr.Args))
		for _, a := range v.BoolExpr.Args {
			x, err := c.lowerAs(a, row.TypeBool)
			if err != nil {
				return typed{}, err
			}
			args = append(args, x.e)
		}
		switch v.BoolExpr.Boolop {
		case pg.BoolExprType_AND_EXPR:
			return c.check(expr.And(args...))
		case pg.BoolExprType_OR_EXPR:
			return c.check(expr.Or(args...))
		case pg.BoolExprType_NOT_EXPR:
			if len(args) == 1 {
				return c.check(expr.Not(args[0]))
			}
		}
		return typed{}, sqlerr.Unsupported("boolean operator " + v.BoolExpr.Boolop.String())
	case *pg.Node_NullTest:
		// A row constructor here is a field of one (rowcompare.go): a
		// record, never NULL itself, as in PostgreSQL.
		x, err := c.lower(v.NullTest.Arg)
		if err != nil {
			return typed{}, err
		}
		if v.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			return c.check(expr.Not(expr.IsNull(x.e)))
		}
		return c.check(expr.IsNull(x.e))
	case *pg.Node_BooleanTest:
		x, err := c.lowerAs(v.BooleanTest.Arg, row.TypeBool)
		if err != nil {
			return typed{}, err
		}
		f, t := expr.Literal(row.False), expr.Literal(row.True)
		switch v.BooleanTest.Booltesttype {
		case pg.BoolTestType_IS_TRUE:
			return c.check(expr.Coalesce(x.e, f))
		case pg.BoolTestType_IS_NOT_TRUE:
			return c.check(expr.Not(expr.Coalesce(x.e, f)))
		case pg.BoolTestType_IS_FALSE:
			return c.check(expr.Coalesce(expr.Not(x.e), f))
		case pg.BoolTestType_IS_NOT_FALSE:
			return c.check(expr.Coalesce(x.e, t))
		case pg.BoolTestType_IS_UNKNOWN:
			return c.check(expr.IsNull(x.e))
		case pg.BoolTestType_IS_NOT_UNKNOWN:
			return c.check(expr.Not(expr.IsNull(x.e)))
		}
		return typed{}, sqlerr.Unsupported("boolean test")
	case *pg.Node_CaseExpr:
		return c.caseExpr(v.CaseExpr)
	case *pg.Node_CoalesceExpr:
		xs, err := c.lowerList(v.CoalesceExpr.Args)
		if err != nil {
			return typed{}, err
		}
		x, err := c.check(expr.Coalesce(exprs(xs)...))
		if x.t.Type == row.TypeNumeric {
			x.mod = sameScaleMod(xs)
		}
		return withWidth(x, err, widthOf(xs))
	case *pg.Node_MinMaxExpr:
		xs, err := c.lowerList(v.MinMaxExpr.Args)
		if err != nil {
			return typed{}, err
		}
		f := expr.FuncGreatest
		if v.MinMaxExpr.Op == pg.MinMaxOp_IS_LEAST {
			f = expr.FuncLeast
		}
		x, err := c.check(expr.Call(f, exprs(xs)...))
		if x.t.Type == row.TypeNumeric {
			x.mod = sameScaleMod(xs)
		}
		return withWidth(x, err, widthOf(xs))
	case *pg.Node_TypeCast:
		return c.typeCast(v.TypeCast)
	case *pg.Node_FuncCall:
		return c.funcCall(v.FuncCall)
	case *pg.Node_SqlvalueFunction:
		return c.sqlValueFunction(v.SqlvalueFunction)
	case *pg.Node_SubLink:
		return c.subLink(v.SubLink)
	case *pg.Node_GroupingFunc:
		return typed{}, errGroupingArgs // outside a grouped query
	case *pg.Node_AArrayExpr:
		return c.arrayConstructor(v.AArrayExpr)
	case *pg.Node_AIndirection:
		return c.subscript(v.AIndirection)
	case *pg.Node_RowExpr:
		return c.rowConstructor(v.RowExpr)
	case *pg.Node_CollateClause:
		// Text compares bytewise, which is the C collation and the
		// database default; naming those (as psql's catalog queries do)
		// changes nothing.
		switch name := opName(v.CollateClause.Collname); name {
		case "default", "C", "POSIX":
			return c.lowerTyped(v.CollateClause.Arg)
		default:
			return typed{}, sqlerr.Unsupported("COLLATE " + name)
		}
	}
	return typed{}, sqlerr.Unsupported("expression " + nodeName(n))
}

func exprs(xs []typed) []expr.Expr {
	out := make([]expr.Expr, len(xs))
	for i, x := range xs {
		out[i] = x.e
	}
	return out
}

// lowerList lowers expressions that must share a type (COALESCE, IN
// lists, CASE results), settling untyped members to the common type.
func (c *exprCtx) lowerList(ns []*pg.Node) ([]typed, error) {
	xs := make([]typed, len(ns))
	for i, n := range ns {
		var err error
		if xs[i], err = c.lowerTyped(n); err != nil {
			return nil, err
		}
	}
	xs, err := c.unify(xs)
	if err != nil {
		return nil, err
	}
	return c.promoteDatetimeList(promoteNumeric(xs))
}

// promoteDatetimeList casts the dates, timestamps and timestamptzs of a
// list mixing them to the latest of those types, as Postgres resolves a
// common type (date < timestamp < timestamptz).
func (c *exprCtx) promoteDatetimeList(xs []typed) ([]typed, error) {
	top := 0
	for _, x := range xs {
		top = max(top, datetimeRank(x.t.Type))
	}
	for i, x := range xs {
		if r := datetimeRank(x.t.Type); r > 0 && r < top {
			y, err := c.castTo(x, [...]row.Type{1: row.TypeDate, 2: row.TypeTimestamp, 3: row.TypeTimestampTZ}[top])
			if err != nil {
				return nil, err
			}
			xs[i] = y
		}
	}
	return xs, nil
}

// sameScaleMod is the display scale of a numeric chosen among xs
// (COALESCE, GREATEST, LEAST) when all of theirs are known and equal.
// PostgreSQL prints each value at its own scale; when they differ a
// column has none to give, and values print without trailing zeros
// (docs/sql.md).
func sameScaleMod(xs []typed) TypeMod {
	m, seen := TypeMod{Kind: ModNumeric}, false
	for _, x := range xs {
		if x.t.Type == row.TypeNull {
			continue
		}
		s, ok := displayScale(x)
		if !ok || (seen && s != m.Scale) {
			return TypeMod{}
		}
		m.Scale, seen = s, true
	}
	return m
}

// promoteNumeric casts the numbers of a list mixing integer, numeric and
// float64 members to the widest, as Postgres resolves a common type:
// float8 over numeric over the integers.
func promoteNumeric(xs []typed) []typed {
	hasFloat, hasNumeric, hasInt := false, false, false
	for _, x := range xs {
		hasFloat = hasFloat || x.t.Type == row.TypeFloat64
		hasNumeric = hasNumeric || x.t.Type == row.TypeNumeric
		hasInt = hasInt || x.t.Type == row.TypeInt64
	}
	to := row.TypeNumeric
	switch {
	case hasFloat && (hasInt || hasNumeric):
		to = row.TypeFloat64
	case hasNumeric && hasInt:
	default:
		return xs
	}
	out := make([]typed, len(xs))
	for i, x := range xs {
		if x.t.Type != to && (x.t.Type == row.TypeInt64 || x.t.Type == row.TypeNumeric) {
			s, known := displayScale(x)
			x = typed{e: expr.Cast(x.e, to), t: row.ColumnType{Type: to, Nullable: x.t.Nullable}}
			if to == row.TypeNumeric && known {
				x.mod = TypeMod{Kind: ModNumeric, Scale: s}
			}
		}
		out[i] = x
	}
	return out
}

func (c *exprCtx) constant(k *pg.A_Const) (typed, error) {
	if k.Isnull {
		return typed{e: expr.TypedNull(row.TypeNull), t: row.ColumnType{Type: row.TypeNull, Nullable: true}}, nil
	}
	switch v := k.Val.(type) {
	case *pg.A_Const_Ival:
		// An integer literal that fits 32 bits is an integer (int4) in
		// Postgres, so that 2147483647 + 1 overflows.
		return typed{e: expr.Literal(row.Int64(int64(v.Ival.Ival))), t: row.ColumnType{Type: row.TypeInt64}, w: IntWidth4}, nil
	case *pg.A_Const_Fval:
		s := v.Fval.Fval
		if !strings.ContainsAny(s, ".eE") {
			// An integer literal beyond bigint is numeric, as in Postgres.
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return typed{e: expr.Literal(row.Int64(i)), t: row.ColumnType{Type: row.TypeInt64}}, nil
			}
		}
		// Decimal literals are numeric, with the display scale written.
		d, err := expr.CastDatum(row.Text(s), row.TypeNumeric)
		if err != nil {
			return typed{}, err
		}
		return typed{e: expr.Literal(d), t: row.ColumnType{Type: row.TypeNumeric}, mod: TypeMod{Kind: ModNumeric, Scale: literalScale(s)}}, nil
	case *pg.A_Const_Sval:
		s := v.Sval.Sval
		return typed{e: expr.Literal(row.Text(s)), t: row.ColumnType{Type: row.TypeText}, lit: &s}, nil
	case *pg.A_Const_Boolval:
		return typed{e: expr.Literal(row.Bool(v.Boolval.Boolval)), t: row.ColumnType{Type: row.TypeBool}}, nil
	case *pg.A_Const_Bsval:
		return typed{}, sqlerr.Unsupported("bit string literals")
	}
	return typed{}, sqlerr.Unsupported("constant")
}

// columnRefName returns the (table, column) of a column reference, or
// star=true for t.* / *.
func columnRefName(cr *pg.ColumnRef) (table, col string, star bool, err error) {
	var parts []string
	for _, f := range cr.Fields {
		switch {
		case f.GetString_() != nil:
			parts = append(parts, f.GetString_().GetSval())
		case f.GetAStar() != nil:
			star = true
		default:
			return "", "", false, sqlerr.Unsupported("column reference form")
		}
	}
	if star {
		switch len(parts) {
		case 0:
			return "", "", true, nil
		case 1:
			return parts[0], "", true, nil
		}
		return "", "", false, sqlerr.Unsupported("schema-qualified * reference")
	}
	switch len(parts) {
	case 1:
		return "", parts[0], false, nil
	case 2:
		return parts[0], parts[1], false, nil
	case 3:
		return parts[1], parts[2], false, nil
	}
	return "", "", false, sqlerr.Errorf(sqlerr.SyntaxError, "improper qualified name (too many dotted names)")
}

func (c *exprCtx) columnRef(cr *pg.ColumnRef) (typed, error) {
	table, col, star, err := columnRefName(cr)
	if err != nil {
		return typed{}, err
	}
	if star {
		return typed{}, sqlerr.Unsupported("* in an expression")
	}
	if c.scope == nil {
		return typed{}, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q does not exist", col)
	}
	i, err := c.scope.resolve(table, col)
	if err != nil && table == "" && sqlerr.Code(err) == sqlerr.UndefinedColumn && c.scope.hasTableLevel(col, false) && !c.p.outerHasColumn(col) {
		return typed{}, sqlerr.Unsupported("whole-row reference " + col + " other than the argument of row_to_json, to_json or to_jsonb")
	}
	if err != nil {
		c.p.unresolved = [2]string{table, col}
		return typed{}, c.p.outerReference(table, col, err)
	}
	if err := c.scope.use(i); err != nil {
		return typed{}, err
	}
	return typed{e: expr.Column(i), t: c.scope.cols[i].typ, w: c.scope.cols[i].w, mod: c.scope.cols[i].mod}, nil
}

func (c *exprCtx) caseExpr(ce *pg.CaseExpr) (typed, error) {
	var arg *typed
	if ce.Arg != nil {
		x, err := c.lowerTyped(ce.Arg)
		if err != nil {
			return typed{}, err
		}
		arg = &x
	}
	conds := make([]expr.Expr, 0, len(ce.Args))
	resultNodes := make([]*pg.Node, 0, len(ce.Args)+1)
	for _, w := range ce.Args {
		cw := w.GetCaseWhen()
		if cw == nil {
			return typed{}, sqlerr.New(sqlerr.SyntaxError, "malformed CASE")
		}
		if arg != nil {
			v, err := c.lowerTyped(cw.Expr)
			if err != nil {
				return typed{}, err
			}
			xs, err := c.unify([]typed{*arg, v})
			if err != nil {
				return typed{}, err
			}
			conds = append(conds, expr.Eq(xs[0].e, xs[1].e))
		} else {
			cond, err := c.lowerAs(cw.Expr, row.TypeBool)
			if err != nil {
				return typed{}, err
			}
			conds = append(conds, cond.e)
		}
		resultNodes = append(resultNodes, cw.Result)
	}
	if ce.Defresult != nil {
		resultNodes = append(resultNodes, ce.Defresult)
	}
	results, err := c.lowerList(resultNodes)
	if err != nil {
		return typed{}, err
	}
	w := widthOf(results) // before ELSE is split off
	var els expr.Expr
	if ce.Defresult != nil {
		els = results[len(results)-1].e
		results = results[:len(results)-1]
	} else {
		t := row.TypeText
		if len(results) > 0 {
			t = results[0].t.Type
		}
		els = expr.TypedNull(t)
	}
	whens := make([][2]expr.Expr, len(conds))
	for i := range conds {
		whens[i] = [2]expr.Expr{conds[i], results[i].e}
	}
	x, err := c.check(expr.Case(whens, els))
	return withWidth(x, err, w)
}

func (c *exprCtx) clauseName() string {
	if c.clause == "" {
		return "this context"
	}
	return c.clause
}

// nodeName names a syntax node's kind for messages ("SetToDefault").
func nodeName(n *pg.Node) string {
	name := fmt.Sprintf("%T", n.Node)
	return strings.TrimPrefix(name, "*pg_query.Node_")
}

// unsupportedFunction names the unsupported feature a PostgreSQL built-in
// function belongs to, so that calling it fails with 0A000 naming the
// feature rather than 42883 (which would claim no such function exists);
// "" for names PostgreSQL does not have either.
func unsupportedFunction(name string) string {
	switch name {
	case "to_date", "make_timestamptz", "make_interval", "justify_days", "justify_hours", "justify_interval", "isfinite", "date_bin":
		return "time functions"
	case "generate_series", "unnest", "regexp_split_to_table", "regexp_matches", "generate_subscripts",
		"json_each", "jsonb_each", "jsonb_array_elements",
		"json_each_text", "jsonb_each_text", "json_object_keys", "jsonb_object_keys", "json_array_elements", "json_array_elements_text", "jsonb_array_elements_text":
		return "set-returning functions"
	case "bit_and", "bit_or":
		return "bitwise aggregates"
	case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead",
		"first_value", "last_value", "nth_value":
		return "window functions"
	case "random", "setseed", "gen_random_uuid":
		return "random functions"
	case "nextval", "currval", "setval", "lastval":
		return "sequences"
	}
	return ""
}
