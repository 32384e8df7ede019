package planner

import (
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// fastPath decides whether r, a top-level query, can be answered from an
// existing index without a dataflow: r must be a map/filter/project of
// one indexed collection. When the filter fixes every key column of an
// index to literals (by = or IN), the read is a key lookup; otherwise it
// walks the whole index.
func (p *Planner) fastPath(r *rel) *FastPath {
	if r.base.Get == nil {
		return nil
	}
	rel, ok := p.relations[r.base.Get.ID]
	if !ok || rel.Plan != nil {
		return nil
	}
	var best *FastPath
	for _, ix := range rel.Indexes {
		if p.Cluster != "" && ix.Cluster != p.Cluster {
			continue
		}
		fp := &FastPath{Index: ix.ID, On: rel.ID, MFP: r.mfp}
		if keys, ok := lookupKeys(ix.Keys, r.mfp.Predicates, rel.Desc.Types, r.baseArity); ok {
			fp.Keys = keys
			return fp
		}
		if best == nil {
			best = fp
		}
	}
	return best
}

// maxLookupKeys bounds the key combinations an IN list may expand to.
const maxLookupKeys = 1024

// lookupKeys returns the key rows fixed by predicates of the form
// column = literal or column IN (literals...) for every key expression
// (which must be plain columns), or false.
func lookupKeys(keys []expr.Expr, preds []expr.Expr, types []row.ColumnType, arity int) ([]row.Row, bool) {
	if len(keys) == 0 {
		return nil, false
	}
	choices := make([][]row.Datum, len(keys))
	for k, key := range keys {
		if key.Op != expr.OpColumn || key.Index >= arity {
			return nil, false
		}
		for _, pr := range preds {
			for _, cj := range splitAnd(pr) {
				if vals, ok := literalsFor(cj, key.Index, types[key.Index].Type); ok {
					choices[k] = vals
					break
				}
			}
			if choices[k] != nil {
				break
			}
		}
		if choices[k] == nil {
			return nil, false
		}
	}
	out := []row.Row{nil}
	for _, vals := range choices {
		var next []row.Row
		for _, prefix := range out {
			for _, v := range vals {
				next = append(next, row.AppendDatums(append(row.Row(nil), prefix...), v))
			}
		}
		if len(next) > maxLookupKeys {
			return nil, false
		}
		out = next
	}
	return out, true
}

// literalsFor recognises col = lit, lit = col and col IN (lits...),
// returning the literals converted to the column's type. NULL literals
// never match and are dropped.
func literalsFor(e expr.Expr, col int, t row.Type) ([]row.Datum, bool) {
	isCol := func(x expr.Expr) bool { return x.Op == expr.OpColumn && x.Index == col }
	conv := func(xs []expr.Expr) ([]row.Datum, bool) {
		var out []row.Datum
		for _, x := range xs {
			d, ok := x.IsLiteral()
			if !ok {
				return nil, false
			}
			if d.IsNull() {
				continue
			}
			c, err := expr.CastDatum(d, t)
			if err != nil || d.Type() != t && !(d.Type() == row.TypeInt64 && t == row.TypeFloat64) {
				return nil, false
			}
			out = append(out, c)
		}
		return out, true
	}
	switch {
	case e.Op == expr.OpCall && e.Func == expr.FuncEq && len(e.Args) == 2:
		if isCol(e.Args[0]) {
			return conv(e.Args[1:])
		}
		if isCol(e.Args[1]) {
			return conv(e.Args[:1])
		}
	case e.Op == expr.OpIn && len(e.Args) > 1 && isCol(e.Args[0]):
		return conv(e.Args[1:])
	}
	return nil, false
}
