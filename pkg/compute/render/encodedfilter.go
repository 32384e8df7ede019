package render

import (
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// encodedFilter decides an MFP's leading predicates of the shape
// `#c op literal` (op one of = <> < <= > >=) on a row's encoded column,
// before anything is decoded: a snapshot read whose filter keeps few rows
// then decodes only those it keeps.
//
// It is exact because an MFP evaluates its predicates in order, before
// any expression they do not need, and stops at the first that is not
// true: if the first k predicates are all comparisons of an input column
// with a literal, and the bytes show the first j-1 true and the j-th
// false or NULL, the MFP drops the row without error. Bytes decide a
// comparison only when the column has the literal's type and that type's
// SQL comparison is its encoding's order (comparableEncoded); otherwise,
// or when the column cannot be found, decide says nothing and the MFP
// decides. A rejected row is not decoded at all, so, as with the prefix
// decoder, a corruption in its other columns goes unreported. When the
// bytes show every predicate true and the MFP computes no expression, the
// row is kept and only the projection is left to apply (project).
type encodedFilter struct {
	preds []encodedPredicate
	// decidesAll: every predicate of the MFP is in preds, and the MFP
	// computes no expression, so a row none of them rejects is kept
	// and the MFP is only its projection (decide).
	decidesAll bool
	projection []int
}

// encodedPredicate is `#col op lit`, the column on the left.
type encodedPredicate struct {
	col int
	op  expr.Func
	lit []byte // the literal's encoding
}

// newEncodedFilter compiles the leading predicates of m that can be
// decided on encoded columns.
func newEncodedFilter(m *expr.MFP) encodedFilter {
	var f encodedFilter
	for _, p := range m.Predicates {
		ep, ok := encodedComparison(p)
		if !ok {
			break
		}
		f.preds = append(f.preds, ep)
	}
	f.decidesAll = len(f.preds) > 0 && len(f.preds) == len(m.Predicates) && len(m.Expressions) == 0
	f.projection = m.Projection
	return f
}

// encodedComparison matches `#c op literal` and `literal op #c`.
func encodedComparison(e expr.Expr) (encodedPredicate, bool) {
	if e.Op != expr.OpCall || len(e.Args) != 2 {
		return encodedPredicate{}, false
	}
	op := e.Func
	swapped, ok := mirrorComparison(op)
	if !ok {
		return encodedPredicate{}, false
	}
	col, lit := e.Args[0], e.Args[1]
	if col.Op == expr.OpLiteral && lit.Op == expr.OpColumn {
		col, lit, op = lit, col, swapped
	}
	if col.Op != expr.OpColumn || col.Index < 0 || lit.Op != expr.OpLiteral || !comparableEncoded(lit.Value.Type()) {
		return encodedPredicate{}, false
	}
	return encodedPredicate{col: col.Index, op: op, lit: row.Pack(lit.Value)}, true
}

// mirrorComparison returns the comparison op is with its operands swapped; ok is
// false when op is not a comparison.
func mirrorComparison(op expr.Func) (expr.Func, bool) {
	switch op {
	case expr.FuncEq, expr.FuncNeq:
		return op, true
	case expr.FuncLt:
		return expr.FuncGt, true
	case expr.FuncGt:
		return expr.FuncLt, true
	case expr.FuncLte:
		return expr.FuncGte, true
	case expr.FuncGte:
		return expr.FuncLte, true
	}
	return op, false
}

// comparableEncoded reports whether SQL compares two values of type t as
// their encodings compare (expr compares intervals by length, numerics
// and jsonb by value, which their bytes do not follow). NULL is not a
// literal this matches.
func comparableEncoded(t row.Type) bool {
	switch t {
	case row.TypeBool, row.TypeInt64, row.TypeFloat64, row.TypeDate, row.TypeTime, row.TypeTimestamp,
		row.TypeTimestampTZ, row.TypeText, row.TypeBytes, row.TypeUUID:
		return true
	}
	return false
}

// filterVerdict is what the bytes say of a row.
type filterVerdict int

const (
	undecided filterVerdict = iota // the MFP must evaluate the row
	rejected                       // the MFP drops the row without error
	accepted                       // the MFP keeps the row: only its projection is left
)

// decide judges r, a row of the given arity.
func (f *encodedFilter) decide(r row.Row, arity int) filterVerdict {
	for i := range f.preds {
		p := &f.preds[i]
		if p.col >= arity {
			return undecided // an expression's column
		}
		start, end, err := r.ColumnSpan(p.col)
		if err != nil {
			return undecided // the decode reports it
		}
		v := r[start:end]
		if row.EncodedIsNull(v) {
			return rejected // a comparison with NULL is NULL: not true
		}
		c, ok := row.CompareEncoded(v, p.lit)
		if !ok {
			return undecided
		}
		if !compareHolds(p.op, c) {
			return rejected
		}
	}
	if f.decidesAll {
		return accepted
	}
	return undecided
}

// project is the accepted row's output: its projection of datums, in
// dst. ok is false when a projected column is out of range (the MFP
// reports that).
func (f *encodedFilter) project(datums, dst []row.Datum) ([]row.Datum, bool) {
	dst = dst[:0]
	for _, c := range f.projection {
		if c < 0 || c >= len(datums) {
			return dst, false
		}
		dst = append(dst, datums[c])
	}
	return dst, true
}

func compareHolds(op expr.Func, c int) bool {
	switch op {
	case expr.FuncEq:
		return c == 0
	case expr.FuncNeq:
		return c != 0
	case expr.FuncLt:
		return c < 0
	case expr.FuncLte:
		return c <= 0
	case expr.FuncGt:
		return c > 0
	default: // FuncGte
		return c >= 0
	}
}
