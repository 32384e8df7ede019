package planner

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Window functions. They are computed after WHERE, GROUP BY and HAVING
// and before DISTINCT, ORDER BY and LIMIT, so the select list and ORDER
// BY of a query with window calls are lowered in two passes: the first
// (collect) lowers each call's arguments, PARTITION BY and ORDER BY over
// the query's relation and records the call, the plan then gets the
// expressions as extra columns and one Window node per distinct
// (PARTITION BY, ORDER BY) — each appending its functions' values — and
// the second pass (resolve) lowers the outputs again, each call now a
// column of the Window's output.

// PostgreSQL's frame option bits (parsenodes.h).
const (
	frameRange             = 0x00002
	frameRows              = 0x00004
	frameGroups            = 0x00008
	frameStartUnboundedPre = 0x00020
	frameEndUnboundedPre   = 0x00040
	frameStartUnboundedFol = 0x00080
	frameEndUnboundedFol   = 0x00100
	frameStartCurrent      = 0x00200
	frameEndCurrent        = 0x00400
	frameStartOffsetPre    = 0x00800
	frameEndOffsetPre      = 0x01000
	frameStartOffsetFol    = 0x02000
	frameEndOffsetFol      = 0x04000
	frameExcludeCurrentRow = 0x08000
	frameExcludeGroup      = 0x10000
	frameExcludeTies       = 0x20000
)

// winOrder is one ORDER BY item of a window.
type winOrder struct {
	x               typed
	desc, nullsLast bool
}

// winCall is one window function call.
type winCall struct {
	fn      plan.WindowFunc // Arg and Default are set when built
	arg     *typed
	def     *typed
	part    []typed
	order   []winOrder
	t       row.ColumnType
	w       IntWidth
	col     int // the output column, once built
	partKey string
	// count, for avg over integers or numeric (planned as PostgreSQL
	// computes it, a numeric sum divided by a count; this call is the
	// sum), is the count over the same window.
	count *winCall
}

// winScope collects (resolve false) or resolves (true) the window calls
// of a query level's select list and ORDER BY.
type winScope struct {
	// named are the query level's WINDOW clause definitions
	// (namedwindow.go).
	named   map[string]*pg.WindowDef
	resolve bool
	calls   []*winCall
	byNode  map[*pg.FuncCall]*winCall
}

// hasWindow reports whether the expressions call a window function
// outside subqueries.
func hasWindow(nodes []*pg.Node) bool {
	found := false
	for _, n := range nodes {
		walkExpr(n, func(m *pg.Node) bool {
			if fc := m.GetFuncCall(); fc != nil && fc.Over != nil {
				found = true
			}
			return !found
		})
	}
	return found
}

// windowCall lowers a call with OVER.
func (c *exprCtx) windowCall(fc *pg.FuncCall, name string) (typed, error) {
	if c.win == nil {
		return typed{}, sqlerr.Errorf("42P20", "window functions are not allowed in %s", c.clauseName())
	}
	if c.win.resolve {
		call, ok := c.win.byNode[fc]
		if !ok {
			return typed{}, sqlerr.Errorf(sqlerr.InternalError, "window call %s not collected", name)
		}
		if call.count != nil {
			return avgOfWindows(call), nil
		}
		return typed{e: expr.Column(call.col), t: call.t, w: call.w}, nil
	}
	over, err := overWindow(fc.Over, c.win.named)
	if err != nil {
		return typed{}, err
	}
	inner := *c
	inner.win = nil // window calls cannot be nested
	inner.clause = "window function calls"
	call, err := inner.windowSpec(fc, over, name)
	if err != nil {
		return typed{}, err
	}
	if c.win.byNode == nil {
		c.win.byNode = map[*pg.FuncCall]*winCall{}
	}
	c.win.byNode[fc] = call
	c.win.calls = append(c.win.calls, call)
	if call.count != nil {
		c.win.calls = append(c.win.calls, call.count)
	}
	return typed{e: expr.TypedNull(call.t.Type), t: call.t, w: call.w}, nil
}

