package operators

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// WindowKind names a window function.
type WindowKind uint8

// The window functions (see plan.Window).
const (
	WinRowNumber WindowKind = iota + 1
	WinRank
	WinDenseRank
	WinPercentRank
	WinCumeDist
	WinNtile
	WinLag
	WinLead
	WinFirstValue
	WinLastValue
	WinNthValue
	WinAggregate
)

// FrameBoundKind is one end of a frame.
type FrameBoundKind uint8

// The frame bounds.
const (
	BoundUnboundedPreceding FrameBoundKind = iota + 1
	BoundPreceding
	BoundCurrentRow
	BoundFollowing
	BoundUnboundedFollowing
)

// FrameBound is a bound with its offset (BoundPreceding, BoundFollowing).
// A RANGE frame over an ORDER BY column that is not an integer has Target
// instead: given the current row's (non-NULL) value it returns the
// bound's value, in the column's type, or an error that fails the
// partition.
type FrameBound struct {
	Kind   FrameBoundKind
	Offset int64
	Target func(cur row.Datum) (row.Datum, error)
}

// WindowFrame is a ROWS frame, a GROUPS frame (offsets count peer
// groups), or (neither) a RANGE frame (offsets are differences of the
// value of the spec's only ORDER BY column, an integer); Exclude removes
// rows from it.
type WindowFrame struct {
	Rows, Groups bool
	Start, End   FrameBound
	Exclude      FrameExclude
}

// FrameExclude is a frame's EXCLUDE clause.
type FrameExclude uint8

// The exclusions: none, the current row, its peer group, its peers but
// itself.
const (
	ExcludeNoOthers FrameExclude = iota
	ExcludeCurrentRow
	ExcludeGroup
	ExcludeTies
)

// WindowFunc is one window function: Agg for WinAggregate (its Column
// is the argument), Arg the value column, Default lag's and lead's
// default column (-1: NULL), N the bucket count, offset or position.
type WindowFunc struct {
	Kind    WindowKind
	Agg     Aggregate
	Arg     int
	Default int
	N       int64
	Frame   WindowFrame
}

// WindowSpec is a window: the partition's order and the functions.
type WindowSpec struct {
	Order []row.ColumnOrder
	Funcs []WindowFunc
}

// winRow is one input row of a partition in order.
type winRow struct {
	ds  []row.Datum
	val []byte
	n   int64
}

// WindowLogic returns the group logic of Window: the input is arranged by
// the partition key with the whole row as value; the output is each row
// (once per multiplicity) followed by its functions' values. The whole
// partition is recomputed when it changes, and the group stepper emits
// the difference: the partition is the unit of incremental work.
func WindowLogic(spec WindowSpec) GroupLogic {
	order := TopKSpec{Order: spec.Order}
	return func(key []byte, input []ValDiff) ([]ValDiff, error) {
		rows := make([]winRow, 0, len(input))
		for _, v := range input {
			if v.Diff < 0 {
				return nil, negativeMultiplicity("window")
			}
			ds, err := row.Row(v.Val).Unpack()
			if err != nil {
				return nil, Error{Code: CodeInternal, Message: fmt.Sprintf("window: %v", err)}
			}
			rows = append(rows, winRow{ds: ds, val: v.Val, n: v.Diff})
		}
		slices.SortFunc(rows, func(a, b winRow) int { return order.CompareRows(a.ds, b.ds, a.val, b.val) })
		p := newPartition(rows, spec.Order)
		out := make([]ValDiff, 0, p.size())
		cols := make([][]row.Datum, len(spec.Funcs))
		errs := make([][]error, len(spec.Funcs))
		for f, fn := range spec.Funcs {
			cols[f], errs[f] = p.column(fn)
		}
		if p.err != nil {
			return nil, p.err
		}
		vals := make([]row.Datum, len(spec.Funcs))
		for i := 0; i < p.size(); i++ {
			for f := range spec.Funcs {
				if errs[f] != nil && errs[f][i] != nil {
					return nil, errs[f][i]
				}
				vals[f] = cols[f][i]
			}
			r := p.rows[p.at[i]]
			v := append(append(make([]byte, 0, len(r.val)+16), r.val...), row.Pack(vals...)...)
			out = append(out, ValDiff{Val: v, Diff: 1})
		}
		slices.SortFunc(out, func(a, b ValDiff) int { return bytes.Compare(a.Val, b.Val) })
		return Consolidate(out), nil
	}
}

