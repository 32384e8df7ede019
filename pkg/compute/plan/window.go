package plan

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Window computes window functions: Input's rows are partitioned by the
// PartitionBy columns and each partition ordered by OrderBy (ties, which
// SQL leaves in no particular order, broken by the whole row, so that the
// result is deterministic); each output row is an input row followed by
// one column per function. A row with multiplicity n is n rows (each with
// its own row_number). Maintained per partition: when a partition
// changes, its outputs are recomputed and the difference emitted.
type Window struct {
	Input       *Plan         `json:"input"`
	PartitionBy []int         `json:"partition_by"`
	OrderBy     []ColumnOrder `json:"order_by"`
	Funcs       []WindowFunc  `json:"funcs"`
}

// WindowFuncKind names a window function.
type WindowFuncKind string

// The window functions. WinAggregate is an aggregate (Agg) over the
// function's frame.
const (
	WinRowNumber   WindowFuncKind = "row_number"
	WinRank        WindowFuncKind = "rank"
	WinDenseRank   WindowFuncKind = "dense_rank"
	WinPercentRank WindowFuncKind = "percent_rank"
	WinCumeDist    WindowFuncKind = "cume_dist"
	WinNtile       WindowFuncKind = "ntile"
	WinLag         WindowFuncKind = "lag"
	WinLead        WindowFuncKind = "lead"
	WinFirstValue  WindowFuncKind = "first_value"
	WinLastValue   WindowFuncKind = "last_value"
	WinNthValue    WindowFuncKind = "nth_value"
	WinAggregate   WindowFuncKind = "aggregate"
)

// WindowFunc is one window function. Arg is the input column of its
// value argument (lag, lead, first_value, last_value, nth_value and
// aggregates other than count(*); -1 otherwise). Default is the input
// column of lag's and lead's default (-1: NULL). N is ntile's bucket
// count, lag's and lead's offset and nth_value's position. Frame is the
// rows an aggregate, first_value, last_value and nth_value see.
type WindowFunc struct {
	Func    WindowFuncKind `json:"func"`
	Agg     AggregateFunc  `json:"agg,omitempty"`
	Arg     int            `json:"arg"`
	Default int            `json:"default"`
	N       int64          `json:"n,omitempty"`
	Frame   WindowFrame    `json:"frame"`
}

// WindowFrame is a frame: ROWS counts rows from the current one; GROUPS
// counts peer groups from the current row's (an offset bound is the
// first or last row of that group); RANGE (neither) is bounded only by
// UNBOUNDED or CURRENT ROW. In RANGE and GROUPS frames the current row
// means its first (start) or last (end) peer, peers being rows equal in
// the ORDER BY columns (all rows without ORDER BY). Exclude then removes
// the current row, its peer group, or its peers but itself.
type WindowFrame struct {
	Rows    bool         `json:"rows,omitempty"`
	Groups  bool         `json:"groups,omitempty"`
	Start   FrameBound   `json:"start"`
	End     FrameBound   `json:"end"`
	Exclude FrameExclude `json:"exclude,omitempty"`
}

// FrameExclude is a frame's EXCLUDE clause ("": EXCLUDE NO OTHERS).
type FrameExclude string

// The EXCLUDE options.
const (
	ExcludeCurrentRow FrameExclude = "current_row"
	ExcludeGroup      FrameExclude = "group"
	ExcludeTies       FrameExclude = "ties"
)

// BoundKind is a kind of frame bound.
type BoundKind string

// The frame bounds; Preceding and Following take an Offset: rows, peer
// groups, or (RANGE) the difference from the current row's value of the
// window's only ORDER BY column, an integer.
const (
	UnboundedPreceding BoundKind = "unbounded_preceding"
	Preceding          BoundKind = "preceding"
	CurrentRow         BoundKind = "current_row"
	Following          BoundKind = "following"
	UnboundedFollowing BoundKind = "unbounded_following"
)