// windowSpec lowers a window call's function, arguments and window (over:
// the call's OVER with named windows resolved).
func (c *exprCtx) windowSpec(fc *pg.FuncCall, over *pg.WindowDef, name string) (*winCall, error) {
	switch {
	case fc.AggDistinct:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DISTINCT is not implemented for window functions")
	case fc.AggFilter != nil:
		return nil, sqlerr.Unsupported("FILTER in window functions")
	case len(fc.AggOrder) > 0:
		return nil, sqlerr.Unsupported("ORDER BY in window function arguments")
	}
	call := &winCall{fn: plan.WindowFunc{Arg: -1, Default: -1}}
	for _, n := range over.PartitionClause {
		x, err := c.lower(n)
		if err != nil {
			return nil, err
		}
		call.part = append(call.part, x)
	}
	for _, n := range over.OrderClause {
		sb := n.GetSortBy()
		if sb == nil || sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return nil, sqlerr.Unsupported("this ORDER BY in a window")
		}
		x, err := c.lower(sb.Node)
		if err != nil {
			return nil, err
		}
		desc, nullsLast := sortDirection(sb)
		call.order = append(call.order, winOrder{x: x, desc: desc, nullsLast: nullsLast})
	}
	frame, err := c.windowFrame(over, call.order)
	if err != nil {
		return nil, err
	}
	call.fn.Frame = frame
	if err := c.windowFunction(call, fc, name); err != nil {
		return nil, err
	}
	return call, nil
}

// windowFrame converts the frame options.
func (c *exprCtx) windowFrame(over *pg.WindowDef, order []winOrder) (plan.WindowFrame, error) {
	o := over.FrameOptions
	rangeOffset := o&frameRange != 0 && o&(frameStartOffsetPre|frameStartOffsetFol|frameEndOffsetPre|frameEndOffsetFol) != 0
	switch {
	case rangeOffset && len(order) != 1:
		return plan.WindowFrame{}, sqlerr.New("42P20", "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
	case rangeOffset && order[0].x.t.Type != row.TypeInt64 && !typedRange(order[0].x.t.Type):
		return plan.WindowFrame{}, sqlerr.Unsupported("RANGE with offset PRECEDING/FOLLOWING for column type " + order[0].x.t.Type.PGName())
	case o&frameGroups != 0 && len(over.OrderClause) == 0:
		return plan.WindowFrame{}, sqlerr.New("42P20", "GROUPS mode requires an ORDER BY clause")
	case o&frameStartCurrent != 0 && o&frameEndOffsetPre != 0:
		return plan.WindowFrame{}, sqlerr.New("42P20", "frame starting from current row cannot have preceding rows")
	case o&frameStartOffsetFol != 0 && o&(frameEndOffsetPre|frameEndCurrent) != 0:
		return plan.WindowFrame{}, sqlerr.New("42P20", "frame starting from following row cannot have preceding rows")
	}
	fr := plan.WindowFrame{Rows: o&frameRows != 0, Groups: o&frameGroups != 0}
	switch {
	case o&frameExcludeCurrentRow != 0:
		fr.Exclude = plan.ExcludeCurrentRow
	case o&frameExcludeGroup != 0:
		fr.Exclude = plan.ExcludeGroup
	case o&frameExcludeTies != 0:
		fr.Exclude = plan.ExcludeTies
	}
	offset := func(n *pg.Node, what string) (int64, error) {
		v, null, err := c.p.constInt(n, what)
		if err != nil {
			if code := sqlerr.Code(err); code == "2201W" || code == "2201X" {
				return 0, sqlerr.Errorf("22013", "%s must not be negative", what)
			}
			return 0, err
		}
		if null {
			return 0, sqlerr.Errorf("22004", "%s must not be null", what)
		}
		return v, nil
	}
	typed := rangeOffset && order[0].x.t.Type != row.TypeInt64
	bound := func(b *plan.FrameBound, n *pg.Node, what string) error {
		if typed {
			t, err := c.rangeTarget(n, what, b.Kind, order[0])
			b.RangeTarget = t
			return err
		}
		v, err := offset(n, what)
		b.Offset = v
		return err
	}
	var err error
	switch {
	case o&frameStartUnboundedPre != 0:
		fr.Start.Kind = plan.UnboundedPreceding
	case o&frameStartCurrent != 0:
		fr.Start.Kind = plan.CurrentRow
	case o&frameStartOffsetPre != 0:
		fr.Start.Kind = plan.Preceding
		err = bound(&fr.Start, over.StartOffset, "frame starting offset")
	case o&frameStartOffsetFol != 0:
		fr.Start.Kind = plan.Following
		err = bound(&fr.Start, over.StartOffset, "frame starting offset")
	default:
		return plan.WindowFrame{}, sqlerr.Unsupported("this window frame start")
	}
	if err != nil {
		return plan.WindowFrame{}, err
	}
	switch {
	case o&frameEndUnboundedFol != 0:
		fr.End.Kind = plan.UnboundedFollowing
	case o&frameEndCurrent != 0:
		fr.End.Kind = plan.CurrentRow
	case o&frameEndOffsetPre != 0:
		fr.End.Kind = plan.Preceding
		err = bound(&fr.End, over.EndOffset, "frame ending offset")
	case o&frameEndOffsetFol != 0:
		fr.End.Kind = plan.Following
		err = bound(&fr.End, over.EndOffset, "frame ending offset")
	default:
		return plan.WindowFrame{}, sqlerr.Unsupported("this window frame end")
	}
	return fr, err
}

// windowFunction checks the function and its arguments.
func (c *exprCtx) windowFunction(call *winCall, fc *pg.FuncCall, name string) error {
	args := fc.Args
	want := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi || fc.AggStar && name != "count" {
			return sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(args))
		}
		return nil
	}
	value := func() error {
		x, err := c.lower(args[0])
		if err != nil {
			return err
		}
		call.arg, call.t, call.w = &x, row.ColumnType{Type: x.t.Type, Nullable: true}, x.w
		return nil
	}
	constArg := func(i int) (int64, error) { return c.windowInt(args[i], name) }
	call.t, call.fn.Func = row.ColumnType{Type: row.TypeInt64}, plan.WindowFuncKind(name)
	switch name {
	case "row_number", "rank", "dense_rank":
		return want(0, 0)
	case "percent_rank", "cume_dist":
		call.t = row.ColumnType{Type: row.TypeFloat64}
		return want(0, 0)
	case "ntile":
		if err := want(1, 1); err != nil {
			return err
		}
		n, err := c.windowInt(args[0], "ntile")
		if err != nil {
			return err
		}
		if n <= 0 {
			return sqlerr.New("22014", "argument of ntile must be greater than zero")
		}
		call.fn.N = n
		return nil
	case "lag", "lead":
		if err := want(1, 3); err != nil {
			return err
		}
		if err := value(); err != nil {
			return err
		}
		call.fn.N = 1
		if len(args) > 1 {
			n, err := constArg(1)
			if err != nil {
				return err
			}
			call.fn.N = n
		}
		if len(args) > 2 {
			d, err := c.lowerTyped(args[2])
			if err != nil {
				return err
			}
			xs, err := c.unify([]typed{*call.arg, d})
			if err != nil {
				return err
			}
			call.arg, call.def = &xs[0], &xs[1]
			call.t.Type = xs[0].t.Type
		}
		return nil
	case "first_value", "last_value":
		if err := want(1, 1); err != nil {
			return err
		}
		return value()
	case "nth_value":
		if err := want(2, 2); err != nil {
			return err
		}
		if err := value(); err != nil {
			return err
		}
		n, err := constArg(1)
		if err != nil {
			return err
		}
		if n <= 0 {
			return sqlerr.New("22016", "argument of nth_value must be greater than zero")
		}
		call.fn.N = n
		return nil
	}
	if !isAggregate(name) {
		return sqlerr.Errorf(sqlerr.WrongObjectType, "OVER specified, but %s is not a window function nor an aggregate function", name)
	}
	if name == "jsonb_agg" || name == "jsonb_object_agg" || name == "array_agg" || name == "json_agg" || name == "json_object_agg" {
		return sqlerr.Unsupported(name + " as a window function")
	}
	return c.windowAggregate(call, fc, name)
}