// partition is a sorted partition expanded to positions: position i is
// row at[i]; peerLo/peerHi are the first and last positions of its peer
// group and peer its peer group's index.
type partition struct {
	rows           []winRow
	at             []int
	peerLo, peerHi []int
	peer           []int
	// groupLo and groupHi are each peer group's first and last positions.
	groupLo, groupHi []int
	order            []row.ColumnOrder
	// err is the first error computing a RANGE bound's value.
	err error
}

func newPartition(rows []winRow, order []row.ColumnOrder) *partition {
	p := &partition{rows: rows, order: order}
	for r, w := range rows {
		for j := int64(0); j < w.n; j++ {
			p.at = append(p.at, r)
		}
	}
	n := len(p.at)
	p.peerLo, p.peerHi, p.peer = make([]int, n), make([]int, n), make([]int, n)
	group := 0
	for i := 0; i < n; {
		j := i + 1
		for j < n && peers(rows[p.at[i]].ds, rows[p.at[j]].ds, order) {
			j++
		}
		for k := i; k < j; k++ {
			p.peerLo[k], p.peerHi[k], p.peer[k] = i, j-1, group
		}
		p.groupLo, p.groupHi = append(p.groupLo, i), append(p.groupHi, j-1)
		group++
		i = j
	}
	return p
}

// peers reports whether two rows are equal in the order columns.
func peers(a, b []row.Datum, order []row.ColumnOrder) bool {
	for _, o := range order {
		if o.Compare(a[o.Column], b[o.Column]) != 0 {
			return false
		}
	}
	return true
}

func (p *partition) size() int { return len(p.at) }

func (p *partition) value(i, col int) row.Datum { return p.rows[p.at[i]].ds[col] }

// frame returns the frame of position i as [lo, hi]; empty when lo > hi.
func (p *partition) frame(fr WindowFrame, i int) (int, int) {
	n := p.size()
	bound := func(b FrameBound, start bool) int {
		switch b.Kind {
		case BoundUnboundedPreceding:
			return 0
		case BoundUnboundedFollowing:
			return n - 1
		case BoundPreceding, BoundFollowing:
			off := min(b.Offset, int64(n))
			if b.Kind == BoundPreceding {
				off = -off
			}
			switch {
			case fr.Groups:
				return p.groupBound(int64(p.peer[i])+off, start)
			case !fr.Rows:
				return p.rangeBound(b, i, start)
			}
			return clampPos(int64(i)+off, n)
		}
		switch { // current row
		case fr.Rows:
			return i
		case start:
			return p.peerLo[i]
		}
		return p.peerHi[i]
	}
	return max(bound(fr.Start, true), 0), min(bound(fr.End, false), n-1)
}

// groupBound is the first (start) or last position of peer group g,
// which may lie before the first group (start: 0, end: -1, so that the
// frame is empty) or after the last (start: n, end: n-1).
func (p *partition) groupBound(g int64, start bool) int {
	switch {
	case g < 0 && start:
		return 0
	case g < 0:
		return -1
	case g >= int64(len(p.groupLo)) && start:
		return p.size()
	case g >= int64(len(p.groupLo)):
		return p.size() - 1
	case start:
		return p.groupLo[g]
	}
	return p.groupHi[g]
}

// rangeBound is a RANGE frame's offset bound for position i: the first
// position (start) whose value of the only ORDER BY column is at or after
// the current value moved by the offset in the order's direction, or the
// last position (end) at or before it. NULL is beyond every value on the
// side where the order puts NULLs, so a NULL current row's frame is its
// peers; a bound beyond the integers' range takes every value.
func (p *partition) rangeBound(b FrameBound, i int, start bool) int {
	o := p.order[0]
	cur := p.value(i, o.Column)
	target := cur
	switch {
	case cur.IsNull():
	case b.Target != nil:
		t, err := b.Target(cur)
		if err != nil {
			if p.err == nil {
				p.err = err
			}
			return i
		}
		target = t
	default:
		off := b.Offset
		if (b.Kind == BoundPreceding) != o.Desc {
			off = -off
		}
		target = row.Int64(saturatingAdd(cur.Int64(), off))
	}
	n := p.size()
	if start {
		return sort.Search(n, func(j int) bool { return o.Compare(p.value(j, o.Column), target) >= 0 })
	}
	return sort.Search(n, func(j int) bool { return o.Compare(p.value(j, o.Column), target) > 0 }) - 1
}

