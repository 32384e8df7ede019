package planner

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// rangeFunction plans a function in FROM (a table function), or ROWS
// FROM of several, over base, the FROM items to its left (constRel when
// it is first): as in PostgreSQL a function in FROM may name their
// columns without LATERAL. It is a FlatMap of base, so each row of base
// is followed by each row the call produces for it; a maintained view
// retracts the produced rows with their input row. ROWS FROM runs its
// calls in lockstep (expr.TableRowsFrom), a call that has ended giving
// NULLs. It returns base joined with the function's rows and a rel
// standing for the function's columns alone (their scope and arity, for
// a JOIN's conditions), as lateral does.
func (p *Planner) rangeFunction(base *rel, rf *pg.RangeFunction, depth int) (*rel, *rel, error) {
	if len(rf.Functions) == 0 {
		return nil, nil, sqlerr.Unsupported("this kind of function in FROM")
	}
	if rf.IsRowsfrom && len(rf.Functions) > 1 && len(rf.Coldeflist) > 0 {
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "ROWS FROM() with multiple functions cannot have a column definition list")
	}
	if rf.Ordinality && len(rf.Coldeflist) > 0 {
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "WITH ORDINALITY cannot be used with a column definition list")
	}
	c := &exprCtx{p: p, scope: base.scope, clause: "functions in FROM", depth: depth}
	calls := make([]expr.TableCall, len(rf.Functions))
	widths := make([]int, len(rf.Functions))
	var cols []column
	var first fromFn
	casts := map[int]*pg.TypeName{}
	for i, f := range rf.Functions {
		fn, err := c.fromFunction(f, rf.Coldeflist)
		if err != nil {
			return nil, nil, err
		}
		if i == 0 {
			first = fn
		}
		for j, tn := range fn.casts {
			casts[base.arity()+len(cols)+j] = tn
		}
		calls[i], widths[i] = fn.call, len(fn.cols)
		cols = append(cols, fn.cols...)
	}
	call := calls[0]
	if len(calls) > 1 {
		call = expr.RowsFrom(calls, widths)
		for i := range cols {
			cols[i].typ.Nullable = true
		}
	}
	if rf.Ordinality {
		cols = append(cols, column{name: "ordinality", typ: row.ColumnType{Type: row.TypeInt64}})
	}
	fn := &rel{scope: &scope{cols: cols}, mfp: expr.Identity(len(cols))}
	byAlias := len(calls) == 1 && first.scalar
	if err := aliasFunction(fn, rf.Alias, first.name, rf.Ordinality, byAlias); err != nil {
		return nil, nil, err
	}
	out := newRel(plan.NewFlatMap(base.plan(), call, rf.Ordinality), base.scope.concat(fn.scope))
	if len(casts) > 0 {
		if err := c.castRecordColumns(out, casts); err != nil {
			return nil, nil, err
		}
		fn.scope = &scope{cols: out.scope.cols[base.arity():]}
	}
	return out, fn, nil
}

// fromFn is one function of FROM, lowered.
type fromFn struct {
	call expr.TableCall
	cols []column
	// casts are the types of a column definition list, by column.
	casts []*pg.TypeName
	name  string
	// scalar is set when the function's one column takes the alias's
	// name (not a record, not a named output column).
	scalar bool
}

// fromFunction lowers one function of FROM (or of ROWS FROM), with its
// column definition list: ROWS FROM's own for the function (the second
// item of its list), else the one after the alias (outer). It returns
// the function's name, call and columns. Functions with a named output
// column (jsonb_each's key and value) keep its name under an alias;
// json(b)_object_keys's column is named after the function, and after
// the alias.
func (c *exprCtx) fromFunction(f *pg.Node, outer []*pg.Node) (fromFn, error) {
	items := f.GetList().GetItems()
	if len(items) == 0 {
		return fromFn{}, sqlerr.Unsupported("this kind of function in FROM")
	}
	coldefs := outer
	if len(items) > 1 && items[1] != nil && items[1].Node != nil {
		coldefs = items[1].GetList().GetItems()
	}
	fc := items[0].GetFuncCall()
	if fc == nil {
		return fromFn{}, sqlerr.Unsupported("this kind of function in FROM")
	}
	name, err := funcName(fc)
	if err != nil {
		return fromFn{}, err
	}
	if fc.Over != nil || fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0 || isAggregate(name) {
		return fromFn{}, sqlerr.Errorf(sqlerr.GroupingError, "aggregate functions are not allowed in functions in FROM")
	}
	fn := fromFn{name: name}
	if returnsRecord(name) {
		fn.call, fn.cols, fn.casts, err = c.recordCall(name, fc.Args, coldefs)
		return fn, err
	}
	if len(coldefs) > 0 {
		return fromFn{}, sqlerr.New(sqlerr.SyntaxError, `a column definition list is only allowed for functions returning "record"`)
	}
	fn.call, fn.cols, err = c.tableCall(name, fc.Args)
	fn.scalar = !strings.HasPrefix(name, "json") || strings.HasSuffix(name, "_object_keys")
	return fn, err
}

