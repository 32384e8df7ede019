package plan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestLetDesc(t *testing.T) {
	l := Local(1)
	// WITH l AS (SELECT k, v FROM u2 WHERE k > 0) SELECT * FROM l JOIN l ON k = k
	value := NewMfp(NewGet(User(2)), expr.Identity(2).Filter(expr.Gt(col(0), lit(row.Int64(0)))))
	good := NewLet(l, value, NewJoin(NewGet(l), NewGet(l), []expr.Expr{col(0)}, []expr.Expr{col(0)}))
	d, err := good.Desc(MapEnv(descs))
	if err != nil {
		t.Fatal(err)
	}
	if want := []row.ColumnType{tInt, tIntNull, tInt, tIntNull}; !equalTypes(d.Types, want) {
		t.Errorf("types %v, want %v (the value's, twice)", d.Types, want)
	}
	if deps := good.DependsOn(); len(deps) != 1 || deps[0] != User(2) {
		t.Errorf("DependsOn = %v, want [u2] (the binding is not a dependency)", deps)
	}
	unused := NewLet(l, NewGet(User(1)), NewGet(User(3)))
	if deps := unused.DependsOn(); len(deps) != 2 {
		t.Errorf("DependsOn of a let read by nothing = %v, want [u1 u3]", deps)
	}
	bad := []struct {
		name string
		p    Plan
		want string
	}{
		{"not local", NewLet(User(9), NewGet(User(2)), NewGet(User(9))), "not a local id"},
		{"value reads itself", NewLet(l, NewGet(l), NewGet(l)), "let.value.get: unknown id"},
		{"read outside", NewUnion(NewLet(l, NewGet(User(2)), NewGet(l)), NewGet(l)), "unknown id"},
		{"rebound", NewLet(l, NewGet(User(2)), NewLet(l, NewGet(User(2)), NewGet(l))), "already bound"},
		{"recursion rebinds", NewLet(l, NewGet(User(2)), NewRecursive(l, "r", NewGet(User(2)), NewGet(l), false, 3)), "already bound"},
		{"missing body", Plan{Let: &Let{ID: l, Value: &value}}, "let.body: missing input"},
	}
	for _, tt := range bad {
		if _, err := tt.p.Desc(MapEnv(descs)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestExpandAndInlineLets(t *testing.T) {
	l, m := Local(1), Local(2)
	value := NewDistinct(NewGet(User(2)))
	inner := NewLet(m, NewNegate(NewGet(l)), NewUnion(NewGet(m), NewGet(l)))
	p := NewLet(l, value, NewJoin(NewGet(l), inner, nil, nil))
	want := NewJoin(value, NewUnion(NewNegate(value), value), nil, nil)
	if got := ExpandLets(p); !sameJSON(t, got, want) {
		t.Errorf("ExpandLets:\n%s\nwant\n%s", mustJSON(t, got), mustJSON(t, want))
	}
	// Inline undoes one binding and keeps the others.
	body := *p.Let.Body
	got := Inline(body, l, value)
	if want := NewJoin(value, NewLet(m, NewNegate(value), NewUnion(NewGet(m), value)), nil, nil); !sameJSON(t, got, want) {
		t.Errorf("Inline:\n%s\nwant\n%s", mustJSON(t, got), mustJSON(t, want))
	}
	// Nodes that read no binding are shared, not copied.
	if got.Join.Right.Let.Value.Negate.Input.Distinct != value.Distinct {
		t.Errorf("Inline copied the value instead of sharing it")
	}
	untouched := NewMfp(NewGet(User(1)), expr.Identity(2))
	if got := Inline(untouched, l, value); got.Mfp != untouched.Mfp {
		t.Errorf("Inline copied a plan without the binding")
	}
}

func mustJSON(t *testing.T, p Plan) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sameJSON(t *testing.T, a, b Plan) bool { return mustJSON(t, a) == mustJSON(t, b) }