// saturatingAdd is a + b, or the nearest int64 when it overflows.
func saturatingAdd(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// excluded reports whether position j is excluded from the frame of
// position i.
func (p *partition) excluded(fr WindowFrame, i, j int) bool {
	switch fr.Exclude {
	case ExcludeCurrentRow:
		return j == i
	case ExcludeGroup:
		return p.peer[j] == p.peer[i]
	case ExcludeTies:
		return j != i && p.peer[j] == p.peer[i]
	}
	return false
}

// framePositions lists the positions of i's frame, exclusions removed.
func (p *partition) framePositions(fr WindowFrame, i int) []int {
	lo, hi := p.frame(fr, i)
	var out []int
	for j := lo; j <= hi; j++ {
		if !p.excluded(fr, i, j) {
			out = append(out, j)
		}
	}
	return out
}

// clampPos keeps a ROWS bound within [-1, n] so that it cannot overflow.
func clampPos(x int64, n int) int {
	return int(max(-1, min(x, int64(n))))
}

func (p *partition) eval(f WindowFunc, i int) (row.Datum, error) {
	n := p.size()
	switch f.Kind {
	case WinRowNumber:
		return row.Int64(int64(i + 1)), nil
	case WinRank:
		return row.Int64(int64(p.peerLo[i] + 1)), nil
	case WinDenseRank:
		return row.Int64(int64(p.peer[i] + 1)), nil
	case WinPercentRank:
		if n <= 1 {
			return row.Float64(0), nil
		}
		return row.Float64(float64(p.peerLo[i]) / float64(n-1)), nil
	case WinCumeDist:
		return row.Float64(float64(p.peerHi[i]+1) / float64(n)), nil
	case WinNtile:
		return row.Int64(ntile(int64(i), int64(n), f.N)), nil
	case WinLag, WinLead:
		j := int64(i) - f.N
		if f.Kind == WinLead {
			j = int64(i) + f.N
		}
		if j >= 0 && j < int64(n) {
			return p.value(int(j), f.Arg), nil
		}
		if f.Default >= 0 {
			return p.value(i, f.Default), nil
		}
		return row.Null(), nil
	}
	if f.Frame.Exclude != ExcludeNoOthers {
		return p.evalExcluding(f, i)
	}
	lo, hi := p.frame(f.Frame, i)
	switch f.Kind {
	case WinFirstValue, WinLastValue, WinNthValue:
		j := lo
		switch f.Kind {
		case WinLastValue:
			j = hi
		case WinNthValue:
			j = lo + int(min(f.N-1, int64(n)))
		}
		if lo > hi || j > hi {
			return row.Null(), nil
		}
		return p.value(j, f.Arg), nil
	case WinAggregate:
		return p.aggregate(f.Agg, lo, hi)
	}
	return row.Null(), Error{Code: CodeInternal, Message: fmt.Sprintf("unknown window function %d", f.Kind)}
}

// evalExcluding computes a frame function (first_value, last_value,
// nth_value, an aggregate) over a frame with an EXCLUDE clause.
func (p *partition) evalExcluding(f WindowFunc, i int) (row.Datum, error) {
	pos := p.framePositions(f.Frame, i)
	switch f.Kind {
	case WinFirstValue, WinLastValue, WinNthValue:
		k := 0
		switch f.Kind {
		case WinLastValue:
			k = len(pos) - 1
		case WinNthValue:
			k = int(min(f.N-1, int64(len(pos))))
		}
		if k < 0 || k >= len(pos) {
			return row.Null(), nil
		}
		return p.value(pos[k], f.Arg), nil
	case WinAggregate:
		return p.aggregateAt(f.Agg, pos)
	}
	return row.Null(), Error{Code: CodeInternal, Message: fmt.Sprintf("window function %d has no frame", f.Kind)}
}

// aggregate computes a over the positions [lo, hi].
func (p *partition) aggregate(a Aggregate, lo, hi int) (row.Datum, error) {
	var pos []int
	for j := lo; j <= hi; j++ {
		pos = append(pos, j)
	}
	return p.aggregateAt(a, pos)
}

// aggregateAt computes a over the given positions.
func (p *partition) aggregateAt(a Aggregate, pos []int) (row.Datum, error) {
	var args []argCount
	var rows int64
	for _, j := range pos {
		rows++
		if a.Func != AggCountStar {
			args = append(args, argCount{d: p.value(j, a.Column), n: 1})
		}
	}
	if needsSorted(a, args) {
		slices.SortFunc(args, func(x, y argCount) int { return row.Compare(x.d, y.d) })
	}
	return evalAggregate(a, args, rows)
}

// ntile is PostgreSQL's bucket of position i (0-based) of n rows in k
// buckets: the first n mod k buckets have one row more than the others.
func ntile(i, n, k int64) int64 {
	per, extra := n/k, n%k
	big := extra * (per + 1)
	if i < big {
		return i/(per+1) + 1
	}
	return extra + (i-big)/per + 1
}

// column computes f at every position, with the error of each position
// that has one (errs nil when none has).
func (p *partition) column(f WindowFunc) ([]row.Datum, []error) {
	if f.Kind == WinAggregate && f.Frame.Start.Kind == BoundUnboundedPreceding && f.Frame.Exclude == ExcludeNoOthers && p.runnable(f.Agg) {
		return p.running(f)
	}
	out := make([]row.Datum, p.size())
	var errs []error
	for i := range out {
		d, err := p.eval(f, i)
		if err != nil {
			if errs == nil {
				errs = make([]error, p.size())
			}
			errs[i] = err
		}
		out[i] = d
	}
	return out, errs
}

// runnable reports whether a's value over a growing prefix can be kept in
// one accumulator: counts, min, max and integer and interval sums and
// averages (a float sum is defined in ascending value order, so it is
// recomputed; a numeric sum is recomputed too).
func (p *partition) runnable(a Aggregate) bool {
	switch a.Func {
	case AggCountStar, AggCount, AggMin, AggMax:
		return true
	}
	for i := range p.at {
		if t := p.value(i, a.Column).Type(); t == row.TypeFloat64 || t == row.TypeNumeric {
			return false
		}
	}
	return true
}

// running computes an aggregate whose frame starts at the first row: the
// frame's end never moves back, so one accumulator is extended row by
// row, making a running total O(n) rather than O(n^2) per partition.
func (p *partition) running(f WindowFunc) ([]row.Datum, []error) {
	n := p.size()
	out := make([]row.Datum, n)
	var errs []error
	var (
		rows, count int64
		sum         int128
		ivsum       *intervalSum // non-nil once an interval argument is seen
		best        row.Datum
		found       bool
	)
	want := -1
	if f.Agg.Func == AggMax {
		want = 1
	}
	next := 0 // first position not yet accumulated
	for i := range out {
		_, hi := p.frame(f.Frame, i)
		for ; next <= hi; next++ {
			rows++
			if f.Agg.Func == AggCountStar {
				continue
			}
			v := p.value(next, f.Agg.Column)
			if v.IsNull() {
				continue
			}
			count++
			switch f.Agg.Func {
			case AggMin, AggMax:
				if !found || row.Compare(v, best) == want {
					best, found = v, true
				}
			case AggSum, AggAvg:
				if v.Type() == row.TypeInterval {
					if ivsum == nil {
						ivsum = new(intervalSum)
					}
					ivsum.add(v, 1)
					continue
				}
				sum = sum.add(mul64(v.Int64(), 1))
			}
		}
		d, err := p.runningValue(f.Agg.Func, hi < 0, rows, count, sum, best, found)
		if ivsum != nil && hi >= 0 && count > 0 {
			d, err = ivsum.result(f.Agg.Func, count)
		}
		if err != nil {
			if errs == nil {
				errs = make([]error, n)
			}
			errs[i] = err
		}
		out[i] = d
	}
	return out, errs
}

// runningValue is the accumulator's value as evalAggregate would give it
// over the same rows (empty: the frame has no rows).
func (p *partition) runningValue(fn AggFunc, empty bool, rows, count int64, sum int128, best row.Datum, found bool) (row.Datum, error) {
	if empty {
		rows, count, found = 0, 0, false
	}
	switch fn {
	case AggCountStar:
		return row.Int64(rows), nil
	case AggCount:
		return row.Int64(count), nil
	case AggMin, AggMax:
		if !found {
			return row.Null(), nil
		}
		return best, nil
	}
	if count == 0 {
		return row.Null(), nil
	}
	s, ok := sum.int64()
	if !ok {
		return row.Null(), Error{Code: CodeNumericOutOfRange, Message: "bigint out of range in " + fn.String()}
	}
	if fn == AggSum {
		return row.Int64(s), nil
	}
	return row.Float64(float64(s) / float64(count)), nil
}