// aliasFunction names a function's columns: by the alias's column list,
// else a function of one column (plus ordinality) names it after the
// alias, as PostgreSQL does; the table name is the alias or the
// function's name.
func aliasFunction(fn *rel, a *pg.Alias, name string, ordinality, byAlias bool) error {
	single := len(fn.scope.cols) == 1 || ordinality && len(fn.scope.cols) == 2
	if a != nil && len(a.Colnames) == 0 && single && byAlias {
		fn.scope.cols[0].name = a.Aliasname
	}
	_, err := aliased(fn, a, name)
	return err
}

// tableCall lowers a table function's arguments and returns the call
// and the columns it produces.
func (c *exprCtx) tableCall(name string, args []*pg.Node) (expr.TableCall, []column, error) {
	switch name {
	case "generate_series":
		return c.generateSeries(args)
	case "jsonb_array_elements", "jsonb_array_elements_text", "jsonb_each", "jsonb_each_text":
		return c.jsonbTable(name, args)
	case "json_array_elements", "json_array_elements_text", "json_each", "json_each_text":
		return c.jsonbTable(name, args)
	case "json_object_keys", "jsonb_object_keys":
		return c.jsonbTable(name, args)
	case "unnest":
		return c.unnestCall(args)
	case "regexp_matches":
		return c.regexpCall(expr.TableRegexpMatches, row.TypeTextArray, args)
	case "regexp_split_to_table":
		return c.regexpCall(expr.TableRegexpSplit, row.TypeText, args)
	case "generate_subscripts":
		return c.generateSubscripts(args)
	}
	if unsupportedFunction(name) != "" {
		return expr.TableCall{}, nil, sqlerr.Unsupported(fmt.Sprintf("function %s in FROM", name))
	}
	if _, ok := scalarFunc(name); ok {
		return expr.TableCall{}, nil, sqlerr.Unsupported(fmt.Sprintf("scalar function %s in FROM", name))
	}
	return expr.TableCall{}, nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s does not exist", name)
}

// generateSeries resolves generate_series as PostgreSQL does: over
// integers (int4 when every argument is, else int8), over timestamps
// with an interval step, and over timestamptz (dates too, which
// PostgreSQL casts to timestamptz) stepping days and months in the
// session's zone.
func (c *exprCtx) generateSeries(args []*pg.Node) (expr.TableCall, []column, error) {
	if len(args) < 2 || len(args) > 3 {
		return expr.TableCall{}, nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function generate_series with %d arguments does not exist", len(args))
	}
	xs := make([]typed, len(args))
	temporal := false
	for i, a := range args {
		x, err := c.lowerTyped(a)
		if err != nil {
			return expr.TableCall{}, nil, err
		}
		xs[i] = x
		temporal = temporal || x.t.Type.IsTemporal()
	}
	out := func(call expr.TableCall, t row.Type, w IntWidth) (expr.TableCall, []column, error) {
		if _, err := call.OutputTypes(c.scope.types()); err != nil {
			return expr.TableCall{}, nil, err
		}
		return call, []column{{name: "generate_series", typ: row.ColumnType{Type: t}, w: w}}, nil
	}
	if !temporal {
		w := IntWidth4
		es := make([]expr.Expr, len(xs))
		for i, x := range xs {
			x, err := c.settle(x, row.TypeInt64)
			if err != nil {
				return expr.TableCall{}, nil, err
			}
			switch x.t.Type {
			case row.TypeInt64, row.TypeNull:
			case row.TypeNumeric, row.TypeFloat64:
				return expr.TableCall{}, nil, sqlerr.Unsupported("generate_series over numeric")
			default:
				return expr.TableCall{}, nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function generate_series(%s) does not exist", x.t.Type)
			}
			if x.t.Type == row.TypeInt64 && x.w == 0 {
				w = 0
			}
			es[i] = x.e
			if x.t.Type == row.TypeNull {
				es[i] = expr.TypedNull(row.TypeInt64)
			}
		}
		return out(expr.TableCall{Func: expr.TableGenerateSeries, Args: es}, row.TypeInt64, w)
	}
	if len(xs) != 3 {
		return expr.TableCall{}, nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function generate_series(%s, %s) does not exist", xs[0].t.Type, xs[1].t.Type)
	}
	t := row.TypeTimestampTZ
	if (xs[0].t.Type == row.TypeTimestamp || xs[0].untyped()) && (xs[1].t.Type == row.TypeTimestamp || xs[1].untyped()) &&
		!(xs[0].untyped() && xs[1].untyped()) {
		t = row.TypeTimestamp
	}
	es := make([]expr.Expr, 0, 4)
	for i, x := range xs {
		want := t
		if i == 2 {
			want = row.TypeInterval
		}
		x, err := c.settle(x, want)
		if err != nil {
			return expr.TableCall{}, nil, err
		}
		if x.t.Type != want {
			if x, err = c.castTo(x, want); err != nil {
				return expr.TableCall{}, nil, err
			}
		}
		es = append(es, x.e)
	}
	if t == row.TypeTimestampTZ {
		es = append(es, c.zone())
	}
	return out(expr.TableCall{Func: expr.TableGenerateSeries, Args: es}, t, 0)
}

