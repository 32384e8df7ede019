package protocol

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// allFuncs returns every scalar function the expr package knows.
func allFuncs() []expr.Func {
	var out []expr.Func
	for f := expr.FuncInvalid + 1; !strings.HasPrefix(f.String(), "func("); f++ {
		out = append(out, f)
	}
	return out
}

// rangeTarget is a RANGE offset bound's target (the ORDER BY column minus
// an offset), as the planner builds it.
func rangeTarget() *expr.Expr {
	e := expr.Sub(expr.Column(0), expr.Literal(row.Int64(3)))
	return &e
}

// literals returns one datum of every type (and NULL).
func literals() []row.Datum {
	arr, err := row.Array(row.TypeInt64Array, []row.Datum{row.Int64(1), row.Null(), row.Int64(-3)})
	if err != nil {
		panic(err)
	}
	return []row.Datum{
		row.Null(), row.Bool(true), row.Bool(false), row.Int64(-42), row.Float64(2.5), row.Text("a\x00b"),
		row.Bytes([]byte{0, 1, 2}), row.Timestamp(1e12), row.Date(-3), row.Time(5e6), row.TimestampTZ(7),
		row.IntervalDatum(row.Interval{Months: 1, Days: 2, Micros: 3}), row.NumericFromInt64(123456789),
		row.UUID([16]byte{1, 2, 3}), arr,
	}
}

// everyExpr covers every op, every function and a literal of every type.
func everyExpr() []expr.Expr {
	out := []expr.Expr{
		expr.Column(0), expr.Column(7), expr.TypedNull(row.TypeText),
		expr.And(expr.Column(0), expr.Column(1)), expr.And(), expr.Or(expr.Column(0)),
		expr.If(expr.Column(0), expr.Literal(row.Int64(1)), expr.TypedNull(row.TypeInt64)),
		expr.Coalesce(expr.Column(1), expr.Literal(row.Int64(0))),
		expr.In(expr.Column(0), expr.Literal(row.Int64(1)), expr.Literal(row.Int64(2))),
		expr.Cast(expr.Column(0), row.TypeText),
	}
	for _, d := range literals() {
		out = append(out, expr.Literal(d))
	}
	for _, f := range allFuncs() {
		out = append(out, expr.Call(f, expr.Column(0), expr.Literal(row.Text("x"))))
	}
	return out
}

