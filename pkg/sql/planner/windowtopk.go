package planner

import (
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// The top-k pattern: `WHERE rn <= k` (also rn < k, rn = k, k >= rn, ...)
// over `row_number() OVER (PARTITION BY p ORDER BY o) AS rn`. Planned
// literally, the Window numbers every row of every partition and the
// filter drops all but k per partition. windowTopK puts a TopK (limit k
// per partition, in the window's order) under the Window instead: the
// Window then numbers at most k rows per partition, and a change deep in
// a partition reaches it only if it changes the partition's first k.
//
// This is exact because TopK and Window order a partition the same way
// (the ORDER BY columns, ties broken by the whole row: operators.TopKSpec
// is their one definition), so the TopK keeps exactly the rows numbered
// 1..k, and every function of the Window must see the same values there:
// row_number, rank, dense_rank and lag (which read only earlier rows),
// and aggregates, first_value, last_value and nth_value over a ROWS frame
// ending at or before the current row. percent_rank, cume_dist, ntile,
// lead and RANGE frames (which reach the current row's later peers) read
// later rows, so a Window with any of them is left as it is; so is a
// filter on rank() or dense_rank(), which count ties: `rank() <= k` can
// keep more than k rows. The filter itself stays (it is what drops the
// rows of `rn = k` before the k-th).

// windowTopK returns pl with the top-k pattern planned as a TopK. It
// copies the nodes it changes (plans share subtrees) and only those.
func windowTopK(pl plan.Plan, env plan.Env) plan.Plan {
	if l := pl.Let; l != nil {
		value, body := windowTopK(*l.Value, env), windowTopK(*l.Body, letEnv(l, env))
		if value == *l.Value && body == *l.Body {
			return pl
		}
		return plan.NewLet(l.ID, value, body)
	}
	pl = mapInputs(pl, func(in plan.Plan) plan.Plan { return windowTopK(in, env) })
	if pl.Mfp == nil || pl.Mfp.Input.Window == nil {
		return pl
	}
	w := pl.Mfp.Input.Window
	limit, ok := rowNumberLimit(pl.Mfp.MFP.Predicates, w, env)
	if !ok || !prefixOnly(w.Funcs) {
		return pl
	}
	tk := plan.NewTopK(*w.Input, w.PartitionBy, w.OrderBy, &limit, 0)
	win := plan.NewWindow(tk, w.PartitionBy, w.OrderBy, w.Funcs...)
	return plan.NewMfp(win, pl.Mfp.MFP)
}

// rowNumberLimit returns the smallest k such that the predicates drop
// every row whose row_number (a function of w, column arity(w input)+f)
// is above k, when some predicate bounds a row_number by a literal.
func rowNumberLimit(preds []expr.Expr, w *plan.Window, env plan.Env) (int64, bool) {
	found := false
	var best int64
	for _, pr := range preds {
		for _, cj := range splitAnd(pr) {
			k, ok := rowNumberBound(cj, w, env)
			if ok && (!found || k < best) {
				best, found = k, true
			}
		}
	}
	return max(best, 0), found
}

// rowNumberBound recognises rn <= k, rn < k, rn = k and their mirrors,
// with rn a row_number column of w, and returns the largest row number
// the predicate keeps.
func rowNumberBound(e expr.Expr, w *plan.Window, env plan.Env) (int64, bool) {
	if e.Op != expr.OpCall || len(e.Args) != 2 {
		return 0, false
	}
	f := e.Func
	a, b := e.Args[0], e.Args[1]
	if a.Op == expr.OpLiteral {
		// k op rn: mirror to rn op' k.
		a, b = b, a
		switch f {
		case expr.FuncGte:
			f = expr.FuncLte
		case expr.FuncGt:
			f = expr.FuncLt
		case expr.FuncLte, expr.FuncLt:
			return 0, false
		}
	}
	if a.Op != expr.OpColumn || !isRowNumber(a.Index, w, env) {
		return 0, false
	}
	v, ok := b.IsLiteral()
	if !ok || v.Type() != row.TypeInt64 || v.IsNull() {
		return 0, false
	}
	k := v.Int64()
	switch f {
	case expr.FuncLte, expr.FuncEq:
		return k, true
	case expr.FuncLt:
		return k - 1, true
	}
	return 0, false
}

// isRowNumber reports whether column col of w's output is a row_number.
// The Window's output is its input's columns, then one per function.
func isRowNumber(col int, w *plan.Window, env plan.Env) bool {
	in := windowInputArity(w, env)
	f := col - in
	return in >= 0 && f >= 0 && f < len(w.Funcs) && w.Funcs[f].Func == plan.WinRowNumber
}

// windowInputArity is the number of columns of w's input (-1 when
// unknown).
func windowInputArity(w *plan.Window, env plan.Env) int { return arityOf(*w.Input, env) }

// arityOf is the number of columns of pl (-1 when a Get is unknown).
func arityOf(pl plan.Plan, env plan.Env) int {
	switch n := pl.Node().(type) {
	case *plan.Get:
		d, ok := env(n.ID)
		if !ok {
			return -1
		}
		return d.Arity()
	case *plan.Constant:
		return n.Desc.Arity()
	case *plan.Mfp:
		return len(n.MFP.Projection)
	case *plan.Join:
		l, r := arityOf(*n.Left, env), arityOf(*n.Right, env)
		if l < 0 || r < 0 {
			return -1
		}
		return l + r
	case *plan.Reduce:
		return len(n.GroupKey) + len(n.Aggregates)
	case *plan.Window:
		in := arityOf(*n.Input, env)
		if in < 0 {
			return -1
		}
		return in + len(n.Funcs)
	case *plan.Union:
		if len(n.Inputs) == 0 {
			return -1
		}
		return arityOf(n.Inputs[0], env)
	case *plan.Let:
		return arityOf(*n.Body, letEnv(n, env))
	}
	if ins := pl.Inputs(); len(ins) == 1 {
		return arityOf(*ins[0], env)
	}
	return -1
}

// prefixOnly reports whether every function reads only the rows up to
// the current one in the window's order.
func prefixOnly(fs []plan.WindowFunc) bool {
	for _, f := range fs {
		switch f.Func {
		case plan.WinRowNumber, plan.WinRank, plan.WinDenseRank, plan.WinLag:
		case plan.WinAggregate, plan.WinFirstValue, plan.WinLastValue, plan.WinNthValue:
			if !f.Frame.Rows || (f.Frame.End.Kind != plan.CurrentRow && f.Frame.End.Kind != plan.Preceding) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// letEnv is env with l's binding described as its value (when that is
// known).
func letEnv(l *plan.Let, env plan.Env) plan.Env {
	d, err := l.Value.Desc(env)
	if err != nil {
		return env
	}
	return func(id plan.GlobalID) (row.RelationDesc, bool) {
		if id == l.ID {
			return d, true
		}
		return env(id)
	}
}
