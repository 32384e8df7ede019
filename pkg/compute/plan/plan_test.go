package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

var (
	tInt     = row.ColumnType{Type: row.TypeInt64}
	tIntNull = row.ColumnType{Type: row.TypeInt64, Nullable: true}
	tText    = row.ColumnType{Type: row.TypeText}
	tFloat   = row.ColumnType{Type: row.TypeFloat64}

	// u1(id int64, name text), u2(k int64, v int64?), u3(s text, f float64)
	descs = map[GlobalID]row.RelationDesc{
		User(1): {Names: []string{"id", "name"}, Types: []row.ColumnType{tInt, tText}},
		User(2): {Names: []string{"k", "v"}, Types: []row.ColumnType{tInt, tIntNull}},
		User(3): {Names: []string{"s", "f"}, Types: []row.ColumnType{tText, tFloat}},
	}
	col = expr.Column
)

func lit(d row.Datum) expr.Expr { return expr.Literal(d) }
func limit(n int64) *int64      { return &n }

func TestPlanDesc(t *testing.T) {
	tests := []struct {
		name string
		p    Plan
		want []row.ColumnType
	}{
		{"get", NewGet(User(1)), []row.ColumnType{tInt, tText}},
		{"join", NewJoin(NewGet(User(1)), NewGet(User(2)), []expr.Expr{col(0)}, []expr.Expr{col(0)}),
			[]row.ColumnType{tInt, tText, tInt, tIntNull}},
		{"reduce", NewReduce(NewGet(User(2)), []expr.Expr{col(0)},
			Aggregate{Func: AggCountStar}, Aggregate{Func: AggSum, Expr: col(1)}, Aggregate{Func: AggAvg, Expr: col(0)},
			Aggregate{Func: AggMax, Expr: col(1)}, Aggregate{Func: AggCount, Expr: col(1), Distinct: true}),
			[]row.ColumnType{tInt, tInt, tIntNull, tFloat, tIntNull, tInt}},
		{"mfp", NewMfp(NewGet(User(1)), expr.MFP{
			Expressions: []expr.Expr{expr.Add(col(0), lit(row.Int64(1)))},
			Predicates:  []expr.Expr{expr.Like(col(1), lit(row.Text("a%")))},
			Projection:  []int{2, 1}}), []row.ColumnType{tInt, tText}},
		{"union widens nullability", NewUnion(NewGet(User(2)), NewNegate(NewGet(User(2))),
			NewMfp(NewGet(User(1)), expr.MFP{Expressions: []expr.Expr{col(0)}, Projection: []int{0, 2}})),
			[]row.ColumnType{tInt, tIntNull}},
		{"topk", NewTopK(NewGet(User(1)), []int{1}, []ColumnOrder{{Column: 0, Desc: true}}, limit(3), 1), []row.ColumnType{tInt, tText}},
		{"distinct threshold arrange", NewArrangeBy(NewThreshold(NewDistinct(NewGet(User(3)))), []expr.Expr{col(0)}), []row.ColumnType{tText, tFloat}},
		{"constant", NewConstant(row.RelationDesc{Names: []string{"x"}, Types: []row.ColumnType{tIntNull}},
			ConstantRow{Datums: []row.Datum{row.Int64(1)}, Diff: 2}, ConstantRow{Datums: []row.Datum{row.Null()}, Diff: -1}),
			[]row.ColumnType{tIntNull}},
	}
	for _, tt := range tests {
		d, err := tt.p.Desc(MapEnv(descs))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !d.Equal(row.RelationDesc{Types: tt.want}) || len(d.Names) != len(d.Types) {
			t.Errorf("%s: desc %v, want types %v", tt.name, d, tt.want)
		}
	}
}

