package render

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// columnSet says which input columns some expressions read. Operators
// decode only those: a text or bytes datum with an escaped byte is copied
// when decoded, so decoding a wide column nobody reads would copy every
// row's payload (a 1 KiB random value almost always holds a 0x00 byte).
type columnSet []bool

// usedColumns returns the columns referenced by exprs (at any depth) and by
// the projection indices cols.
func usedColumns(exprs []expr.Expr, cols []int) columnSet {
	var s columnSet
	mark := func(c int) {
		if c < 0 {
			return
		}
		for len(s) <= c {
			s = append(s, false)
		}
		s[c] = true
	}
	var walk func(e *expr.Expr)
	walk = func(e *expr.Expr) {
		if e.Op == expr.OpColumn {
			mark(e.Index)
		}
		for i := range e.Args {
			walk(&e.Args[i])
		}
	}
	for i := range exprs {
		walk(&exprs[i])
	}
	for _, c := range cols {
		mark(c)
	}
	return s
}

// rowDecoder decodes the used columns of rows, leaving NULL in the others
// so that column positions (and the row's arity) are kept. The whole row is
// still checked for well-formedness, as a full decode would, unless prefix
// is set.
//
// With prefix set (readers of an index's rows, which the engine encoded),
// the first row that decodes is walked in full and sets the arity; every
// later row is read only up to its last used column (row.UnpackUsed), its
// unused columns before that stepped over, and given that arity: every row
// of a collection has the same. A wide column after the last one used (a
// KEY VALUE source's value) then costs nothing.
type rowDecoder struct {
	used   columnSet
	ends   []int
	prefix bool
	// arity is the collection's, once a prefix decoder has learned it.
	arity      int
	arityKnown bool
}

// decode returns the datums of r in dst[:0]; used text and bytes datums
// alias r as in row.Row.UnpackInto.
func (d *rowDecoder) decode(r row.Row, dst []row.Datum) ([]row.Datum, error) {
	if d.arityKnown {
		return r.UnpackUsed(dst, d.used, d.arity)
	}
	var err error
	d.ends, err = r.Spans(d.ends[:0])
	if err != nil {
		return dst[:0], fmt.Errorf("unpack: %w", err)
	}
	dst = dst[:0]
	start := 0
	for i, end := range d.ends {
		if i < len(d.used) && d.used[i] {
			v, err := r[start:end].Column(0)
			if err != nil {
				return dst, fmt.Errorf("unpack column %d: %w", i, err)
			}
			dst = append(dst, v)
		} else {
			dst = append(dst, row.Null())
		}
		start = end
	}
	if d.prefix {
		d.arity, d.arityKnown = len(dst), true
	}
	return dst, nil
}

// knownArity returns the arity a prefix decoder has learned.
func (d *rowDecoder) knownArity() (int, bool) { return d.arity, d.arityKnown }
