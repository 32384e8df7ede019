package plan

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Plan is one node of the dataflow IR: a tagged union in which exactly
// one field is set. It serialises to JSON as {"<kind>": {...}}, e.g.
// {"distinct":{"input":{"get":{"id":"u1"}}}}. Use Kind or Node to
// dispatch, and Desc (or DataflowDescription.Validate) to check a tree.
//
// Every node's output is a collection of rows with multiplicities; the
// engine maintains it incrementally. Outer joins do not exist here: the
// SQL layer lowers them to an inner Join plus the unmatched rows, computed
// as Union(input, Negate(matched input)) after Distinct or a
// Threshold, so the engine only implements inner equi-joins.
type Plan struct {
	Get       *Get       `json:"get,omitempty"`
	Constant  *Constant  `json:"constant,omitempty"`
	Mfp       *Mfp       `json:"mfp,omitempty"`
	Join      *Join      `json:"join,omitempty"`
	Reduce    *Reduce    `json:"reduce,omitempty"`
	Distinct  *Distinct  `json:"distinct,omitempty"`
	Threshold *Threshold `json:"threshold,omitempty"`
	Union     *Union     `json:"union,omitempty"`
	Negate    *Negate    `json:"negate,omitempty"`
	TopK      *TopK      `json:"top_k,omitempty"`
	ArrangeBy *ArrangeBy `json:"arrange_by,omitempty"`
	Window    *Window    `json:"window,omitempty"`
	Recursive *Recursive `json:"recursive,omitempty"`
	Let       *Let       `json:"let,omitempty"`
	FlatMap   *FlatMap   `json:"flat_map,omitempty"`

	TemporalFilter *TemporalFilter `json:"temporal_filter,omitempty"`
}

// Get reads a collection imported into (or built earlier in) the
// dataflow.
type Get struct {
	ID GlobalID `json:"id"`
}

// Constant is a fixed collection: each row with its multiplicity, all at
// the dataflow's as_of.
type Constant struct {
	Rows []ConstantRow    `json:"rows"`
	Desc row.RelationDesc `json:"desc"`
}

// ConstantRow is one row of a Constant and its (non-zero) multiplicity.
type ConstantRow struct {
	Datums []row.Datum `json:"datums"`
	Diff   int64       `json:"diff"`
}

// Mfp applies a map/filter/project to each row of Input.
type Mfp struct {
	Input *Plan    `json:"input"`
	MFP   expr.MFP `json:"mfp"`
}

// Join is an inner equi-join: rows l of Left and r of Right with
// LeftKey(l) = RightKey(r) component-wise (compared as encoded rows, so
// NULL keys match each other: the SQL layer filters NULL keys first when
// SQL semantics require). The output row is l's columns then r's.
type Join struct {
	Left     *Plan       `json:"left"`
	Right    *Plan       `json:"right"`
	LeftKey  []expr.Expr `json:"left_key"`
	RightKey []expr.Expr `json:"right_key"`
}

// AggregateFunc names an aggregate.
type AggregateFunc string

// The aggregates. count counts non-NULL values of Expr; count_star counts
// rows (Expr is absent). sum of int64 is int64 (overflow is an error),
// sum of float64 is float64; avg is float64 for both (there is no
// numeric type); min and max have their input's type. sum, avg, min and
// max ignore NULLs and are NULL when a group has only NULLs.
const (
	AggCount     AggregateFunc = "count"
	AggCountStar AggregateFunc = "count_star"
	AggSum       AggregateFunc = "sum"
	AggMin       AggregateFunc = "min"
	AggMax       AggregateFunc = "max"
	AggAvg       AggregateFunc = "avg"
	// string_agg concatenates text (or bytea) values with the separator
	// Sep, in OrderBy order (then by value and separator); NULL values
	// are skipped. It is text, NULL when no value is non-NULL.
	AggStringAgg AggregateFunc = "string_agg"
	// The variance and standard deviation of float64 values (float64,
	// NULL for fewer than one value, two for the sample statistics).
	AggVarPop     AggregateFunc = "var_pop"
	AggVarSamp    AggregateFunc = "var_samp"
	AggStddevPop  AggregateFunc = "stddev_pop"
	AggStddevSamp AggregateFunc = "stddev_samp"
	// sum_squares is the exact sum of the squares of numeric values
	// (numeric), from which the SQL layer computes numeric variances.
	AggSumSquares AggregateFunc = "sum_squares"
	// jsonb_agg is the jsonb array of its (jsonb or NULL) arguments in
	// value order; jsonb_object_agg merges its one-pair jsonb objects.
	// Both are NULL over a group without arguments.
	AggJSONAgg       AggregateFunc = "jsonb_agg"
	AggJSONObjectAgg AggregateFunc = "jsonb_object_agg"
	// concat_agg concatenates its non-NULL arguments, all arrays of one
	// type or all jsonb arrays, in OrderBy order (then by value): the SQL
	// layer's array_agg(x) is concat_agg(ARRAY[x]) and jsonb_agg(x ORDER
	// BY ...) concat_agg of one-element jsonb arrays. It has the
	// argument's type, NULL when no argument is non-NULL.
	AggConcat AggregateFunc = "concat_agg"
)