// FrameBound is one end of a frame. A RANGE frame's offset bound over an
// ORDER BY column that is not an integer (float8, numeric, date, time,
// timestamp, timestamptz, interval) has RangeTarget instead of Offset: an
// expression over one column, #0, the current row's (non-NULL) ORDER BY
// value, that computes the bound's value: the value minus or plus the
// offset (an interval for the date and time types), in the direction of
// the bound and of the order. For a date column it is a timestamp; for a
// time column a time that may lie outside the day (expr.FuncTimeShift).
type FrameBound struct {
	Kind        BoundKind  `json:"kind"`
	Offset      int64      `json:"offset,omitempty"`
	RangeTarget *expr.Expr `json:"range_target,omitempty"`
}

// DefaultFrame is SQL's frame when none is written: RANGE BETWEEN
// UNBOUNDED PRECEDING AND CURRENT ROW.
func DefaultFrame() WindowFrame {
	return WindowFrame{Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}
}

// NewWindow returns a Window node.
func NewWindow(input Plan, partitionBy []int, orderBy []ColumnOrder, funcs ...WindowFunc) Plan {
	return Plan{Window: &Window{Input: &input, PartitionBy: partitionBy, OrderBy: orderBy, Funcs: funcs}}
}

func (w *Window) desc(env Env) (row.RelationDesc, error) {
	in, err := inputDesc("window", w.Input, env)
	if err != nil {
		return row.RelationDesc{}, err
	}
	n := in.Arity()
	for i, c := range w.PartitionBy {
		if c < 0 || c >= n {
			return row.RelationDesc{}, fmt.Errorf("window: partition column %d: #%d out of range (%d columns)", i, c, n)
		}
	}
	for i, o := range w.OrderBy {
		if o.Column < 0 || o.Column >= n {
			return row.RelationDesc{}, fmt.Errorf("window: order %d: column #%d out of range (%d columns)", i, o.Column, n)
		}
	}
	out := row.RelationDesc{Names: append([]string(nil), in.Names...), Types: append([]row.ColumnType(nil), in.Types...)}
	for len(out.Names) < n {
		out.Names = append(out.Names, "")
	}
	for i, f := range w.Funcs {
		if err := w.checkRangeOffset(f.Frame, in); err != nil {
			return row.RelationDesc{}, fmt.Errorf("window: function %d (%s): %w", i, f.Func, err)
		}
		t, err := f.resultType(in)
		if err != nil {
			return row.RelationDesc{}, fmt.Errorf("window: function %d (%s): %w", i, f.Func, err)
		}
		out.Names = append(out.Names, string(f.Func))
		out.Types = append(out.Types, t)
	}
	return out, nil
}

