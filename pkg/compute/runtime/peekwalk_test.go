package runtime

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// peekWalkRead reads an index of (k) -> (k, 10*k) for k in [1, n] at time
// 5, with the given error rows.
func peekWalkRead(t *testing.T, n int, errRows ...row.Row) (ok, errs trace.Read) {
	t.Helper()
	build := func(push func(b *batch.Builder)) trace.Read {
		var b batch.Builder
		push(&b)
		bat, err := b.Build(batch.Description{Lower: frontier.At(0), Upper: frontier.At(10), Since: frontier.Minimum()})
		if err != nil {
			t.Fatal(err)
		}
		return trace.Read{Batches: []*batch.Batch{bat}, Time: 5}
	}
	ok = build(func(b *batch.Builder) {
		for k := int64(1); k <= int64(n); k++ {
			b.Push(row.Pack(row.Int64(k)), row.Pack(row.Int64(k), row.Int64(10*k)), 1, 1)
		}
	})
	errs = build(func(b *batch.Builder) {
		for _, r := range errRows {
			b.Push(r, nil, 1, 1)
		}
	})
	return ok, errs
}

func walkAll(t *testing.T, w *peek.Walk) string {
	t.Helper()
	var rows []peek.RowCount
	for !w.Step(0) {
		rows = append(rows, w.TakeChunk()...)
	}
	last, err := w.Result()
	if err != nil {
		t.Fatal(err)
	}
	rows = append(rows, last...)
	var s []string
	for _, rc := range rows {
		s = append(s, fmt.Sprintf("%s x%d", rc.Row, rc.Count))
	}
	return strings.Join(s, "; ")
}

// TestNewPeekWalk: the one read of an index shard for a peek (the
// runtime's workers and the interactive wrapper's peer reads) fails with
// an error row, applies the literal keys and the MFP, and applies the
// top-k only when the result is not chunked.
func TestNewPeekWalk(t *testing.T) {
	filter := expr.MFP{Predicates: []expr.Expr{expr.Gt(expr.Column(1), expr.Literal(row.Int64(20)))}, Projection: []int{1}}
	topK := &peek.TopK{Limit: 2, Order: []plan.ColumnOrder{{Column: 0, Desc: true}}}
	for _, tc := range []struct {
		name    string
		p       Peek
		errRows []row.Row
		chunk   int
		want    string
		wantErr string
	}{
		{name: "all", want: walkAllWant(t, 1, 2, 3, 4)},
		{name: "keys", p: Peek{Keys: [][]byte{row.Pack(row.Int64(3)), row.Pack(row.Int64(1))}}, want: walkAllWant(t, 1, 3)},
		{name: "mfp", p: Peek{MFP: &filter}, want: "(30) x1; (40) x1"},
		{name: "top-k", p: Peek{TopK: topK}, want: walkAllWant(t, 3, 4)},
		{name: "top-k not applied to a chunked walk", p: Peek{TopK: topK}, chunk: 1, want: walkAllWant(t, 1, 2, 3, 4)},
		{name: "error row", errRows: []row.Row{render.ErrorRow(&render.EvalError{Code: "22012", Message: "division by zero"})},
			wantErr: "division by zero (SQLSTATE 22012)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, errs := peekWalkRead(t, 4, tc.errRows...)
			w, err := NewPeekWalk(tc.p, ok, errs, 0, tc.chunk)
			if tc.wantErr != "" {
				var ee *render.EvalError
				if err == nil || !errors.As(err, &ee) || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := walkAll(t, w); got != tc.want {
				t.Errorf("rows %s, want %s", got, tc.want)
			}
		})
	}
}

func walkAllWant(t *testing.T, ks ...int64) string {
	t.Helper()
	var s []string
	for _, k := range ks {
		s = append(s, fmt.Sprintf("%s x1", row.Row(row.Pack(row.Int64(k), row.Int64(10*k)))))
	}
	return strings.Join(s, "; ")
}