// windowInt is a window function's integer argument, which Tandem
// takes only as a constant (PostgreSQL evaluates it per row).
func (c *exprCtx) windowInt(n *pg.Node, name string) (int64, error) {
	k := &exprCtx{p: c.p, scope: &scope{}, clause: "window function arguments"}
	x, err := k.lowerAs(n, row.TypeInt64)
	if err != nil {
		if isUndefinedName(err) {
			return 0, sqlerr.Unsupported("a non-constant argument of " + name)
		}
		return 0, err
	}
	if x.t.Type != row.TypeInt64 {
		return 0, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s with a %s argument does not exist", name, x.t.Type.PGName())
	}
	d, err := x.e.Eval(nil)
	if err != nil {
		return 0, err
	}
	if d.IsNull() {
		return 0, sqlerr.Unsupported("a NULL argument of " + name)
	}
	return d.Int64(), nil
}

// windowAggregate types an aggregate over a window frame.
func (c *exprCtx) windowAggregate(call *winCall, fc *pg.FuncCall, name string) error {
	call.fn.Func = plan.WinAggregate
	switch name {
	case "count", "sum", "avg", "min", "max":
	default:
		return sqlerr.Unsupported(name + " as a window function")
	}
	if fc.AggStar {
		if name != "count" {
			return sqlerr.Errorf(sqlerr.SyntaxError, "%s(*) is not valid", name)
		}
		call.fn.Agg = plan.AggCountStar
		return nil
	}
	if len(fc.Args) != 1 {
		return sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s takes exactly one argument", name)
	}
	x, err := c.lower(fc.Args[0])
	if err != nil {
		return err
	}
	call.arg = &x
	call.fn.Agg = plan.AggregateFunc(name)
	switch name {
	case "count":
		call.t = row.ColumnType{Type: row.TypeInt64}
	case "sum":
		if x.t.Type != row.TypeInt64 && x.t.Type != row.TypeFloat64 && x.t.Type != row.TypeInterval && x.t.Type != row.TypeNumeric {
			return sqlerr.Errorf(sqlerr.UndefinedFunction, "function sum(%s) does not exist", x.t.Type.PGName())
		}
		call.t = row.ColumnType{Type: x.t.Type, Nullable: true}
	case "avg":
		switch {
		case x.t.Type == row.TypeInterval:
			call.t = row.ColumnType{Type: row.TypeInterval, Nullable: true}
		case x.t.Type == row.TypeFloat64:
			call.t = row.ColumnType{Type: row.TypeFloat64, Nullable: true}
		case x.t.Type == row.TypeInt64 || x.t.Type == row.TypeNumeric:
			// A numeric result, as PostgreSQL's: the exact sum over
			// the count (avgOfWindows).
			call.fn.Agg = plan.AggSum
			call.t = row.ColumnType{Type: x.t.Type, Nullable: true}
			count := *call
			count.fn.Agg = plan.AggCount
			count.t = row.ColumnType{Type: row.TypeInt64}
			call.count = &count
		default:
			return sqlerr.Errorf(sqlerr.UndefinedFunction, "function avg(%s) does not exist", x.t.Type.PGName())
		}
	case "min", "max":
		if x.t.Type == row.TypeNull {
			return sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(unknown) is not unique", name)
		}
		call.t, call.w = row.ColumnType{Type: x.t.Type, Nullable: true}, x.w
	}
	return nil
}