func TestPlanDescErrors(t *testing.T) {
	tests := []struct {
		name string
		p    Plan
		want string
	}{
		{"unknown id", NewDistinct(NewGet(User(9))), "distinct.get: unknown id u9"},
		{"join key types", NewJoin(NewGet(User(1)), NewGet(User(2)), []expr.Expr{col(1)}, []expr.Expr{col(0)}),
			"join: left key 0 has type text, right key 0 has type int64"},
		{"join int vs float", NewJoin(NewGet(User(2)), NewGet(User(3)), []expr.Expr{col(0)}, []expr.Expr{col(1)}),
			"join: left key 0 has type int64, right key 0 has type float64"},
		{"join key arity", NewJoin(NewGet(User(1)), NewGet(User(2)), []expr.Expr{col(0), col(1)}, []expr.Expr{col(0)}),
			"join: left key has 2 columns, right key has 1"},
		{"join key out of range", NewJoin(NewGet(User(1)), NewGet(User(2)), []expr.Expr{col(5)}, []expr.Expr{col(0)}),
			"join: left key expression 0 (#5): column #5 out of range"},
		{"join input", NewJoin(NewGet(User(1)), NewGet(User(8)), nil, nil), "join.right.get: unknown id u8"},
		{"union arity", NewUnion(NewGet(User(1)), NewGet(User(2)), NewGet(User(3))), "union: input 1 column 1 has type int64, input 0 has type text"},
		{"union columns", NewUnion(NewGet(User(1)), NewReduce(NewGet(User(1)), nil, Aggregate{Func: AggCountStar})), "union: input 1 has 1 columns, input 0 has 2"},
		{"empty union", NewUnion(), "union: no inputs"},
		{"sum of text", NewReduce(NewGet(User(1)), nil, Aggregate{Func: AggSum, Expr: col(1)}), "reduce: aggregate 0: sum(#1): argument has type text"},
		{"count_star with expr", NewReduce(NewGet(User(1)), nil, Aggregate{Func: AggCountStar, Expr: col(1)}), "count_star takes no expression"},
		{"unknown aggregate", NewReduce(NewGet(User(1)), nil, Aggregate{Func: "median", Expr: col(0)}), `unknown aggregate function "median"`},
		{"mfp type error", NewMfp(NewGet(User(1)), expr.MFP{Predicates: []expr.Expr{expr.Eq(col(0), col(1))}}), "mfp: mfp predicate 0"},
		{"mfp projection", NewMfp(NewGet(User(1)), expr.MFP{Projection: []int{2}}), "mfp projection 0: column #2 out of range"},
		{"topk column", NewTopK(NewGet(User(1)), nil, []ColumnOrder{{Column: 2}}, nil, 0), "top_k: order 0: column #2 out of range"},
		{"topk limit", NewTopK(NewGet(User(1)), nil, nil, limit(-1), 0), "top_k: negative limit -1"},
		{"constant type", NewConstant(row.RelationDesc{Names: []string{"x"}, Types: []row.ColumnType{tInt}},
			ConstantRow{Datums: []row.Datum{row.Text("a")}, Diff: 1}), "constant: row 0: column 0 (x) of type int64 cannot hold text"},
		{"constant diff", NewConstant(row.RelationDesc{Names: []string{"x"}, Types: []row.ColumnType{tInt}},
			ConstantRow{Datums: []row.Datum{row.Int64(1)}}), "constant: row 0 has multiplicity 0"},
		{"arrange no keys", NewArrangeBy(NewGet(User(1))), "arrange_by: no keys"},
		{"malformed node", Plan{}, "malformed plan node (0 variants set)"},
		{"two variants", Plan{Get: &Get{ID: User(1)}, Distinct: &Distinct{}}, "malformed plan node (2 variants set)"},
		{"nil input", Plan{Distinct: &Distinct{}}, "distinct: missing input"},
	}
	for _, tt := range tests {
		_, err := tt.p.Desc(MapEnv(descs))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
	_, err := NewGet(User(9)).Desc(MapEnv(descs))
	if !errors.Is(err, ErrUnknownID) {
		t.Errorf("unknown id error %v does not wrap ErrUnknownID", err)
	}
}

func TestPlanHelpers(t *testing.T) {
	p := NewJoin(NewGet(User(1)), NewUnion(NewGet(User(2)), NewGet(User(1))), nil, nil)
	deps := p.DependsOn()
	if len(deps) != 2 || deps[0] != User(1) || deps[1] != User(2) {
		t.Errorf("DependsOn = %v", deps)
	}
	if p.Kind() != "join" || len(p.Inputs()) != 2 {
		t.Errorf("Kind/Inputs = %s %d", p.Kind(), len(p.Inputs()))
	}
	if _, ok := p.Node().(*Join); !ok {
		t.Errorf("Node = %T", p.Node())
	}
	if (&Plan{}).Node() != nil {
		t.Error("Node of an empty plan is not nil")
	}
}

func TestRecursiveDesc(t *testing.T) {
	binding := Local(1)
	// WITH RECURSIVE r(k, v) AS (SELECT k, v FROM u2 UNION SELECT k + 1, v FROM r WHERE k < 3)
	step := NewMfp(NewGet(binding), expr.MFP{
		Expressions: []expr.Expr{expr.Add(col(0), lit(row.Int64(1)))},
		Predicates:  []expr.Expr{expr.Lt(col(0), lit(row.Int64(3)))},
		Projection:  []int{2, 1}})
	good := NewRecursive(binding, "r", NewGet(User(2)), step, true, 10)
	d, err := good.Desc(MapEnv(descs))
	if err != nil {
		t.Fatal(err)
	}
	if want := []row.ColumnType{tIntNull, tIntNull}; !equalTypes(d.Types, want) {
		t.Errorf("types %v, want %v (nullable where the step is)", d.Types, want)
	}
	if deps := good.DependsOn(); len(deps) != 1 || deps[0] != User(2) {
		t.Errorf("DependsOn = %v, want [u2] (the binding is not a dependency)", deps)
	}
	if !good.Reads(binding) || NewGet(User(2)).Reads(binding) {
		t.Errorf("Reads")
	}
	bad := []struct {
		name string
		p    Plan
		want string
	}{
		{"not local", NewRecursive(User(9), "r", NewGet(User(2)), NewGet(User(9)), false, 10), "not a local id"},
		{"no limit", NewRecursive(binding, "r", NewGet(User(2)), step, false, 0), "iteration limit"},
		{"arity", NewRecursive(binding, "r", NewGet(User(1)), NewMfp(NewGet(binding), expr.MFP{Projection: []int{0}}), false, 5), "step has 1 columns"},
		{"types", NewRecursive(binding, "r", NewGet(User(1)), NewMfp(NewGet(binding), expr.MFP{Projection: []int{1, 0}}), false, 5), "step column 0"},
		{"binding outside", NewGet(binding), "unknown id"},
		{"rebound", NewRecursive(binding, "r", NewGet(User(2)), NewRecursive(binding, "s", NewGet(binding), NewGet(binding), false, 5), false, 5), "already bound"},
	}
	for _, tt := range bad {
		if _, err := tt.p.Desc(MapEnv(descs)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func equalTypes(a, b []row.ColumnType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
