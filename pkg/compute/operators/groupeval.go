package operators

import (
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// GroupEval computes one group's output like a GroupLogic, in steps of
// bounded work, so that a reduction can yield the worker in the middle of
// a large group (ReduceGroupsResumable). Start begins an evaluation over
// the group's whole input (sorted by value, consolidated, never empty; the
// caller keeps it unchanged until Result); Step does about budget units of
// work (budget <= 0: all of it) and reports the work done and whether the
// evaluation is complete; Result then returns what the group logic would
// return for (key, input), under the same contract (sorted, consolidated,
// not aliasing input's backing array). A GroupEval holds one evaluation at
// a time and belongs to one operator instance on one worker.
type GroupEval interface {
	Start(key []byte, input []ValDiff)
	Step(budget int) (work int, done bool)
	Result() ([]ValDiff, error)
}

// WholeGroup adapts a GroupLogic whose work cannot be split (a top-k's cut,
// a window's partition, DISTINCT): its first Step runs the logic over the
// whole group, counting one unit per input value.
func WholeGroup(logic GroupLogic) GroupEval { return &wholeGroup{logic: logic} }

type wholeGroup struct {
	logic GroupLogic
	key   []byte
	input []ValDiff
	out   []ValDiff
	err   error
}

func (w *wholeGroup) Start(key []byte, input []ValDiff) { w.key, w.input = key, input }

func (w *wholeGroup) Step(int) (int, bool) {
	w.out, w.err = w.logic(w.key, w.input)
	return len(w.input), true
}

func (w *wholeGroup) Result() ([]ValDiff, error) { return w.out, w.err }

// AggregateEval returns the resumable evaluation of AggregateLogic(aggs).
// When every aggregate can be folded over the group's values in their
// order (count(*), count, min, max, sum and avg of integers, string_agg
// whose values arrive in its order) a Step folds the next budget values;
// a group that cannot be folded (another aggregate, a DISTINCT, a float,
// numeric or interval argument, a string_agg whose order is not the
// values' order, a negative multiplicity or any error) is evaluated whole
// by AggregateLogic in one Step, so the result is always exactly the
// logic's.
func AggregateEval(aggs []Aggregate) GroupEval { return AggregateEvalShowingKey(aggs, -1) }

// AggregateEvalShowingKey is the resumable evaluation of
// AggregateLogicShowingKey(aggs, width): a group whose values carry its key
// as written (a numeric key that lost its scale) is evaluated whole, so
// the key it shows is the logic's.
func AggregateEvalShowingKey(aggs []Aggregate, width int) GroupEval {
	e := &aggregateEval{aggs: aggs, width: width, whole: AggregateLogicShowingKey(aggs, width), folds: make([]aggFold, len(aggs))}
	for _, a := range aggs {
		if !foldsInOrder(a) {
			e.never = true
		}
	}
	return e
}

// foldsInOrder reports whether a can be folded value by value, in the
// order of the group's values.
func foldsInOrder(a Aggregate) bool {
	switch a.Func {
	case AggCountStar:
		return true
	case AggCount, AggMin, AggMax, AggSum, AggAvg:
		return !a.Distinct
	case AggStringAgg:
		return true // checked per value: the values must arrive in its order
	}
	return false
}

// aggregateEval folds a group's values for AggregateEval.
type aggregateEval struct {
	aggs  []Aggregate
	width int // values longer than this carry the key as written (< 0: never)
	whole GroupLogic
	never bool // some aggregate never folds: every group is evaluated whole

	key      []byte
	input    []ValDiff
	pos      int
	fallback bool // this group is evaluated whole
	rows     int64
	folds    []aggFold
	datums   []row.Datum
	out      []ValDiff
	err      error
}

// aggFold is one aggregate's partial state.
type aggFold struct {
	count int64 // count, or the non-null arguments of sum and avg
	best  row.Datum
	found bool
	sum   int128
	// string_agg: the text so far, the previous entry's datums (its order,
	// value and separator) and the first value's type.
	text    strings.Builder
	prev    []row.Datum
	hasPrev bool
	typ     row.Type
}

func (e *aggregateEval) Start(key []byte, input []ValDiff) {
	e.key, e.input, e.pos, e.rows = key, input, 0, 0
	e.fallback, e.out, e.err = e.never, nil, nil
	for i := range e.folds {
		f := &e.folds[i]
		f.count, f.best, f.found, f.sum, f.hasPrev, f.typ = 0, row.Datum{}, false, int128{}, false, row.TypeInvalid
		f.text.Reset()
	}
}

func (e *aggregateEval) Step(budget int) (int, bool) {
	if e.fallback {
		e.out, e.err = e.whole(e.key, e.input)
		return len(e.input) - e.pos, true
	}
	end := len(e.input)
	if budget > 0 {
		end = min(end, e.pos+budget)
	}
	start := e.pos
	for ; e.pos < end; e.pos++ {
		if !e.add(e.input[e.pos]) {
			e.fallback = true
			return e.pos - start, false // the next Step evaluates the group whole
		}
	}
	if e.pos < len(e.input) {
		return e.pos - start, false
	}
	e.out, e.err = e.result()
	return e.pos - start, true
}

func (e *aggregateEval) Result() ([]ValDiff, error) { return e.out, e.err }

// add folds one value and reports whether the group still folds.
func (e *aggregateEval) add(v ValDiff) bool {
	if v.Diff < 0 {
		return false
	}
	ds, err := row.Row(v.Val).UnpackInto(e.datums)
	if err != nil {
		return false
	}
	e.datums = ds
	if e.width >= 0 && len(ds) > e.width {
		return false // the key it shows is chosen over the whole group
	}
	e.rows += v.Diff
	for i, a := range e.aggs {
		if a.Func != AggCountStar && (a.Column < 0 || a.Column >= len(ds)) {
			return false
		}
		if !e.folds[i].add(a, ds, v.Diff) {
			return false
		}
	}
	return true
}

// add folds one row's arguments, with multiplicity n, into f.
func (f *aggFold) add(a Aggregate, ds []row.Datum, n int64) bool {
	if a.Func == AggCountStar {
		return true
	}
	d := ds[a.Column]
	if a.Func == AggStringAgg {
		return f.addString(a, ds, n)
	}
	if d.IsNull() {
		return true
	}
	switch a.Func {
	case AggCount:
		f.count += n
	case AggMin, AggMax:
		if !f.found || moreExtreme(d, f.best, a.Func == AggMax) {
			f.best, f.found = d, true
		}
	case AggSum, AggAvg:
		// Only exact integer sums fold: a float sum is defined in value
		// order, numerics and intervals have their own rules.
		if d.Type() != row.TypeInt64 {
			return false
		}
		f.sum = f.sum.add(mul64(d.Int64(), n))
		f.count += n
	}
	return true
}

// addString appends one row to a string_agg, as stringAgg would once its
// entries are sorted: it folds only while the rows arrive in that order.
func (f *aggFold) addString(a Aggregate, ds []row.Datum, n int64) bool {
	if a.Sep < 0 || a.Sep >= len(ds) {
		return false
	}
	for _, o := range a.Order {
		if o.Column < 0 || o.Column >= len(ds) {
			return false
		}
	}
	v, sep := ds[a.Column], ds[a.Sep]
	if v.IsNull() {
		return true
	}
	if !f.hasPrev {
		f.typ = v.Type()
	}
	if v.Type() != f.typ || (!sep.IsNull() && sep.Type() != f.typ) || (f.typ != row.TypeText && f.typ != row.TypeBytes) {
		return false // an error: stringAgg reports it
	}
	if f.hasPrev {
		if compareStringAgg(a, f.prev, ds) > 0 {
			return false
		}
		if a.Distinct && row.Equal(f.prev[a.Column], v) && row.Equal(f.prev[a.Sep], sep) {
			return true
		}
	}
	if a.Distinct {
		n = 1
	}
	for i := range n {
		if (f.hasPrev || i > 0) && !sep.IsNull() {
			f.text.WriteString(rawString(sep))
		}
		f.text.WriteString(rawString(v))
	}
	f.prev, f.hasPrev = append(f.prev[:0], ds...), true
	return true
}

// result is the group's output row, as AggregateLogic computes it.
func (e *aggregateEval) result() ([]ValDiff, error) {
	out := make([]row.Datum, 0, len(e.aggs))
	for i, a := range e.aggs {
		f := &e.folds[i]
		switch a.Func {
		case AggCountStar:
			out = append(out, row.Int64(e.rows))
		case AggCount:
			out = append(out, row.Int64(f.count))
		case AggMin, AggMax:
			if !f.found {
				out = append(out, row.Null())
				continue
			}
			out = append(out, f.best)
		case AggSum, AggAvg:
			if f.count == 0 {
				out = append(out, row.Null())
				continue
			}
			s, ok := f.sum.int64()
			if !ok {
				return nil, Error{Code: CodeNumericOutOfRange, Message: "bigint out of range in " + a.Func.String()}
			}
			if a.Func == AggSum {
				out = append(out, row.Int64(s))
			} else {
				out = append(out, row.Float64(float64(s)/float64(f.count)))
			}
		case AggStringAgg:
			switch {
			case !f.hasPrev:
				out = append(out, row.Null())
			case f.typ == row.TypeBytes:
				out = append(out, row.BytesString(f.text.String()))
			default:
				out = append(out, row.Text(f.text.String()))
			}
		}
	}
	r := row.AppendDatums(append(make([]byte, 0, len(e.key)+16*len(out)), e.key...), out...)
	return []ValDiff{{Val: r, Diff: 1}}, nil
}