// AggOrder is one term of an ORDER BY inside an aggregate call.
type AggOrder struct {
	Expr      expr.Expr `json:"expr"`
	Desc      bool      `json:"desc,omitempty"`
	NullsLast bool      `json:"nulls_last,omitempty"`
}

// Aggregate is one aggregate of a Reduce. Distinct aggregates over the
// distinct non-NULL values of Expr in the group.
type Aggregate struct {
	Func     AggregateFunc `json:"func"`
	Expr     expr.Expr     `json:"expr,omitzero"`
	Distinct bool          `json:"distinct,omitempty"`
	// Sep belongs to string_agg only, OrderBy to string_agg and
	// concat_agg.
	Sep     *expr.Expr `json:"sep,omitempty"`
	OrderBy []AggOrder `json:"order_by,omitempty"`
}

// Reduce groups Input by GroupKey and computes Aggregates per group. The
// output row is the group key's values then one column per aggregate.
// Only groups with rows exist: the SQL layer adds the row a global
// aggregate has over an empty input.
type Reduce struct {
	Input      *Plan       `json:"input"`
	GroupKey   []expr.Expr `json:"group_key"`
	Aggregates []Aggregate `json:"aggregates"`
}

// Distinct keeps each row of Input with multiplicity one if its
// multiplicity is positive.
type Distinct struct {
	Input *Plan `json:"input"`
}

// Threshold keeps each row of Input with its multiplicity if positive,
// and drops it otherwise (what EXCEPT ALL needs).
type Threshold struct {
	Input *Plan `json:"input"`
}

// Union adds the multiplicities of its inputs, which must have the same
// column types (nullability may differ; the output is nullable where any
// input is).
type Union struct {
	Inputs []Plan `json:"inputs"`
}

// Negate negates the multiplicity of every row of Input.
type Negate struct {
	Input *Plan `json:"input"`
}

// ColumnOrder is one ORDER BY term over a column: row.ColumnOrder, the
// type the engine's operators, the finishing and the SQL layer's sort
// share with row.CompareColumns. NullsLast is Postgres' default for
// ascending order; descending order defaults to NULLs first in Postgres,
// so the SQL layer sets NullsLast explicitly.
type ColumnOrder = row.ColumnOrder

// TopK keeps, per group of GroupKey columns, the rows at positions
// [Offset, Offset+Limit) in Order (ties broken by the whole row, so the
// result is deterministic); a nil Limit keeps everything after Offset.
type TopK struct {
	Input    *Plan         `json:"input"`
	GroupKey []int         `json:"group_key"`
	Order    []ColumnOrder `json:"order"`
	Limit    *int64        `json:"limit,omitempty"`
	Offset   int64         `json:"offset,omitempty"`
}

// ArrangeBy arranges Input by each of Keys (so a later Join or an index
// export can use the arrangement); its output is Input unchanged.
type ArrangeBy struct {
	Input *Plan         `json:"input"`
	Keys  [][]expr.Expr `json:"keys"`
}

// Kind returns the name of the node's variant ("get", "join", ...), or
// "" when no variant or more than one is set.
func (p Plan) Kind() string {
	kind, n := p.kind()
	if n != 1 {
		return ""
	}
	return kind
}

func (p Plan) kind() (string, int) {
	var kind string
	n := 0
	set := func(ok bool, k string) {
		if ok {
			kind = k
			n++
		}
	}
	set(p.Get != nil, "get")
	set(p.Constant != nil, "constant")
	set(p.Mfp != nil, "mfp")
	set(p.Join != nil, "join")
	set(p.Reduce != nil, "reduce")
	set(p.Distinct != nil, "distinct")
	set(p.Threshold != nil, "threshold")
	set(p.Union != nil, "union")
	set(p.Negate != nil, "negate")
	set(p.TopK != nil, "top_k")
	set(p.ArrangeBy != nil, "arrange_by")
	set(p.Window != nil, "window")
	set(p.Recursive != nil, "recursive")
	set(p.Let != nil, "let")
	set(p.FlatMap != nil, "flat_map")
	set(p.TemporalFilter != nil, "temporal_filter")
	return kind, n
}