// resultType checks f against the input and returns its column type.
func (f WindowFunc) resultType(in row.RelationDesc) (row.ColumnType, error) {
	n := in.Arity()
	arg := func() (row.ColumnType, error) {
		if f.Arg < 0 || f.Arg >= n {
			return row.ColumnType{}, fmt.Errorf("argument column #%d out of range (%d columns)", f.Arg, n)
		}
		return in.Types[f.Arg], nil
	}
	if err := f.Frame.validate(); err != nil {
		return row.ColumnType{}, err
	}
	switch f.Func {
	case WinRowNumber, WinRank, WinDenseRank:
		return row.ColumnType{Type: row.TypeInt64}, nil
	case WinNtile:
		if f.N <= 0 {
			return row.ColumnType{}, fmt.Errorf("bucket count %d not positive", f.N)
		}
		return row.ColumnType{Type: row.TypeInt64}, nil
	case WinPercentRank, WinCumeDist:
		return row.ColumnType{Type: row.TypeFloat64}, nil
	case WinLag, WinLead, WinFirstValue, WinLastValue, WinNthValue:
		t, err := arg()
		if err != nil {
			return row.ColumnType{}, err
		}
		if f.Func == WinNthValue && f.N <= 0 {
			return row.ColumnType{}, fmt.Errorf("position %d not positive", f.N)
		}
		if f.Default >= 0 && (f.Func == WinLag || f.Func == WinLead) {
			if f.Default >= n || in.Types[f.Default].Type != t.Type {
				return row.ColumnType{}, fmt.Errorf("default column #%d out of range or not of the argument's type", f.Default)
			}
		}
		return row.ColumnType{Type: t.Type, Nullable: true}, nil
	case WinAggregate:
		if f.Agg == AggCountStar {
			return row.ColumnType{Type: row.TypeInt64}, nil
		}
		t, err := arg()
		if err != nil {
			return row.ColumnType{}, err
		}
		switch f.Agg {
		case AggCount:
			return row.ColumnType{Type: row.TypeInt64}, nil
		case AggSum:
			if t.Type != row.TypeInt64 && t.Type != row.TypeFloat64 && t.Type != row.TypeInterval && t.Type != row.TypeNumeric {
				return row.ColumnType{}, fmt.Errorf("sum of %s", t.Type)
			}
			return row.ColumnType{Type: t.Type, Nullable: true}, nil
		case AggMin, AggMax:
			return row.ColumnType{Type: t.Type, Nullable: true}, nil
		case AggAvg:
			if t.Type == row.TypeInterval {
				return row.ColumnType{Type: row.TypeInterval, Nullable: true}, nil
			}
			if t.Type != row.TypeInt64 && t.Type != row.TypeFloat64 {
				return row.ColumnType{}, fmt.Errorf("avg of %s", t.Type)
			}
			return row.ColumnType{Type: row.TypeFloat64, Nullable: true}, nil
		}
		return row.ColumnType{}, fmt.Errorf("unknown aggregate %q", f.Agg)
	}
	return row.ColumnType{}, fmt.Errorf("unknown window function %q", f.Func)
}

func (fr WindowFrame) validate() error {
	if fr.Rows && fr.Groups {
		return fmt.Errorf("frame both ROWS and GROUPS")
	}
	switch fr.Exclude {
	case "", ExcludeCurrentRow, ExcludeGroup, ExcludeTies:
	default:
		return fmt.Errorf("unknown frame exclusion %q", fr.Exclude)
	}
	for _, b := range []FrameBound{fr.Start, fr.End} {
		switch b.Kind {
		case UnboundedPreceding, CurrentRow, UnboundedFollowing:
		case Preceding, Following:
			if b.Offset < 0 {
				return fmt.Errorf("negative frame offset %d", b.Offset)
			}
		default:
			return fmt.Errorf("unknown frame bound %q", b.Kind)
		}
	}
	if fr.Start.Kind == UnboundedFollowing || fr.End.Kind == UnboundedPreceding {
		return fmt.Errorf("frame from %s to %s", fr.Start.Kind, fr.End.Kind)
	}
	return nil
}

// checkRangeOffset checks that a RANGE frame with an offset has one
// ORDER BY column, and an Offset for a bigint column, a RangeTarget for
// any other.
func (w *Window) checkRangeOffset(fr WindowFrame, in row.RelationDesc) error {
	if fr.Rows || fr.Groups || !fr.Start.hasOffset() && !fr.End.hasOffset() {
		return nil
	}
	if len(w.OrderBy) != 1 {
		return fmt.Errorf("RANGE frame with an offset needs one ORDER BY column")
	}
	typed := in.Types[w.OrderBy[0].Column].Type != row.TypeInt64
	for _, b := range []FrameBound{fr.Start, fr.End} {
		if b.hasOffset() && (b.RangeTarget != nil) != typed {
			return fmt.Errorf("RANGE frame with an offset over a %s ORDER BY column: an integer offset is only for bigint, a target only for other types", in.Types[w.OrderBy[0].Column].Type)
		}
	}
	return nil
}

func (b FrameBound) hasOffset() bool { return b.Kind == Preceding || b.Kind == Following }
