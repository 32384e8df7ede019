package reference

import (
	"fmt"
	"sort"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Result is a collection's contents at one time: its rows and its error
// collection (rows Pack(Text(SQLSTATE), Text(message)), see ErrorRow).
type Result struct {
	Rows   Collection
	Errors Collection
}

func newResult() Result { return Result{Rows: Collection{}, Errors: Collection{}} }

// Errs returns the errors with positive multiplicity, sorted: the errors a
// read of the collection reports.
func (r Result) Errs() []error {
	var out []error
	for _, k := range sortedKeys(r.Errors) {
		if r.Errors[k] > 0 {
			out = append(out, DecodeErrorRow(row.Row(k)))
		}
	}
	return out
}

// ErrorRow encodes an evaluation error as an error-collection row, as the
// engine does (expr.ErrorRow).
func ErrorRow(err error) row.Row { return expr.ErrorRow(err) }

// DecodeErrorRow turns an error row back into an error.
func DecodeErrorRow(r row.Row) error {
	ds, err := r.Unpack()
	if err != nil || len(ds) != 2 {
		return &evalError{"XX000", fmt.Sprintf("undecodable error row %x", []byte(r))}
	}
	return &evalError{ds[0].Text(), ds[1].Text()}
}

// Evaluate computes, by brute force, every object a dataflow builds and
// every index it exports, at one time t: inputs holds each imported
// collection (source imports by their id, index imports by the id of the
// collection they index) accumulated as of t, t >= desc.AsOf. Evaluation
// commutes with accumulation, so the reference needs no notion of time
// beyond that: Constant rows exist at as_of, hence at every t it is asked
// about. Until is not modelled (reads must be before it). The result maps
// object ids and index export ids to their contents.
func Evaluate(desc *plan.DataflowDescription, inputs map[plan.GlobalID]Result) (map[plan.GlobalID]Result, error) {
	env := map[plan.GlobalID]Result{}
	for _, s := range desc.SourceImports {
		in, ok := inputs[s.ID]
		if !ok {
			return nil, fmt.Errorf("reference: no input for source %s", s.ID)
		}
		env[s.ID] = in
	}
	for _, ix := range desc.IndexImports {
		in, ok := inputs[ix.On]
		if !ok {
			return nil, fmt.Errorf("reference: no input for indexed collection %s", ix.On)
		}
		env[ix.On] = in
	}
	out := map[plan.GlobalID]Result{}
	for _, b := range desc.ObjectsToBuild {
		r, err := EvalPlan(&b.Plan, env)
		if err != nil {
			return nil, fmt.Errorf("reference: build %s: %w", b.ID, err)
		}
		env[b.ID] = r
		out[b.ID] = r
	}
	for _, ex := range desc.IndexExports {
		c, ok := env[ex.On]
		if !ok {
			return nil, fmt.Errorf("reference: export %s of unknown %s", ex.ID, ex.On)
		}
		// An index holds the collection's rows; rows whose key cannot be
		// evaluated become errors of the index instead.
		r := newResult()
		r.Errors.addAll(c.Errors)
		for k, n := range c.Rows {
			ds := unpack(k)
			if _, err := evalAll(ex.Key, ds); err != nil {
				r.Errors.add(string(ErrorRow(err)), n)
				continue
			}
			r.Rows.add(k, n)
		}
		out[ex.ID] = r
	}
	return out, nil
}

// EvalPlan evaluates one plan over the collections in env. A plan with a
// temporal filter needs the time of the read: use EvalPlanAt.
func EvalPlan(p *plan.Plan, env map[plan.GlobalID]Result) (Result, error) {
	return evalPlan(p, env, nil)
}

// EvalPlanAt evaluates one plan over the collections in env as a read at
// logical time t (milliseconds since the epoch): a temporal filter keeps
// the rows whose bounds hold with now() = t, compared as a one-shot query
// at t compares them (plan.TemporalFilter.FilterAt). Temporal filters
// inside a recursive node are not modelled.
func EvalPlanAt(p *plan.Plan, env map[plan.GlobalID]Result, t uint64) (Result, error) {
	return evalPlan(p, env, &t)
}

func evalPlan(p *plan.Plan, env map[plan.GlobalID]Result, at *uint64) (Result, error) {
	if p.Recursive != nil {
		return evalRecursive(p.Recursive, env)
	}
	if p.Let != nil {
		return evalLet(p.Let, env, at)
	}
	inputs := make([]Result, 0, 2)
	for _, in := range p.Inputs() {
		if in == nil {
			return Result{}, fmt.Errorf("%s: missing input", p)
		}
		r, err := evalPlan(in, env, at)
		if err != nil {
			return Result{}, err
		}
		inputs = append(inputs, r)
	}
	return applyNode(p, inputs, env, at)
}

// applyNode evaluates one node over its evaluated inputs; at is the time
// of the read, when known.
func applyNode(p *plan.Plan, inputs []Result, env map[plan.GlobalID]Result, at *uint64) (Result, error) {
	out := newResult()
	// Every operator passes its inputs' errors through unchanged (Negate
	// too: an error stays an error) and adds its own.
	for _, in := range inputs {
		out.Errors.addAll(in.Errors)
	}
	switch n := p.Node().(type) {
	case *plan.Get:
		in, ok := env[n.ID]
		if !ok {
			return Result{}, fmt.Errorf("get %s: unknown collection", n.ID)
		}
		return in, nil
	case *plan.Constant:
		for _, r := range n.Rows {
			out.Rows.add(string(row.Pack(r.Datums...)), r.Diff)
		}
	case *plan.Mfp:
		for k, c := range inputs[0].Rows {
			vals, keep, err := n.MFP.Evaluate(unpack(k), nil)
			switch {
			case err != nil:
				out.Errors.add(string(ErrorRow(err)), c)
			case keep:
				out.Rows.add(string(row.Pack(vals...)), c)
			}
		}
	case *plan.Join:
		evalJoin(n, inputs[0], inputs[1], &out)
	case *plan.Reduce:
		evalReduce(n, inputs[0], &out)
	case *plan.Distinct:
		sums, shown := numericKeyed(inputs[0].Rows)
		for k, c := range sums {
			switch {
			case c < 0:
				out.Errors.add(string(ErrorRow(&evalError{"XX000", "distinct: negative multiplicity in input"})), 1)
			case c > 0:
				out.Rows.add(shown[k], 1)
			}
		}
	case *plan.Threshold:
		sums, shown := numericKeyed(inputs[0].Rows)
		for k, c := range sums {
			if c > 0 {
				out.Rows.add(shown[k], c)
			}
		}
	case *plan.Union:
		for _, in := range inputs {
			out.Rows.addAll(in.Rows)
		}
	case *plan.Negate:
		for k, c := range inputs[0].Rows {
			out.Rows.add(k, -c)
		}
	case *plan.TopK:
		evalTopK(n, inputs[0], &out)
	case *plan.Window:
		evalWindow(n, inputs[0], &out)
	case *plan.FlatMap:
		call := n.Call.Prepare()
		for k, c := range inputs[0].Rows {
			var rows []string
			err := call.Eval(unpack(k), func(ds []row.Datum) error {
				r := row.Pack(ds...)
				if n.Ordinality {
					r = row.AppendDatum(r, row.Int64(int64(len(rows)+1)))
				}
				rows = append(rows, k+string(r))
				return nil
			})
			if err != nil {
				out.Errors.add(string(ErrorRow(err)), c)
				continue
			}
			for _, r := range rows {
				out.Rows.add(r, c)
			}
		}
	case *plan.TemporalFilter:
		if at == nil {
			return Result{}, fmt.Errorf("reference: a temporal filter needs the time of the read (EvalPlanAt)")
		}
		for k, c := range inputs[0].Rows {
			ds := unpack(k)
			m := n.FilterAt(len(ds), *at)
			_, keep, err := m.Evaluate(ds, nil)
			switch {
			case err != nil:
				out.Errors.add(string(ErrorRow(err)), c)
			case keep:
				out.Rows.add(k, c)
			}
		}
	case *plan.ArrangeBy:
		out.Rows.addAll(inputs[0].Rows)
	default:
		return Result{}, fmt.Errorf("reference: unsupported plan node %s", p)
	}
	return out, nil
}

func evalJoin(j *plan.Join, left, right Result, out *Result) {
	type keyed struct {
		key, row string
		n        int64
	}
	side := func(c Collection, key []expr.Expr) []keyed {
		var ks []keyed
		for k, n := range c {
			vals, err := evalAll(key, unpack(k))
			if err != nil {
				out.Errors.add(string(ErrorRow(err)), n)
				continue
			}
			ks = append(ks, keyed{string(row.Pack(row.NumericKeys(vals)...)), k, n})
		}
		return ks
	}
	ls, rs := side(left.Rows, j.LeftKey), side(right.Rows, j.RightKey)
	for _, l := range ls {
		for _, r := range rs {
			if l.key == r.key {
				out.Rows.add(l.row+r.row, l.n*r.n)
			}
		}
	}
}

var aggKinds = map[plan.AggregateFunc]aggKind{
	plan.AggCountStar: aggCountStar, plan.AggCount: aggCount, plan.AggSum: aggSum,
	plan.AggMin: aggMin, plan.AggMax: aggMax, plan.AggAvg: aggAvg,
	plan.AggStringAgg: aggStringAgg, plan.AggVarPop: aggVarPop, plan.AggVarSamp: aggVarSamp,
	plan.AggStddevPop: aggStddevPop, plan.AggStddevSamp: aggStddevSamp, plan.AggSumSquares: aggSumSquares,
	plan.AggJSONAgg: aggJSONAgg, plan.AggJSONObjectAgg: aggJSONObjectAgg, plan.AggConcat: aggConcat,
}

func evalReduce(red *plan.Reduce, in Result, out *Result) {
	// group key -> (argument tuple -> multiplicity)
	groups := map[string]Collection{}
	shown := map[string]string{} // group key -> the key as the group shows it
	for k, n := range in.Rows {
		ds := unpack(k)
		key, err := evalAll(red.GroupKey, ds)
		var args []row.Datum
		if err == nil {
			for _, a := range red.Aggregates {
				if a.Func == plan.AggCountStar {
					args = append(args, row.Null())
					continue
				}
				var v row.Datum
				if v, err = a.Expr.Eval(ds); err != nil {
					break
				}
				args = append(args, v)
			}
			if err == nil {
				args, err = appendStringAggArgs(red, ds, args)
			}
		}
		if err != nil {
			out.Errors.add(string(ErrorRow(err)), n)
			continue
		}
		written := string(row.Pack(key...))
		gk := string(row.NumericKeyRow(row.Row(written)))
		showRow(shown, gk, written, n)
		if groups[gk] == nil {
			groups[gk] = Collection{}
		}
		groups[gk].add(string(row.Pack(args...)), n)
	}
	for gk, g := range groups {
		if len(g) == 0 {
			continue // every row cancelled: the group does not exist
		}
		if res, err := reduceGroup(red, g); err != nil {
			out.Errors.add(string(ErrorRow(err)), 1)
		} else {
			out.Rows.add(shown[gk]+string(row.Pack(res...)), 1)
		}
	}
}

func reduceGroup(red *plan.Reduce, g Collection) ([]row.Datum, error) {
	var rows int64
	for _, n := range g {
		if n < 0 {
			return nil, &evalError{"XX000", "reduce: negative multiplicity in input"}
		}
		rows += n
	}
	var res []row.Datum
	for i, a := range red.Aggregates {
		kind, ok := aggKinds[a.Func]
		if !ok {
			return nil, &evalError{"XX000", fmt.Sprintf("unknown aggregate %q", a.Func)}
		}
		if kind == aggStringAgg || kind == aggConcat {
			ordered := stringAgg
			if kind == aggConcat {
				ordered = concatAgg
			}
			d, err := ordered(red, i, g)
			if err != nil {
				return nil, err
			}
			res = append(res, d)
			continue
		}
		var vals []weighted
		for k, n := range g {
			vals = append(vals, weighted{col(unpack(k), i), n})
		}
		d, err := aggregate(kind, a.Distinct, string(a.Func), vals, rows)
		if err != nil {
			return nil, err
		}
		res = append(res, d)
	}
	return res, nil
}

func evalTopK(t *plan.TopK, in Result, out *Result) {
	type entry struct {
		row string
		ds  []row.Datum
		n   int64
	}
	groups := map[string][]entry{}
	for k, n := range in.Rows {
		ds := unpack(k)
		var key []row.Datum
		for _, c := range t.GroupKey {
			key = append(key, col(ds, c).NumericKey())
		}
		gk := string(row.Pack(key...))
		groups[gk] = append(groups[gk], entry{k, ds, n})
	}
	for _, es := range groups {
		negative := false
		for _, e := range es {
			negative = negative || e.n < 0
		}
		if negative {
			out.Errors.add(string(ErrorRow(&evalError{"XX000", "topk: negative multiplicity in input"})), 1)
			continue
		}
		sort.Slice(es, func(i, j int) bool { return topKLess(t.Order, es[i].ds, es[j].ds, es[i].row, es[j].row) })
		// Walk positions 0, 1, ... counting each row n times; keep those
		// in [Offset, Offset+Limit).
		var pos int64
		for _, e := range es {
			lo, hi := pos, pos+e.n // this row occupies positions [lo, hi)
			pos = hi
			from, to := max(lo, t.Offset), hi
			if t.Limit != nil {
				to = min(to, t.Offset+*t.Limit)
			}
			if to > from {
				out.Rows.add(e.row, to-from)
			}
		}
	}
}

// topKLess orders rows by the ORDER BY columns (row.CompareColumns, the
// engine's one comparator), then by encoded row.
func topKLess(order []plan.ColumnOrder, a, b []row.Datum, ra, rb string) bool {
	if c := row.CompareColumns(a, b, order); c != 0 {
		return c < 0
	}
	return ra < rb
}

// col returns column i of ds, or NULL when a malformed plan reads past
// the end (Validate rejects such plans; the reference must not panic).
func col(ds []row.Datum, i int) row.Datum {
	if i < 0 || i >= len(ds) {
		return row.Null()
	}
	return ds[i]
}

func evalAll(es []expr.Expr, ds []row.Datum) ([]row.Datum, error) {
	out := make([]row.Datum, 0, len(es))
	for i := range es {
		v, err := es[i].Eval(ds)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// unpack decodes a row the reference itself encoded; a corrupt one is a
// bug in the caller's inputs, reported as an empty tuple that fails later
// evaluation rather than a panic.
func unpack(k string) []row.Datum {
	ds, err := row.Row(k).Unpack()
	if err != nil {
		return nil
	}
	return ds
}

func (c Collection) addAll(d Collection) {
	for k, n := range d {
		c.add(k, n)
	}
}

func sortedKeys(c Collection) []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// numericKeyed is c with its rows as keys: every numeric at its minimal
// display scale, the multiplicities of rows that differ only in scale
// added (Distinct and Threshold group whole rows by SQL equality, as the
// engine's arrangements key them). shown maps each key to the row its
// group shows (showRow).
func numericKeyed(c Collection) (sums Collection, shown map[string]string) {
	sums, shown = Collection{}, map[string]string{}
	for k, n := range c {
		key := string(row.NumericKeyRow(row.Row(k)))
		sums.add(key, n)
		showRow(shown, key, k, n)
	}
	return sums, shown
}

// showRow records written, a row of multiplicity n in the group key, as
// the row the group shows if it is the greatest with a positive
// multiplicity so far: its numerics at the largest scale present, as the
// engine's operators.ShownKey shows a group (a deterministic choice where
// PostgreSQL shows the first row it met). A group with none shows key.
func showRow(shown map[string]string, key, written string, n int64) {
	cur, ok := shown[key]
	switch {
	case n > 0 && (!ok || written > cur):
		shown[key] = written
	case !ok:
		shown[key] = key
	}
}

// evalLet evaluates a Let's value once and its body with the value bound
// to the let's id (in a copy of env: the binding is scoped to the body).
func evalLet(l *plan.Let, env map[plan.GlobalID]Result, at *uint64) (Result, error) {
	if l.Value == nil || l.Body == nil {
		return Result{}, fmt.Errorf("let: missing input")
	}
	value, err := evalPlan(l.Value, env, at)
	if err != nil {
		return Result{}, err
	}
	inner := make(map[plan.GlobalID]Result, len(env)+1)
	for id, r := range env {
		inner[id] = r
	}
	inner[l.ID] = value
	return evalPlan(l.Body, inner, at)
}
