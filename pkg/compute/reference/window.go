package reference

import (
	"math"
	"math/big"
	"sort"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// evalWindow evaluates a Window by the definitions, row by row over each
// sorted partition (a row with multiplicity n is n rows), quadratic and
// written for obviousness rather than speed.
func evalWindow(w *plan.Window, in Result, out *Result) {
	type inst struct {
		row string
		ds  []row.Datum
	}
	parts := map[string][]inst{}
	negative := map[string]bool{}
	for k, n := range in.Rows {
		ds := unpack(k)
		var key []row.Datum
		for _, c := range w.PartitionBy {
			key = append(key, col(ds, c).NumericKey())
		}
		pk := string(row.Pack(key...))
		if n < 0 {
			negative[pk] = true
		}
		for j := int64(0); j < n; j++ {
			parts[pk] = append(parts[pk], inst{k, ds})
		}
	}
	for pk := range negative {
		delete(parts, pk)
		out.Errors.add(string(ErrorRow(&evalError{"XX000", "window: negative multiplicity in input"})), 1)
	}
	for _, p := range parts {
		sort.SliceStable(p, func(i, j int) bool { return topKLess(w.OrderBy, p[i].ds, p[j].ds, p[i].row, p[j].row) })
		ds := make([][]row.Datum, len(p))
		for i := range p {
			ds[i] = p[i].ds
		}
		rows := map[string]int64{}
		var failed error
		for i := range p {
			vals := make([]row.Datum, len(w.Funcs))
			for f, fn := range w.Funcs {
				v, err := windowValue(w.OrderBy, fn, ds, i)
				if err != nil && failed == nil {
					failed = err
				}
				vals[f] = v
			}
			rows[p[i].row+string(row.Pack(vals...))]++
		}
		if failed != nil {
			out.Errors.add(string(ErrorRow(failed)), 1)
			continue
		}
		for r, n := range rows {
			out.Rows.add(r, n)
		}
	}
}

// less and peer compare two rows in the ORDER BY columns only.
func less(order []plan.ColumnOrder, a, b []row.Datum) bool { return topKLess(order, a, b, "", "") }

func peer(order []plan.ColumnOrder, a, b []row.Datum) bool {
	return !less(order, a, b) && !less(order, b, a)
}

// windowValue is function f at position i of the sorted partition p.
func windowValue(order []plan.ColumnOrder, f plan.WindowFunc, p [][]row.Datum, i int) (row.Datum, error) {
	n := len(p)
	before := 0 // rows strictly before i's peers
	upTo := 0   // rows before i or peers of i
	for j := range p {
		if less(order, p[j], p[i]) {
			before++
		}
		if !less(order, p[i], p[j]) {
			upTo++
		}
	}
	switch f.Func {
	case plan.WinRowNumber:
		return row.Int64(int64(i + 1)), nil
	case plan.WinRank:
		return row.Int64(int64(before + 1)), nil
	case plan.WinDenseRank:
		groups := 0
		for j := 0; j < n; j++ {
			first := j == 0 || !peer(order, p[j-1], p[j])
			if first && less(order, p[j], p[i]) {
				groups++
			}
		}
		return row.Int64(int64(groups + 1)), nil
	case plan.WinPercentRank:
		if n == 1 {
			return row.Float64(0), nil
		}
		return row.Float64(float64(before) / float64(n-1)), nil
	case plan.WinCumeDist:
		return row.Float64(float64(upTo) / float64(n)), nil
	case plan.WinNtile:
		// Deal the rows into buckets of n/k rows, one more in each of the
		// first n mod k.
		pos := 0
		for b := int64(1); ; b++ {
			size := int64(n) / f.N
			if b <= int64(n)%f.N {
				size++
			}
			if int64(i) < int64(pos)+size || b >= f.N {
				return row.Int64(b), nil
			}
			pos += int(size)
		}
	case plan.WinLag, plan.WinLead:
		j := int64(i) - f.N
		if f.Func == plan.WinLead {
			j = int64(i) + f.N
		}
		if j >= 0 && j < int64(n) {
			return col(p[j], f.Arg), nil
		}
		if f.Default >= 0 {
			return col(p[i], f.Default), nil
		}
		return row.Null(), nil
	}
	var frame []int
	for j := range p {
		in, err := inFrame(order, f.Frame, p, i, j)
		if err != nil {
			return row.Null(), err
		}
		if in && !excluded(order, f.Frame.Exclude, p, i, j) {
			frame = append(frame, j)
		}
	}
	switch f.Func {
	case plan.WinFirstValue, plan.WinLastValue, plan.WinNthValue:
		k := 0
		switch f.Func {
		case plan.WinLastValue:
			k = len(frame) - 1
		case plan.WinNthValue:
			if f.N > int64(len(frame)) {
				return row.Null(), nil
			}
			k = int(f.N - 1)
		}
		if len(frame) == 0 {
			return row.Null(), nil
		}
		return col(p[frame[k]], f.Arg), nil
	}
	var vals []weighted
	for _, j := range frame {
		vals = append(vals, weighted{d: col(p[j], f.Arg), n: 1})
	}
	return aggregate(aggKinds[f.Agg], false, string(f.Agg), vals, int64(len(frame)))
}

// group is the index of position j's peer group: how many positions
// before it end a group.
func group(order []plan.ColumnOrder, p [][]row.Datum, j int) int64 {
	g := int64(0)
	for k := 0; k < j; k++ {
		if less(order, p[k], p[k+1]) {
			g++
		}
	}
	return g
}

// excluded reports whether an EXCLUDE clause removes position j from the
// frame of position i.
func excluded(order []plan.ColumnOrder, ex plan.FrameExclude, p [][]row.Datum, i, j int) bool {
	peer := !less(order, p[i], p[j]) && !less(order, p[j], p[i])
	switch ex {
	case plan.ExcludeCurrentRow:
		return i == j
	case plan.ExcludeGroup:
		return peer
	case plan.ExcludeTies:
		return peer && i != j
	}
	return false
}

// inRange reports whether position j is on the frame's side of a RANGE
// offset bound of position i: the current row's value of the only ORDER
// BY column moved by the offset towards the bound (NULL staying NULL),
// compared in the window's order.
func inRange(order []plan.ColumnOrder, b plan.FrameBound, p [][]row.Datum, i, j int, start bool) bool {
	o := order[0]
	bound := append([]row.Datum(nil), p[i]...)
	if cur := bound[o.Column]; !cur.IsNull() {
		v := new(big.Int).SetInt64(cur.Int64())
		off := big.NewInt(b.Offset)
		if (b.Kind == plan.Preceding) != o.Desc {
			v.Sub(v, off)
		} else {
			v.Add(v, off)
		}
		// Beyond the integers, every value is within the bound.
		v = bigClamp(v)
		bound[o.Column] = row.Int64(v.Int64())
	}
	if start {
		return !less(order, p[j], bound)
	}
	return !less(order, bound, p[j])
}

// bigClamp limits v to the int64 range.
func bigClamp(v *big.Int) *big.Int {
	lo, hi := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	switch {
	case v.Cmp(lo) < 0:
		return lo
	case v.Cmp(hi) > 0:
		return hi
	}
	return v
}

// inFrame reports whether position j is in the frame of position i.
func inFrame(order []plan.ColumnOrder, fr plan.WindowFrame, p [][]row.Datum, i, j int) (bool, error) {
	var err error
	after := func(b plan.FrameBound, start bool) bool { // j is on the frame's side of b
		switch b.Kind {
		case plan.UnboundedPreceding, plan.UnboundedFollowing:
			return true
		case plan.Preceding, plan.Following:
			if !fr.Rows && !fr.Groups && b.RangeTarget != nil {
				in, e := inRangeTarget(order[0], b, p[i], p[j], start)
				if e != nil && err == nil {
					err = e
				}
				return in
			}
			if !fr.Rows && !fr.Groups {
				return inRange(order, b, p, i, j, start)
			}
			if !fr.Groups {
				break
			}
			gi, gj := group(order, p, i), group(order, p, j)
			d := gi - b.Offset
			if b.Kind == plan.Following {
				d = gi + min(b.Offset, int64(len(p)))
			}
			if start {
				return gj >= d
			}
			return gj <= d
		}
		switch b.Kind {
		case plan.Preceding:
			d := int64(i) - b.Offset
			if start {
				return int64(j) >= d
			}
			return int64(j) <= d
		case plan.Following:
			d := int64(i) + min(b.Offset, int64(len(p)))
			if start {
				return int64(j) >= d
			}
			return int64(j) <= d
		}
		if fr.Rows {
			return start && j >= i || !start && j <= i
		}
		if start {
			return !less(order, p[j], p[i])
		}
		return !less(order, p[i], p[j])
	}
	in := after(fr.Start, true) && after(fr.End, false)
	return in, err
}