// jsonbTable lowers jsonb_array_elements(_text), jsonb_each(_text) and
// jsonb_object_keys, and their json namesakes over a json document.
func (c *exprCtx) jsonbTable(name string, args []*pg.Node) (expr.TableCall, []column, error) {
	if len(args) != 1 {
		return expr.TableCall{}, nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(args))
	}
	doc := row.TypeJSONB
	if !strings.HasPrefix(name, "jsonb_") {
		doc = row.TypeJSON
	}
	x, err := c.lowerAs(args[0], doc)
	if err != nil {
		return expr.TableCall{}, nil, err
	}
	if x.t.Type != doc && x.t.Type != row.TypeNull {
		return expr.TableCall{}, nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, x.t.Type.PGName())
	}
	call := expr.TableCall{Func: expr.TableFunc(name), Args: []expr.Expr{x.e}}
	types, err := call.OutputTypes(c.scope.types())
	if err != nil {
		return expr.TableCall{}, nil, err
	}
	names := []string{"value"}
	if strings.HasSuffix(name, "_object_keys") {
		names = []string{name}
	}
	if len(types) == 2 {
		names = []string{"key", "value"}
	}
	cols := make([]column, len(types))
	for i, t := range types {
		cols[i] = column{name: names[i], typ: t}
	}
	return call, cols, nil
}

// regexpCall lowers regexp_matches and regexp_split_to_table(s,
// pattern[, flags]), their arguments text; their column is named after
// the function, of type out.
func (c *exprCtx) regexpCall(fn expr.TableFunc, out row.Type, args []*pg.Node) (expr.TableCall, []column, error) {
	if len(args) < 2 || len(args) > 3 {
		return expr.TableCall{}, nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", fn, len(args))
	}
	es := make([]expr.Expr, len(args))
	for i, a := range args {
		x, err := c.lowerAs(a, row.TypeText)
		if err != nil {
			return expr.TableCall{}, nil, err
		}
		es[i] = x.e
	}
	call := expr.TableCall{Func: fn, Args: es}
	if _, err := call.OutputTypes(c.scope.types()); err != nil {
		return expr.TableCall{}, nil, err
	}
	return call, []column{{name: string(fn), typ: row.ColumnType{Type: out}}}, nil
}

// generateSubscripts lowers generate_subscripts(array, dim[, reverse]):
// an integer column named after the function.
func (c *exprCtx) generateSubscripts(args []*pg.Node) (expr.TableCall, []column, error) {
	if len(args) < 2 || len(args) > 3 {
		return expr.TableCall{}, nil, sqlerr.Errorf(sqlerr.UndefinedFunction, "function generate_subscripts with %d arguments does not exist", len(args))
	}
	a, err := c.lowerTyped(args[0])
	if err != nil {
		return expr.TableCall{}, nil, err
	}
	if a.untyped() || a.t.Type == row.TypeNull {
		return expr.TableCall{}, nil, sqlerr.New(sqlerr.DatatypeMismatch, "could not determine polymorphic type because input has type unknown")
	}
	es := []expr.Expr{a.e}
	for i, want := range []row.Type{row.TypeInt64, row.TypeBool}[:len(args)-1] {
		x, err := c.lowerAs(args[i+1], want)
		if err != nil {
			return expr.TableCall{}, nil, err
		}
		es = append(es, x.e)
	}
	call := expr.TableCall{Func: expr.TableGenerateSubscripts, Args: es}
	if _, err := call.OutputTypes(c.scope.types()); err != nil {
		return expr.TableCall{}, nil, err
	}
	return call, []column{{name: "generate_subscripts", typ: row.ColumnType{Type: row.TypeInt64}, w: IntWidth4}}, nil
}