// everyPlan is a description whose builds use every plan node kind.
func everyPlan() *plan.DataflowDescription {
	i64 := row.ColumnType{Type: row.TypeInt64}
	desc := row.NewRelationDesc([]string{"a", "b"}, []row.ColumnType{i64, {Type: row.TypeText, Nullable: true}})
	get := plan.NewGet(plan.User(1))
	limit := int64(3)
	sep := expr.Literal(row.Text(","))
	builds := []plan.Plan{
		plan.NewConstant(desc, plan.ConstantRow{Datums: []row.Datum{row.Int64(1), row.Null()}, Diff: 2}),
		plan.NewMfp(get, expr.Identity(2).Map(everyExpr()...).Filter(expr.Gt(expr.Column(0), expr.Literal(row.Int64(1)))).Project(1, 0)),
		plan.NewJoin(get, get, []expr.Expr{expr.Column(0)}, []expr.Expr{expr.Column(0)}),
		plan.NewReduce(get, []expr.Expr{expr.Column(1)},
			plan.Aggregate{Func: plan.AggCountStar},
			plan.Aggregate{Func: plan.AggSum, Expr: expr.Column(0), Distinct: true},
			plan.Aggregate{Func: plan.AggStringAgg, Expr: expr.Column(1), Sep: &sep,
				OrderBy: []plan.AggOrder{{Expr: expr.Column(0), Desc: true, NullsLast: true}}}),
		plan.NewDistinct(get), plan.NewThreshold(get), plan.NewNegate(get), plan.NewUnion(get, get),
		plan.NewTopK(get, []int{1}, []plan.ColumnOrder{{Column: 0, Desc: true}}, &limit, 2),
		plan.NewTopK(get, nil, nil, nil, 0),
		plan.NewArrangeBy(get, []expr.Expr{expr.Column(0)}, []expr.Expr{expr.Column(1), expr.Column(0)}),
		{Window: &plan.Window{Input: &get, PartitionBy: []int{1}, OrderBy: []plan.ColumnOrder{{Column: 0, NullsLast: true}},
			Funcs: []plan.WindowFunc{
				{Func: plan.WinRowNumber, Arg: -1, Default: -1},
				{Func: plan.WinLag, Arg: 0, Default: -1, N: 2},
				{Func: plan.WinAggregate, Agg: plan.AggSum, Arg: 0, Default: -1, Frame: plan.WindowFrame{Rows: true,
					Start: plan.FrameBound{Kind: plan.Preceding, Offset: 2}, End: plan.FrameBound{Kind: plan.CurrentRow}, Exclude: plan.ExcludeTies}},
				{Func: plan.WinAggregate, Agg: plan.AggCountStar, Arg: -1, Default: -1, Frame: plan.WindowFrame{
					Start: plan.FrameBound{Kind: plan.Preceding, RangeTarget: rangeTarget()}, End: plan.FrameBound{Kind: plan.CurrentRow}}},
			}}},
		{Recursive: &plan.Recursive{ID: plan.Local(1), Name: "r", Base: &get, Step: ptr(plan.NewGet(plan.Local(1))), Distinct: true, MaxIterations: 100}},
		{FlatMap: &plan.FlatMap{Input: &get, Call: expr.TableCall{Func: expr.TableGenerateSeries, Args: []expr.Expr{expr.Column(0), expr.Literal(row.Int64(3))}}, Ordinality: true}},
		// Lockstep calls travel as one call with its calls in its arguments.
		{FlatMap: &plan.FlatMap{Input: &get, Call: expr.RowsFrom([]expr.TableCall{
			{Func: expr.TableGenerateSeries, Args: []expr.Expr{expr.Column(0), expr.Literal(row.Int64(3))}},
			{Func: expr.TableGenerateSeries, Args: []expr.Expr{expr.Literal(row.Int64(1)), expr.Literal(row.Int64(2))}},
		}, []int{1, 1})}},
		plan.NewTemporalFilter(get, plan.TemporalBound{Expr: expr.Column(0), Op: plan.TemporalLte}),
		// A value read twice, and a nested one read by nothing.
		plan.NewLet(plan.Local(2), get, plan.NewLet(plan.Local(3), plan.NewDistinct(plan.NewGet(plan.Local(2))),
			plan.NewJoin(plan.NewGet(plan.Local(2)), plan.NewGet(plan.Local(2)), []expr.Expr{expr.Column(0)}, []expr.Expr{expr.Column(0)}))),
	}
	d := &plan.DataflowDescription{
		ID: plan.Transient(9), DebugName: "every node", Class: plan.ClassLiveRead,
		SourceImports: []plan.SourceImport{{ID: plan.System(3), Desc: desc,
			Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{"generator": "counter"}}}},
		IndexImports: []plan.IndexImport{{ID: plan.User(2), On: plan.User(1), Key: []expr.Expr{expr.Column(0)}, Desc: desc}},
		IndexExports: []plan.IndexExport{{ID: plan.User(50), On: plan.User(40), Key: []expr.Expr{expr.Column(0)}}},
		SubscribeSinks: []plan.SubscribeSink{{ID: plan.User(51), From: plan.User(40), Snapshot: true, Progress: true, UpTo: frontier.Closed()},
			{ID: plan.User(52), From: plan.User(40), UpTo: frontier.At(9), Shard: "shard-1"}},
		AsOf: frontier.At(5), Until: frontier.Closed(),
	}
	for i, b := range builds {
		d.ObjectsToBuild = append(d.ObjectsToBuild, plan.Build{ID: plan.User(uint64(100 + i)), Plan: b})
	}
	return d
}

func ptr[T any](v T) *T { return &v }

// sameJSON compares two values by their JSON forms, treating an absent,
// null, empty array and empty object alike (Go's nil and empty slices).
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	norm := func(v any) any {
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		if err := json.Unmarshal(js, &out); err != nil {
			t.Fatal(err)
		}
		return prune(out)
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			e = prune(e)
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = e
		}
		if len(x) == 0 {
			return nil
		}
	case []any:
		if len(x) == 0 {
			return nil
		}
		for i := range x {
			x[i] = prune(x[i])
		}
	}
	return v
}