// Node returns the variant that is set (*Get, *Join, ...) for a type
// switch, or nil when the node is malformed.
func (p Plan) Node() any {
	if _, n := p.kind(); n != 1 {
		return nil
	}
	switch {
	case p.Get != nil:
		return p.Get
	case p.Constant != nil:
		return p.Constant
	case p.Mfp != nil:
		return p.Mfp
	case p.Join != nil:
		return p.Join
	case p.Reduce != nil:
		return p.Reduce
	case p.Distinct != nil:
		return p.Distinct
	case p.Threshold != nil:
		return p.Threshold
	case p.Union != nil:
		return p.Union
	case p.Negate != nil:
		return p.Negate
	case p.TopK != nil:
		return p.TopK
	case p.Window != nil:
		return p.Window
	case p.Recursive != nil:
		return p.Recursive
	case p.Let != nil:
		return p.Let
	case p.FlatMap != nil:
		return p.FlatMap
	case p.TemporalFilter != nil:
		return p.TemporalFilter
	default:
		return p.ArrangeBy
	}
}

// Inputs returns the node's direct inputs.
func (p Plan) Inputs() []*Plan {
	switch n := p.Node().(type) {
	case *Mfp:
		return []*Plan{n.Input}
	case *Join:
		return []*Plan{n.Left, n.Right}
	case *Reduce:
		return []*Plan{n.Input}
	case *Distinct:
		return []*Plan{n.Input}
	case *Threshold:
		return []*Plan{n.Input}
	case *Negate:
		return []*Plan{n.Input}
	case *TopK:
		return []*Plan{n.Input}
	case *Window:
		return []*Plan{n.Input}
	case *FlatMap:
		return []*Plan{n.Input}
	case *TemporalFilter:
		return []*Plan{n.Input}
	case *ArrangeBy:
		return []*Plan{n.Input}
	case *Recursive:
		return []*Plan{n.Base, n.Step}
	case *Let:
		return []*Plan{n.Value, n.Body}
	case *Union:
		out := make([]*Plan, len(n.Inputs))
		for i := range n.Inputs {
			out[i] = &n.Inputs[i]
		}
		return out
	}
	return nil
}

// DependsOn returns the ids the plan reads with Get, each once, in the
// order first read; a Recursive node's or a Let's own binding (a local id
// read inside its Step or Body) is not a dependency.
func (p Plan) DependsOn() []GlobalID {
	var out []GlobalID
	seen := map[GlobalID]bool{}
	var walk func(*Plan)
	walk = func(q *Plan) {
		if q == nil {
			return
		}
		if q.Get != nil && !seen[q.Get.ID] {
			seen[q.Get.ID] = true
			out = append(out, q.Get.ID)
		}
		if q.Recursive != nil {
			// The binding is not a dependency: mark it seen while its
			// scope is walked.
			bound := seen[q.Recursive.ID]
			seen[q.Recursive.ID] = true
			walk(q.Recursive.Base)
			walk(q.Recursive.Step)
			seen[q.Recursive.ID] = bound
			return
		}
		if q.Let != nil {
			walk(q.Let.Value)
			bound := seen[q.Let.ID]
			seen[q.Let.ID] = true
			walk(q.Let.Body)
			seen[q.Let.ID] = bound
			return
		}
		for _, in := range q.Inputs() {
			walk(in)
		}
	}
	walk(&p)
	return out
}

// Constructors, so that plans read like the trees they are.

func NewGet(id GlobalID) Plan { return Plan{Get: &Get{ID: id}} }
func NewConstant(desc row.RelationDesc, rows ...ConstantRow) Plan {
	return Plan{Constant: &Constant{Rows: rows, Desc: desc}}
}
func NewMfp(input Plan, m expr.MFP) Plan { return Plan{Mfp: &Mfp{Input: &input, MFP: m}} }
func NewJoin(left, right Plan, leftKey, rightKey []expr.Expr) Plan {
	return Plan{Join: &Join{Left: &left, Right: &right, LeftKey: leftKey, RightKey: rightKey}}
}
func NewReduce(input Plan, groupKey []expr.Expr, aggs ...Aggregate) Plan {
	return Plan{Reduce: &Reduce{Input: &input, GroupKey: groupKey, Aggregates: aggs}}
}
func NewDistinct(input Plan) Plan  { return Plan{Distinct: &Distinct{Input: &input}} }
func NewThreshold(input Plan) Plan { return Plan{Threshold: &Threshold{Input: &input}} }
func NewUnion(inputs ...Plan) Plan { return Plan{Union: &Union{Inputs: inputs}} }
func NewNegate(input Plan) Plan    { return Plan{Negate: &Negate{Input: &input}} }
func NewArrangeBy(input Plan, keys ...[]expr.Expr) Plan {
	return Plan{ArrangeBy: &ArrangeBy{Input: &input, Keys: keys}}
}
func NewTopK(input Plan, groupKey []int, order []ColumnOrder, limit *int64, offset int64) Plan {
	return Plan{TopK: &TopK{Input: &input, GroupKey: groupKey, Order: order, Limit: limit, Offset: offset}}
}

// String returns a one-line summary of the node kind, for errors.
func (p Plan) String() string {
	if k := p.Kind(); k != "" {
		return k
	}
	_, n := p.kind()
	return fmt.Sprintf("malformed plan node (%d variants set)", n)
}
