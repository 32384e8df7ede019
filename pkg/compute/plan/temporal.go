package plan

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TemporalFilter keeps each row of Input while every bound holds with
// now() equal to the logical time, so that rows enter and leave the
// collection as time passes with no change to Input (docs/design/time.md).
// Logical times are milliseconds since the Unix epoch; a bound's Expr is
// a timestamptz (microseconds) over Input's columns. The output rows are
// Input's rows unchanged.
//
// Each row's bounds give it a Validity [Lower, Upper) of logical times. A
// row that enters Input at time t with diff d leaves the filter as d at
// max(t, Lower) and, when Upper is bounded, -d at Upper; a row whose
// window is empty or closed by t produces nothing. A retraction of the
// row produces the opposite pair, so it cancels what remains of the
// insertion's pair. An error evaluating a bound is an error row at the
// input's time and diff.
type TemporalFilter struct {
	Input  *Plan           `json:"input"`
	Bounds []TemporalBound `json:"bounds"`
}

// TemporalOp is the comparison of a bound: Expr Op now().
type TemporalOp string

// The comparisons a bound may make.
const (
	TemporalLt  TemporalOp = "<"
	TemporalLte TemporalOp = "<="
	TemporalGt  TemporalOp = ">"
	TemporalGte TemporalOp = ">="
	TemporalEq  TemporalOp = "="
)

// TemporalBound is one conjunct `Expr Op now()` of a temporal filter.
type TemporalBound struct {
	Expr expr.Expr  `json:"expr"`
	Op   TemporalOp `json:"op"`
}

func (b TemporalBound) String() string { return fmt.Sprintf("%s %s now()", b.Expr, b.Op) }

// NewTemporalFilter returns a TemporalFilter node.
func NewTemporalFilter(input Plan, bounds ...TemporalBound) Plan {
	return Plan{TemporalFilter: &TemporalFilter{Input: &input, Bounds: bounds}}
}

// Validity is the logical times [Lower, Upper) in which a row passes a
// temporal filter; Unbounded means no Upper.
type Validity struct {
	Lower, Upper uint64
	Unbounded    bool
}

// Empty reports whether no time is in the window.
func (w Validity) Empty() bool { return !w.Unbounded && w.Upper <= w.Lower }

// Contains reports whether t is in the window.
func (w Validity) Contains(t uint64) bool { return t >= w.Lower && (w.Unbounded || t < w.Upper) }

// Validity evaluates the bounds over one input row. A NULL bound never
// holds, so its row's window is empty. Times round to the millisecond:
// `e <= now()` holds from the first millisecond at or after e.
func (f *TemporalFilter) Validity(datums []row.Datum) (Validity, error) {
	w := Validity{Unbounded: true}
	for _, b := range f.Bounds {
		v, err := b.Expr.Eval(datums)
		if err != nil {
			return Validity{}, err
		}
		if v.IsNull() {
			return Validity{}, nil
		}
		if v.Type() != row.TypeTimestampTZ {
			return Validity{}, fmt.Errorf("temporal bound %s: value of type %s, want timestamptz", b, v.Type())
		}
		lo, hi, hasHi, err := boundValidity(v.TimestampTZ(), b.Op)
		if err != nil {
			return Validity{}, err
		}
		w.Lower = max(w.Lower, lo)
		if hasHi && (w.Unbounded || hi < w.Upper) {
			w.Upper, w.Unbounded = hi, false
		}
	}
	return w, nil
}

// boundValidity is the window of `e op now()` for e in micros: now() is a
// logical time t in millis, i.e. t*1000 micros.
func boundValidity(e int64, op TemporalOp) (lo, hi uint64, hasHi bool, err error) {
	// -infinity is MinInt64 and +infinity MaxInt64: the arithmetic
	// below puts them before and after every time.
	switch op {
	case TemporalLt: // e < t*1000  <=>  t >= floor(e/1000)+1
		return clampTime(floorMillis(e) + 1), 0, false, nil
	case TemporalLte: // e <= t*1000  <=>  t >= ceil(e/1000)
		return clampTime(ceilMillis(e)), 0, false, nil
	case TemporalGt: // e > t*1000  <=>  t < ceil(e/1000)
		hi, hasHi = upperTime(e, ceilMillis(e))
		return 0, hi, hasHi, nil
	case TemporalGte: // e >= t*1000  <=>  t < floor(e/1000)+1
		hi, hasHi = upperTime(e, floorMillis(e)+1)
		return 0, hi, hasHi, nil
	case TemporalEq:
		lo, _, _, _ = boundValidity(e, TemporalLte)
		_, hi, hasHi, _ = boundValidity(e, TemporalGte)
		return lo, hi, hasHi, nil
	}
	return 0, 0, false, fmt.Errorf("temporal bound: unknown comparison %q", op)
}

// upperTime is an exclusive upper bound ms for e, none for +infinity.
func upperTime(e, ms int64) (uint64, bool) {
	if e == row.TimestampInfinity {
		return 0, false
	}
	return clampTime(ms), true
}

// clampTime maps millis before the epoch to time 0 (logical times start
// there), and +infinity's bound beyond every time.
func clampTime(ms int64) uint64 {
	if ms < 0 {
		return 0
	}
	return uint64(ms)
}

func floorMillis(us int64) int64 {
	q := us / 1000
	if us%1000 < 0 {
		q--
	}
	return q
}

func ceilMillis(us int64) int64 {
	q := us / 1000
	if us%1000 > 0 {
		q++
	}
	return q
}

// FilterAt is the filter as an ordinary MFP at one logical time: each
// bound compared with the literal now() = t, as a one-shot query at t
// would evaluate it. A read of the temporal filter at t equals it.
func (f *TemporalFilter) FilterAt(arity int, t uint64) expr.MFP {
	now := expr.Literal(row.TimestampTZ(int64(t) * 1000))
	funcs := map[TemporalOp]expr.Func{TemporalLt: expr.FuncLt, TemporalLte: expr.FuncLte,
		TemporalGt: expr.FuncGt, TemporalGte: expr.FuncGte, TemporalEq: expr.FuncEq}
	m := expr.Identity(arity)
	for _, b := range f.Bounds {
		m = m.Filter(expr.Call(funcs[b.Op], b.Expr, now))
	}
	return m
}

func (f *TemporalFilter) desc(env Env) (row.RelationDesc, error) {
	in, err := inputDesc("temporal_filter", f.Input, env)
	if err != nil {
		return row.RelationDesc{}, err
	}
	if len(f.Bounds) == 0 {
		return row.RelationDesc{}, fmt.Errorf("temporal_filter: no bounds")
	}
	for _, b := range f.Bounds {
		if _, _, _, err := boundValidity(0, b.Op); err != nil {
			return row.RelationDesc{}, fmt.Errorf("temporal_filter: %w", err)
		}
		t, err := b.Expr.Type(in.Types)
		if err != nil {
			return row.RelationDesc{}, fmt.Errorf("temporal_filter: bound %s: %w", b, err)
		}
		if t.Type != row.TypeTimestampTZ {
			return row.RelationDesc{}, fmt.Errorf("temporal_filter: bound %s has type %s, want timestamptz", b, t.Type)
		}
	}
	return in, nil
}