// Every plan node kind, expression op, function and literal type survives
// encode, marshal, unmarshal and decode, equal to what was encoded; and
// the decoded description validates as the original does.
func TestDataflowRoundTrip(t *testing.T) {
	descs := []*plan.DataflowDescription{everyPlan()}
	golden, err := os.ReadFile(filepath.Join("..", "plan", "testdata", "dataflow.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g plan.DataflowDescription
	if err := json.Unmarshal(golden, &g); err != nil {
		t.Fatal(err)
	}
	descs = append(descs, &g)
	for _, d := range descs {
		b, err := MarshalDataflow(d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalDataflow(b)
		if err != nil {
			t.Fatalf("%s: %v", d.DebugName, err)
		}
		if !sameJSON(t, d, got) {
			want, _ := json.Marshal(d)
			have, _ := json.Marshal(got)
			t.Fatalf("%s: round trip changed the description:\n want %s\n have %s", d.DebugName, want, have)
		}
		if got.AsOf != d.AsOf || got.Until != d.Until {
			t.Fatalf("%s: times %v %v, want %v %v", d.DebugName, got.AsOf, got.Until, d.AsOf, d.Until)
		}
		if plan.Compatible(d, got) != nil {
			t.Fatalf("%s: decoded description is not compatible with the original: %v", d.DebugName, plan.Compatible(d, got))
		}
		again, err := MarshalDataflow(got)
		if err != nil || string(again) != string(b) {
			t.Fatalf("%s: re-encoding differs (%v)", d.DebugName, err)
		}
	}
	if err := g.Validate(); err != nil {
		t.Fatalf("golden description does not validate: %v", err)
	}
}

// Expressions compare with Expr.Equal, which sees literal values exactly.
func TestExprRoundTrip(t *testing.T) {
	for _, e := range everyExpr() {
		got, err := ExprFromProto(ExprToProto(&e))
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if !got.Equal(e) {
			t.Fatalf("round trip of %s gave %s", e, got)
		}
	}
	if len(allFuncs()) < 100 {
		t.Fatalf("only %d functions found: allFuncs stops early", len(allFuncs()))
	}
}

// expr.Op and the wire enum are numbered alike.
func TestExprOpNumbering(t *testing.T) {
	for o := expr.OpColumn; o <= expr.OpCast; o++ {
		name := computepb.ExprOp_name[int32(o)]
		if want := "EXPR_OP_" + strings.ToUpper(o.String()); name != want {
			t.Errorf("op %s is %s on the wire, want %s", o, name, want)
		}
	}
}

// Malformed messages are refused with a DecodeError naming the field.
func TestDecodeErrorsNameTheField(t *testing.T) {
	valid := func() *computepb.DataflowDescription {
		p, err := DataflowToProto(everyPlan())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name  string
		mod   func(p *computepb.DataflowDescription)
		field string
	}{
		{"no id", func(p *computepb.DataflowDescription) { p.Id = nil }, "id"},
		{"no as_of", func(p *computepb.DataflowDescription) { p.AsOf = nil }, "as_of"},
		{"bad class", func(p *computepb.DataflowDescription) { p.Class = 9 }, "class"},
		{"plan without kind", func(p *computepb.DataflowDescription) { p.ObjectsToBuild[3].Plan = &computepb.Plan{} }, "objects_to_build[3].plan"},
		{"unknown function", func(p *computepb.DataflowDescription) {
			p.ObjectsToBuild[1].Plan.GetMfp().Mfp.Predicates[0].Func = "nope"
		}, "objects_to_build[1].plan.mfp.mfp.predicates[0].func"},
		{"bad literal", func(p *computepb.DataflowDescription) {
			p.ObjectsToBuild[1].Plan.GetMfp().Mfp.Predicates[0].Args[1].Value = []byte{0xFF}
		}, "objects_to_build[1].plan.mfp.mfp.predicates[0].args[1].value"},
		{"two datums in a literal", func(p *computepb.DataflowDescription) {
			p.ObjectsToBuild[1].Plan.GetMfp().Mfp.Predicates[0].Args[1].Value = row.Pack(row.Int64(1), row.Int64(2))
		}, "objects_to_build[1].plan.mfp.mfp.predicates[0].args[1].value"},
		{"unknown type", func(p *computepb.DataflowDescription) { p.IndexImports[0].Desc.Types[0].Type = "int128" }, "index_imports[0].desc.types[0]"},
		{"missing join side", func(p *computepb.DataflowDescription) { p.ObjectsToBuild[2].Plan.GetJoin().Right = nil }, "objects_to_build[2].plan.join.right"},
		{"missing sink up_to", func(p *computepb.DataflowDescription) { p.SubscribeSinks[1].UpTo = nil }, "subscribe_sinks[1].up_to"},
		{"bad op", func(p *computepb.DataflowDescription) { p.IndexExports[0].Key[0].Op = 99 }, "index_exports[0].key[0].op"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := valid()
			tc.mod(p)
			_, err := DataflowFromProto(p)
			de, ok := err.(*DecodeError)
			if !ok {
				t.Fatalf("error %v (%T), want a *DecodeError", err, err)
			}
			if de.Field != tc.field {
				t.Fatalf("field %q, want %q (%v)", de.Field, tc.field, err)
			}
			if de.GRPCStatus().Code().String() != "InvalidArgument" {
				t.Fatalf("status %v", de.GRPCStatus())
			}
		})
	}
}

// TestWriteLetSeed writes the fuzz seed let_node (a description whose one
// build is a Let read twice) when TANDEM_WRITE_FUZZ_SEEDS is set.
func TestWriteLetSeed(t *testing.T) {
	if os.Getenv("TANDEM_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("TANDEM_WRITE_FUZZ_SEEDS not set")
	}
	d := everyPlan()
	d.ObjectsToBuild = d.ObjectsToBuild[len(d.ObjectsToBuild)-1:]
	b, err := MarshalDataflow(d)
	if err != nil {
		t.Fatal(err)
	}
	seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
	if err := os.WriteFile(filepath.Join("testdata", "fuzz", "FuzzDecodeDataflow", "let_node"), []byte(seed), 0o644); err != nil {
		t.Fatal(err)
	}
}
