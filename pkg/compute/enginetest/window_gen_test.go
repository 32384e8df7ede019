package enginetest

import (
	"fmt"
	"math"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// window generates a Window over a random input: random partition and
// order columns and one to three random functions with random frames.
func (g *planGen) window(depth int, label string) plan.Plan {
	in := g.plan(depth-1, label+"_in")
	d := g.desc(in)
	if d.Arity() == 0 {
		return plan.NewWindow(in, nil, nil, plan.WindowFunc{Func: plan.WinRowNumber, Arg: -1, Default: -1, Frame: plan.DefaultFrame()})
	}
	var part []int
	for i := range rapid.IntRange(0, 1).Draw(g.t, label+"_parts") {
		part = append(part, rapid.IntRange(0, d.Arity()-1).Draw(g.t, fmt.Sprintf("%s_part%d", label, i)))
	}
	var order []plan.ColumnOrder
	for i := range rapid.IntRange(0, 2).Draw(g.t, label+"_orders") {
		lab := fmt.Sprintf("%s_order%d", label, i)
		order = append(order, plan.ColumnOrder{
			Column:    rapid.IntRange(0, d.Arity()-1).Draw(g.t, lab),
			Desc:      rapid.Bool().Draw(g.t, lab+"_desc"),
			NullsLast: rapid.Bool().Draw(g.t, lab+"_nullslast"),
		})
	}
	// RANGE offsets need one integer ORDER BY column.
	rangeOffsets := len(order) == 1 && d.Types[order[0].Column].Type == row.TypeInt64
	var funcs []plan.WindowFunc
	for i := range rapid.IntRange(1, 3).Draw(g.t, label+"_funcs") {
		funcs = append(funcs, g.windowFunc(d, rangeOffsets, fmt.Sprintf("%s_f%d", label, i)))
	}
	return plan.NewWindow(in, part, order, funcs...)
}

func (g *planGen) windowFunc(d row.RelationDesc, rangeOffsets bool, label string) plan.WindowFunc {
	kinds := []plan.WindowFuncKind{plan.WinRowNumber, plan.WinRank, plan.WinDenseRank, plan.WinPercentRank,
		plan.WinCumeDist, plan.WinNtile, plan.WinLag, plan.WinLead, plan.WinFirstValue, plan.WinLastValue,
		plan.WinNthValue, plan.WinAggregate}
	f := plan.WindowFunc{Func: rapid.SampledFrom(kinds).Draw(g.t, label), Arg: -1, Default: -1, Frame: g.frame(rangeOffsets, label+"_frame")}
	arg := rapid.IntRange(0, d.Arity()-1).Draw(g.t, label+"_arg")
	switch f.Func {
	case plan.WinNtile, plan.WinNthValue:
		f.N = int64(rapid.IntRange(1, 4).Draw(g.t, label+"_n"))
	case plan.WinLag, plan.WinLead:
		f.N = int64(rapid.IntRange(0, 2).Draw(g.t, label+"_n"))
		if def := rapid.IntRange(-1, d.Arity()-1).Draw(g.t, label+"_default"); def >= 0 && d.Types[def].Type == d.Types[arg].Type {
			f.Default = def
		}
	case plan.WinAggregate:
		f.Agg = rapid.SampledFrom([]plan.AggregateFunc{plan.AggCountStar, plan.AggCount, plan.AggSum, plan.AggMin, plan.AggMax, plan.AggAvg}).Draw(g.t, label+"_agg")
		if (f.Agg == plan.AggSum || f.Agg == plan.AggAvg) && !d.Types[arg].Type.IsNumeric() {
			f.Agg = plan.AggCount
		}
		if (f.Agg == plan.AggSum || f.Agg == plan.AggAvg) && d.Types[arg].Type == row.TypeNumeric {
			// The engine's window sum and avg take no numeric (a
			// reduction's sum_squares below gives one): take its max.
			f.Agg = plan.AggMax
		}
	}
	switch f.Func {
	case plan.WinLag, plan.WinLead, plan.WinFirstValue, plan.WinLastValue, plan.WinNthValue, plan.WinAggregate:
		f.Arg = arg
	}
	return f
}

// frameOffsets are the offsets frames draw: small ones, and one whose
// RANGE bounds overflow the integers.
func frameOffsets() []int64 { return []int64{0, 1, 1, 2, math.MaxInt64} }

// frame draws a valid frame: ROWS or GROUPS with offsets, RANGE with
// UNBOUNDED and CURRENT ROW bounds (and offsets when rangeOffsets), with
// or without an EXCLUDE clause.
func (g *planGen) frame(rangeOffsets bool, label string) plan.WindowFrame {
	var fr plan.WindowFrame
	switch rapid.IntRange(0, 2).Draw(g.t, label+"_mode") {
	case 0:
		fr.Rows = true
	case 1:
		fr.Groups = true
	}
	fr.Exclude = rapid.SampledFrom([]plan.FrameExclude{"", "", plan.ExcludeCurrentRow, plan.ExcludeGroup, plan.ExcludeTies}).Draw(g.t, label+"_exclude")
	startKinds := []plan.BoundKind{plan.UnboundedPreceding, plan.CurrentRow}
	endKinds := []plan.BoundKind{plan.CurrentRow, plan.UnboundedFollowing}
	if fr.Rows || fr.Groups || rangeOffsets {
		startKinds = append(startKinds, plan.Preceding, plan.Following)
		endKinds = append(endKinds, plan.Preceding, plan.Following)
	}
	fr.Start.Kind = rapid.SampledFrom(startKinds).Draw(g.t, label+"_start")
	fr.End.Kind = rapid.SampledFrom(endKinds).Draw(g.t, label+"_end")
	if fr.Start.Kind == plan.Preceding || fr.Start.Kind == plan.Following {
		fr.Start.Offset = rapid.SampledFrom(frameOffsets()).Draw(g.t, label+"_start_off")
	}
	if fr.End.Kind == plan.Preceding || fr.End.Kind == plan.Following {
		fr.End.Offset = rapid.SampledFrom(frameOffsets()).Draw(g.t, label+"_end_off")
	}
	return fr
}
