package render

import (
	"bytes"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// seekTypes are the key column types whose SQL equality is byte equality
// of the encoded datum, so a literal's encoding finds exactly the rows an
// equality predicate keeps (numeric 1.0 = 1.00 and float -0 = 0 are not).
var seekTypes = map[row.Type]bool{row.TypeInt64: true, row.TypeText: true, row.TypeBytes: true, row.TypeBool: true}

// seekKeys returns, sorted and distinct, the index keys that can hold the
// rows m keeps: when the index is keyed by one column c of a seekable type
// (desc) and a top-level conjunct of m's predicates is c = literal or
// c IN (literals), the rows of other keys all fail that conjunct. The
// predicates are still evaluated on every row read. ok is false when no
// such conjunct exists.
func seekKeys(m *expr.MFP, key []expr.Expr, desc row.RelationDesc) (keys [][]byte, ok bool) {
	if len(key) != 1 || key[0].Op != expr.OpColumn {
		return nil, false
	}
	c := key[0].Index
	if c < 0 || c >= len(desc.Types) || !seekTypes[desc.Types[c].Type] {
		return nil, false
	}
	typ := desc.Types[c].Type
	for _, p := range m.Predicates {
		for _, cj := range conjuncts(p) {
			if lits, ok := keyLiterals(cj, c, typ); ok {
				for _, d := range lits {
					keys = append(keys, row.Pack(d.NumericKey()))
				}
				slices.SortFunc(keys, bytes.Compare)
				return slices.CompactFunc(keys, bytes.Equal), true
			}
		}
	}
	return nil, false
}

func conjuncts(p expr.Expr) []expr.Expr {
	if p.Op != expr.OpAnd {
		return []expr.Expr{p}
	}
	var out []expr.Expr
	for _, a := range p.Args {
		out = append(out, conjuncts(a)...)
	}
	return out
}

// keyLiterals returns the literals of e when e is column c = literal
// (either side) or c IN (literals), every literal of type typ or NULL.
func keyLiterals(e expr.Expr, c int, typ row.Type) ([]row.Datum, bool) {
	isCol := func(x expr.Expr) bool { return x.Op == expr.OpColumn && x.Index == c }
	lit := func(x expr.Expr) (row.Datum, bool) {
		if x.Op != expr.OpLiteral || !(x.Value.IsNull() || x.Value.Type() == typ) {
			return row.Datum{}, false
		}
		return x.Value, true
	}
	switch {
	case e.Op == expr.OpCall && e.Func == expr.FuncEq && len(e.Args) == 2:
		a, b := e.Args[0], e.Args[1]
		if !isCol(a) {
			a, b = b, a
		}
		if d, ok := lit(b); ok && isCol(a) {
			return []row.Datum{d}, true
		}
	case e.Op == expr.OpIn && len(e.Args) > 1 && isCol(e.Args[0]):
		var out []row.Datum
		for _, x := range e.Args[1:] {
			d, ok := lit(x)
			if !ok {
				return nil, false
			}
			out = append(out, d)
		}
		return out, true
	}
	return nil, false
}