// buildWindows adds the collected window calls to r: their expressions
// as extra columns, then one Window node per distinct (PARTITION BY,
// ORDER BY), and records each call's output column. r's columns keep
// their positions, so subqueries already attached to r stay valid.
//
// The first keys columns of a correlated query level are its outer
// values (apply.go): every window is partitioned by them first.
func buildWindows(r *rel, ws *winScope, keys int) *rel {
	n := r.arity()
	es := columns(n)
	s := &scope{cols: append([]column(nil), r.scope.cols...)}
	colOf := func(x typed) int {
		if x.e.Op == expr.OpColumn && x.e.Index < n {
			return x.e.Index
		}
		for i := n; i < len(es); i++ {
			if es[i].Equal(x.e) {
				return i
			}
		}
		es = append(es, x.e)
		s.cols = append(s.cols, column{name: "?window?", typ: x.t, w: x.w, hidden: true})
		return len(es) - 1
	}
	type window struct {
		part  []int
		order []plan.ColumnOrder
		calls []*winCall
	}
	var windows []*window
	byKey := map[string]*window{}
	for _, call := range ws.calls {
		part := identityInts(keys)
		for _, x := range call.part {
			part = append(part, colOf(x))
		}
		var order []plan.ColumnOrder
		for _, o := range call.order {
			order = append(order, plan.ColumnOrder{Column: colOf(o.x), Desc: o.desc, NullsLast: o.nullsLast})
		}
		if call.arg != nil {
			call.fn.Arg = colOf(*call.arg)
		}
		if call.def != nil {
			call.fn.Default = colOf(*call.def)
		}
		key := fmt.Sprint(part, order)
		w := byKey[key]
		if w == nil {
			w = &window{part: part, order: order}
			byKey[key] = w
			windows = append(windows, w)
		}
		w.calls = append(w.calls, call)
	}
	subs := r.subs
	r.project(es, s)
	cur := r.plan()
	for _, w := range windows {
		var funcs []plan.WindowFunc
		for _, call := range w.calls {
			funcs = append(funcs, call.fn)
			call.col = len(s.cols)
			s.cols = append(s.cols, column{name: "?window?", typ: call.t, w: call.w, hidden: true})
		}
		cur = plan.NewWindow(cur, w.part, w.order, funcs...)
	}
	out := newRel(cur, s)
	out.subs = subs
	return out
}

// avgOfWindows is avg over a window of integers or numerics: the sum (as
// numeric) divided by the count of non-NULL values, NULL over none,
// with PostgreSQL's numeric division and display scale, as the grouped
// avg (aggscope.go, avgNumeric).
func avgOfWindows(sum *winCall) typed {
	s := expr.Column(sum.col)
	if sum.t.Type != row.TypeNumeric {
		s = expr.Cast(s, row.TypeNumeric)
	}
	n := expr.Cast(expr.Column(sum.count.col), row.TypeNumeric)
	return typed{e: expr.Call(expr.FuncDiv, s, n), t: row.ColumnType{Type: row.TypeNumeric, Nullable: true}}
}
