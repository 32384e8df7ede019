package planner

import (
	"fmt"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// Explain renders a planned query: which path answers it (an index
// lookup, an index scan, a constant, or a one-shot dataflow), the plan
// tree, and the finishing.
func Explain(q *Query) string {
	var sb strings.Builder
	switch {
	case q.FastPath != nil && q.FastPath.Keys != nil:
		fmt.Fprintf(&sb, "Fast path: lookup of %d key(s) in index %s on %s\n", len(q.FastPath.Keys), q.FastPath.Index, q.FastPath.On)
		writeMfp(&sb, 1, q.FastPath.MFP)
	case q.FastPath != nil:
		fmt.Fprintf(&sb, "Fast path: scan of index %s on %s\n", q.FastPath.Index, q.FastPath.On)
		writeMfp(&sb, 1, q.FastPath.MFP)
	case len(q.DependsOn) == 0:
		sb.WriteString("Constant (evaluated without a dataflow)\n")
		writePlan(&sb, 1, &q.Plan)
	default:
		sb.WriteString("Dataflow (one-shot)\n")
		writePlan(&sb, 1, &q.Plan)
	}
	f := q.Finishing
	if !f.IsTrivial(q.Desc.Arity()) {
		var parts []string
		if len(f.Order) > 0 {
			var os []string
			for _, o := range f.Order {
				dir := "asc"
				if o.Desc {
					dir = "desc"
				}
				nulls := "nulls_first"
				if o.NullsLast {
					nulls = "nulls_last"
				}
				os = append(os, fmt.Sprintf("#%d %s %s", o.Column, dir, nulls))
			}
			parts = append(parts, "order_by=["+strings.Join(os, ", ")+"]")
		}
		if f.Limit != nil {
			parts = append(parts, fmt.Sprintf("limit=%d", *f.Limit))
		}
		if f.Offset != 0 {
			parts = append(parts, fmt.Sprintf("offset=%d", f.Offset))
		}
		parts = append(parts, fmt.Sprintf("project=%v", f.Project))
		sb.WriteString("Finish " + strings.Join(parts, " ") + "\n")
	}
	return sb.String()
}

// ExplainMaintained renders the plan of a maintained definition (a
// materialized view's dataflow), which has no path or finishing.
func ExplainMaintained(q *Query) string {
	var sb strings.Builder
	sb.WriteString("Dataflow (maintained)\n")
	writePlan(&sb, 1, &q.Plan)
	return sb.String()
}

func indent(sb *strings.Builder, depth int) { sb.WriteString(strings.Repeat("  ", depth)) }

func exprList(es []expr.Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func writeMfp(sb *strings.Builder, depth int, m expr.MFP) {
	if len(m.Expressions) > 0 {
		indent(sb, depth)
		sb.WriteString("map " + exprList(m.Expressions) + "\n")
	}
	if len(m.Predicates) > 0 {
		indent(sb, depth)
		sb.WriteString("filter " + exprList(m.Predicates) + "\n")
	}
	indent(sb, depth)
	fmt.Fprintf(sb, "project %v\n", m.Projection)
}

// windowFuncs renders a Window's functions with their arguments and
// frames, e.g. sum(#2) rows[preceding 1, current_row].
func windowFuncs(fs []plan.WindowFunc) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		name := string(f.Func)
		if f.Func == plan.WinAggregate {
			name = string(f.Agg)
		}
		var args []string
		if f.Arg >= 0 {
			args = append(args, fmt.Sprintf("#%d", f.Arg))
		}
		if f.N != 0 {
			args = append(args, fmt.Sprint(f.N))
		}
		if f.Default >= 0 {
			args = append(args, fmt.Sprintf("#%d", f.Default))
		}
		mode := "range"
		switch {
		case f.Frame.Rows:
			mode = "rows"
		case f.Frame.Groups:
			mode = "groups"
		}
		bound := func(b plan.FrameBound) string {
			if b.RangeTarget != nil {
				return fmt.Sprintf("%s to %s", b.Kind, b.RangeTarget)
			}
			if b.Kind == plan.Preceding || b.Kind == plan.Following {
				return fmt.Sprintf("%s %d", b.Kind, b.Offset)
			}
			return string(b.Kind)
		}
		parts[i] = fmt.Sprintf("%s(%s) %s[%s, %s]", name, strings.Join(args, ", "), mode, bound(f.Frame.Start), bound(f.Frame.End))
		if f.Frame.Exclude != "" {
			parts[i] += " exclude " + string(f.Frame.Exclude)
		}
	}
	return strings.Join(parts, ", ")
}

