package server

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/trace"
	"github.com/tandemdb/tandem/pkg/sharing"
)

func TestFinishShard(t *testing.T) {
	pr := func(a, b int64, n int64) peek.RowCount {
		return peek.RowCount{Row: row.Pack(row.Int64(a), row.Int64(b)), Count: n}
	}
	rows := []peek.RowCount{pr(3, 30, 1), pr(1, 10, 2), pr(2, 20, 1), pr(4, 40, 0)}
	limit := int64(2)
	tests := []struct {
		name string
		f    *plan.Finishing
		want []string
	}{
		{"none keeps rows, drops zero counts", nil, []string{"(3, 30)", "(1, 10)x2", "(2, 20)"}},
		{"order desc", &plan.Finishing{Order: []plan.ColumnOrder{{Column: 0, Desc: true}}}, []string{"(3, 30)", "(2, 20)", "(1, 10)x2"}},
		{"limit counts multiplicity", &plan.Finishing{Order: []plan.ColumnOrder{{Column: 0}}, Limit: &limit}, []string{"(1, 10)x2"}},
		{"offset and project", &plan.Finishing{Order: []plan.ColumnOrder{{Column: 0}}, Offset: 2, Project: []int{1}}, []string{"(20)", "(30)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := finish(slices.Clone(rows), tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, r := range got {
				x := r.Row.String()
				if r.Count != 1 {
					x += fmt.Sprintf("x%d", r.Count)
				}
				s = append(s, x)
			}
			if !slices.Equal(s, tt.want) {
				t.Fatalf("got %v, want %v", s, tt.want)
			}
		})
	}
	if _, err := finish([]peek.RowCount{pr(1, 1, -1)}, nil); sqlstate(err) != CodeInternal || err == nil {
		t.Fatalf("negative count: %v", err)
	}
}

func TestTranslateRuntimeErrors(t *testing.T) {
	tests := []struct {
		err  error
		code string
	}{
		{fmt.Errorf("x: %w", runtime.ErrUnknownCollection), CodeUndefinedObject},
		{fmt.Errorf("x: %w", runtime.ErrDuplicateExport), CodeDuplicateObject},
		{fmt.Errorf("x: %w", peek.ErrResultTooLarge), CodeResultTooLarge},
		{fmt.Errorf("x: %w", plan.ErrInvalid), CodeInvalidPlan},
		{fmt.Errorf("x: %w", trace.ErrCompacted), CodeReadOutOfRange},
		{fmt.Errorf("x: %w", sharing.ErrCompacted), CodeReadOutOfRange},
		{fmt.Errorf("x: %w", render.ErrBeyondUntil), CodeReadOutOfRange},
		{fmt.Errorf("x: %w", sharing.ErrDropped), CodeUndefinedObject},
		{errors.New("other"), CodeInternal},
	}
	for _, tt := range tests {
		if got := sqlstate(translate(tt.err)); got != tt.code {
			t.Errorf("%v: %s, want %s", tt.err, got, tt.code)
		}
	}
	if translate(nil) != nil {
		t.Error("nil error translated")
	}
}
