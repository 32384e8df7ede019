package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// jsonValueArg is x as a json value: a numeric of a numeric(p,s) type
// keeps its display scale (2.50) through the jsonb number that carries
// it, a char(n) value its padding (stored without it).
func jsonValueArg(x typed) expr.Expr {
	switch {
	case x.t.Type == row.TypeNumeric && x.mod.Kind == ModNumeric && x.mod.Scale > 0:
		return expr.Call(expr.FuncJSONNumber, x.e, expr.Literal(row.Int64(int64(x.mod.Scale))))
	case x.t.Type == row.TypeText && x.mod.Kind == ModBpchar && x.mod.N > 0:
		return expr.Call(expr.FuncRPad, x.e, expr.Literal(row.Int64(int64(x.mod.N))))
	}
	return x.e
}

// jsonKeyArg is x as an object key: a numeric(p,s) as its text at the
// type's scale ("2.50"), a char(n) value padded; other values as they
// are (a key's text is their output).
func jsonKeyArg(x typed) expr.Expr {
	if x.t.Type == row.TypeNumeric && x.mod.Kind == ModNumeric && x.mod.Scale > 0 {
		return expr.Call(expr.FuncNumericText, x.e, expr.Literal(row.Int64(int64(x.mod.Scale))))
	}
	return jsonValueArg(x)
}

// jsonAggregate plans json_agg(x) and json_object_agg(k, v) as the
// engine's ordered concatenation of one-element jsonb arrays (the path of
// jsonb_agg with ORDER BY), each holding the element's json text (x's,
// or the `"k" : v` member); json_agg_final joins the texts as PostgreSQL
// prints them. ORDER BY inside and FILTER apply as for jsonb_agg; without
// ORDER BY the elements come in the order of their texts (docs/sql.md).
func (a *aggScope) jsonAggregate(inner *exprCtx, name string, fc *pg.FuncCall) (typed, error) {
	want, err := jsonAggArity(name, fc)
	if err != nil {
		return typed{}, err
	}
	es := make([]expr.Expr, want)
	xs := make([]typed, want)
	for i, n := range fc.Args {
		x, err := inner.lowerAs(n, row.TypeText)
		if err != nil {
			return typed{}, err
		}
		if err := refuseJSONKey(x.t.Type, "an equality"); fc.AggDistinct && err != nil {
			return typed{}, err
		}
		xs[i], es[i] = x, jsonValueArg(x)
		if want == 2 && i == 0 {
			es[i] = jsonKeyArg(x)
		}
	}
	f := expr.FuncJSONValueText
	if want == 2 {
		f = expr.FuncJSONPairText
	}
	txt, err := inner.check(expr.Call(f, es...))
	if err != nil {
		return typed{}, err
	}
	g := aggregate{fn: "jsonb_agg", arg: txt.e, argType: txt.t}
	if fc.AggDistinct {
		if err := a.jsonDistinctOrder(inner, &g, fc, xs); err != nil {
			return typed{}, err
		}
	} else if err := a.aggOrder(inner, &g, fc); err != nil {
		return typed{}, err
	}
	g.arg = expr.Call(expr.FuncJSONBuildArray, txt.e)
	g.argType = row.ColumnType{Type: row.TypeJSONB}
	g.out = row.ColumnType{Type: row.TypeJSONB, Nullable: true}
	if err := a.aggFilter(inner, &g, fc.AggFilter); err != nil {
		return typed{}, err
	}
	if err := refuseOuterAggregate(a.input, g.arg); err != nil {
		return typed{}, err
	}
	g.fn = string(plan.AggConcat)
	y := a.add(g)
	final := expr.Call(expr.FuncJSONAggFinal, y.e, expr.Literal(row.Bool(want == 2)))
	return typed{e: final, t: row.ColumnType{Type: row.TypeJSON, Nullable: true}}, nil
}

// jsonDistinctOrder sets g (json_agg's concatenation of the arguments'
// json texts) to keep one of each distinct argument list xs and orders it
// as PostgreSQL orders a DISTINCT aggregate's input: by the call's ORDER
// BY, whose terms must be arguments (42P10), then by the arguments left,
// ascending. Equal arguments have equal texts and sort next to each
// other, which is what the engine's DISTINCT concatenation needs.
func (a *aggScope) jsonDistinctOrder(inner *exprCtx, g *aggregate, fc *pg.FuncCall, xs []typed) error {
	check := aggregate{fn: g.fn, arg: xs[0].e, distinct: true}
	if len(xs) == 2 {
		check.sep = &xs[1].e // accepted in ORDER BY like the first argument
	}
	if err := a.aggOrder(inner, &check, fc); err != nil {
		return err
	}
	g.distinct, g.order = true, check.order
	for _, x := range xs {
		ordered := false
		for _, o := range g.order {
			ordered = ordered || o.Expr.Equal(x.e)
		}
		if !ordered {
			g.order = append(g.order, plan.AggOrder{Expr: x.e, NullsLast: true})
		}
	}
	return nil
}

// jsonAggArity is the argument count of json(b)_agg (1) and
// json(b)_object_agg (2); 42883 when the call has another.
func jsonAggArity(name string, fc *pg.FuncCall) (int, error) {
	want := 1
	if strings.HasSuffix(name, "_object_agg") {
		want = 2
	}
	if fc.AggStar || len(fc.Args) != want {
		return 0, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s takes exactly %d argument(s)", name, want)
	}
	return want, nil
}

// RefuseJSONIndexKey refuses a json value as a key of an index, a
// PRIMARY KEY or a UNIQUE constraint with PostgreSQL's error: json has
// no btree operator class (jsonb has).
func RefuseJSONIndexKey(t row.Type) error {
	if t != row.TypeJSON {
		return nil
	}
	return sqlerr.New(sqlerr.UndefinedObject, `data type json has no default operator class for access method "btree"`)
}
