package operators

import (
	"github.com/cockroachdb/apd/v3"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// numericSum sums numeric values exactly, as PostgreSQL's sum(numeric):
// any NaN makes the sum NaN, +Infinity and -Infinity together make NaN.
type numericSum struct {
	sum           apd.Decimal
	nan, pos, neg bool
	err           error
}

// exactCtx adds without rounding (precision 0 is exact for addition
// and multiplication in apd).
var exactCtx = apd.Context{MaxExponent: apd.MaxExponent, MinExponent: apd.MinExponent, Traps: apd.DefaultTraps}

func (s *numericSum) add(v row.Datum, n int64) {
	x := v.DecimalDisplay() // the sum's display scale is its inputs' largest
	switch x.Form {
	case apd.NaN, apd.NaNSignaling:
		s.nan = true
		return
	case apd.Infinite:
		if x.Negative {
			s.neg = true
		} else {
			s.pos = true
		}
		return
	}
	var p apd.Decimal
	if _, err := exactCtx.Mul(&p, x, apd.New(n, 0)); err != nil && s.err == nil {
		s.err = err
		return
	}
	if _, err := exactCtx.Add(&s.sum, &s.sum, &p); err != nil && s.err == nil {
		s.err = err
	}
}

func (s *numericSum) result() (row.Datum, error) {
	overflow := Error{Code: CodeNumericOutOfRange, Message: "value overflows numeric format"}
	if s.err != nil {
		return row.Null(), overflow
	}
	var r apd.Decimal
	switch {
	case s.nan || (s.pos && s.neg):
		r.Form = apd.NaN
	case s.pos || s.neg:
		r.Form, r.Negative = apd.Infinite, s.neg
	default:
		r.Set(&s.sum)
	}
	d, err := row.NumericExact(&r)
	if err != nil {
		return row.Null(), overflow
	}
	return d, nil
}
