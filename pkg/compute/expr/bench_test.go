package expr

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// BenchmarkMFP: WHERE x > 0 AND s LIKE 'a%' SELECT x + 1, s over one row.
func BenchmarkMFP(b *testing.B) {
	m := MFP{
		Expressions: []Expr{Add(Column(0), i64(1))},
		Predicates:  []Expr{Gt(Column(0), i64(0)), Like(Column(1), txt("a%"))},
		Projection:  []int{2, 1},
	}
	p, err := m.Prepare(2)
	if err != nil {
		b.Fatal(err)
	}
	in := []row.Datum{row.Int64(3), row.Text("abc")}
	var s Scratch
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.Evaluate(in, &s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvalArith(b *testing.B) {
	e := Add(Mul(Column(0), i64(3)), Div(Column(0), i64(2)))
	in := []row.Datum{row.Int64(1234)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Eval(in); err != nil {
			b.Fatal(err)
		}
	}
}
