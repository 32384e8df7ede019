package render

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

var windowKinds = map[plan.WindowFuncKind]operators.WindowKind{
	plan.WinRowNumber:   operators.WinRowNumber,
	plan.WinRank:        operators.WinRank,
	plan.WinDenseRank:   operators.WinDenseRank,
	plan.WinPercentRank: operators.WinPercentRank,
	plan.WinCumeDist:    operators.WinCumeDist,
	plan.WinNtile:       operators.WinNtile,
	plan.WinLag:         operators.WinLag,
	plan.WinLead:        operators.WinLead,
	plan.WinFirstValue:  operators.WinFirstValue,
	plan.WinLastValue:   operators.WinLastValue,
	plan.WinNthValue:    operators.WinNthValue,
	plan.WinAggregate:   operators.WinAggregate,
}

var boundKinds = map[plan.BoundKind]operators.FrameBoundKind{
	plan.UnboundedPreceding: operators.BoundUnboundedPreceding,
	plan.Preceding:          operators.BoundPreceding,
	plan.CurrentRow:         operators.BoundCurrentRow,
	plan.Following:          operators.BoundFollowing,
	plan.UnboundedFollowing: operators.BoundUnboundedFollowing,
}

var excludeKinds = map[plan.FrameExclude]operators.FrameExclude{
	"":                     operators.ExcludeNoOthers,
	plan.ExcludeCurrentRow: operators.ExcludeCurrentRow,
	plan.ExcludeGroup:      operators.ExcludeGroup,
	plan.ExcludeTies:       operators.ExcludeTies,
}

// WindowSpec converts a plan Window to the operator's spec (the engine
// property tests build operators with it too).
func WindowSpec(w *plan.Window) (operators.WindowSpec, error) {
	var spec operators.WindowSpec
	for _, o := range w.OrderBy {
		spec.Order = append(spec.Order, o)
	}
	desc := len(w.OrderBy) > 0 && w.OrderBy[0].Desc
	for _, f := range w.Funcs {
		k, ok := windowKinds[f.Func]
		if !ok {
			return spec, fmt.Errorf("window: unknown function %q", f.Func)
		}
		start, ok1 := boundKinds[f.Frame.Start.Kind]
		end, ok2 := boundKinds[f.Frame.End.Kind]
		if _, ok := excludeKinds[f.Frame.Exclude]; !ok1 || !ok2 || !ok {
			return spec, fmt.Errorf("window: unknown frame bound in %v", f.Frame)
		}
		of := operators.WindowFunc{Kind: k, Arg: f.Arg, Default: f.Default, N: f.N,
			Frame: operators.WindowFrame{Rows: f.Frame.Rows, Groups: f.Frame.Groups, Exclude: excludeKinds[f.Frame.Exclude],
				Start: frameBound(f.Frame.Start, start, true, desc),
				End:   frameBound(f.Frame.End, end, false, desc)}}
		if k == operators.WinAggregate {
			a, ok := aggFuncs[f.Agg]
			if !ok {
				return spec, fmt.Errorf("window: unknown aggregate %q", f.Agg)
			}
			of.Agg = operators.Aggregate{Func: a, Column: f.Arg}
		}
		spec.Funcs = append(spec.Funcs, of)
	}
	return spec, nil
}