func writePlan(sb *strings.Builder, depth int, p *plan.Plan) {
	indent(sb, depth)
	switch n := p.Node().(type) {
	case *plan.Get:
		fmt.Fprintf(sb, "Get %s\n", n.ID)
		return
	case *plan.Constant:
		fmt.Fprintf(sb, "Constant (%d rows)\n", len(n.Rows))
		return
	case *plan.Mfp:
		sb.WriteString("Mfp\n")
		writeMfp(sb, depth+1, n.MFP)
	case *plan.Join:
		if len(n.LeftKey) == 0 {
			sb.WriteString("Cross join (no keys)\n")
			break
		}
		fmt.Fprintf(sb, "Join on %s = %s\n", exprList(n.LeftKey), exprList(n.RightKey))
	case *plan.Reduce:
		var aggs []string
		for _, a := range n.Aggregates {
			s := string(a.Func)
			if a.Func != plan.AggCountStar {
				d := ""
				if a.Distinct {
					d = "distinct "
				}
				s += "(" + d + a.Expr.String() + stringAggExplain(a) + ")"
			}
			aggs = append(aggs, s)
		}
		fmt.Fprintf(sb, "Reduce group_by=%s aggregates=[%s]\n", exprList(n.GroupKey), strings.Join(aggs, ", "))
	case *plan.TopK:
		lim := "none"
		if n.Limit != nil {
			lim = fmt.Sprint(*n.Limit)
		}
		fmt.Fprintf(sb, "TopK group_by=%v order=%v limit=%s offset=%d\n", n.GroupKey, n.Order, lim, n.Offset)
	case *plan.Window:
		fmt.Fprintf(sb, "Window partition_by=%v order=%v funcs=[%s] (recomputed per changed partition)\n",
			n.PartitionBy, n.OrderBy, windowFuncs(n.Funcs))
	case *plan.Recursive:
		sb.WriteString(explainRecursive(n) + "\n")
		indent(sb, depth+1)
		sb.WriteString("non-recursive term:\n")
		writePlan(sb, depth+2, n.Base)
		indent(sb, depth+1)
		fmt.Fprintf(sb, "recursive term (each round, over the rows %s the last round added):\n", n.ID)
		writePlan(sb, depth+2, n.Step)
		return
	case *plan.Let:
		// The binding once, then the plan reading it by name (what
		// PostgreSQL shows as a CTE and its CTE scans).
		fmt.Fprintf(sb, "With %s (computed once; every Get %s below reads it)\n", n.ID, n.ID)
		writePlan(sb, depth+1, n.Value)
		indent(sb, depth)
		sb.WriteString("Return\n")
		writePlan(sb, depth+1, n.Body)
		return
	case *plan.TemporalFilter:
		bs := make([]string, len(n.Bounds))
		for i, b := range n.Bounds {
			bs[i] = b.String()
		}
		fmt.Fprintf(sb, "TemporalFilter %s (rows enter and leave as the logical time now() passes)\n", strings.Join(bs, " AND "))
	case *plan.FlatMap:
		ord := ""
		if n.Ordinality {
			ord = " with ordinality"
		}
		fmt.Fprintf(sb, "FlatMap %s%s\n", n.Call, ord)
	default:
		sb.WriteString(strings.ToUpper(p.Kind()[:1]) + p.Kind()[1:] + "\n")
	}
	for _, in := range p.Inputs() {
		writePlan(sb, depth+1, in)
	}
}
