package plan

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func rc(count int64, ds ...row.Datum) row.RowCount {
	return row.RowCount{Row: row.Pack(ds...), Count: count}
}

func TestFinishingApply(t *testing.T) {
	n, i, s := row.Null(), row.Int64, row.Text
	rows := []row.RowCount{rc(2, i(3), s("c")), rc(1, i(1), s("a")), rc(1, n, s("z")), rc(3, i(2), s("b")), rc(0, i(9), s("gone"))}
	tests := []struct {
		name string
		f    Finishing
		want []row.RowCount
	}{
		{"order asc nulls last", Finishing{Order: []ColumnOrder{{Column: 0, NullsLast: true}}},
			[]row.RowCount{rc(1, i(1), s("a")), rc(3, i(2), s("b")), rc(2, i(3), s("c")), rc(1, n, s("z"))}},
		{"order desc nulls first", Finishing{Order: []ColumnOrder{{Column: 0, Desc: true}}},
			[]row.RowCount{rc(1, n, s("z")), rc(2, i(3), s("c")), rc(3, i(2), s("b")), rc(1, i(1), s("a"))}},
		{"limit counts multiplicity", Finishing{Order: []ColumnOrder{{Column: 0, NullsLast: true}}, Limit: limit(3), Project: []int{1}},
			[]row.RowCount{rc(1, s("a")), rc(2, s("b"))}},
		{"offset inside a row", Finishing{Order: []ColumnOrder{{Column: 0, NullsLast: true}}, Offset: 2, Limit: limit(3)},
			[]row.RowCount{rc(2, i(2), s("b")), rc(1, i(3), s("c"))}},
		{"offset beyond", Finishing{Offset: 10}, []row.RowCount{}},
		{"limit zero", Finishing{Limit: limit(0)}, []row.RowCount{}},
		{"zero columns", Finishing{Order: []ColumnOrder{{Column: 1}}, Limit: limit(1), Project: []int{}}, []row.RowCount{rc(1)}},
	}
	for _, tt := range tests {
		got, err := tt.f.Apply(rows)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
			continue
		}
		for k := range got {
			if string(got[k].Row) != string(tt.want[k].Row) || got[k].Count != tt.want[k].Count {
				t.Errorf("%s: row %d = %s x%d, want %s x%d", tt.name, k, got[k].Row, got[k].Count, tt.want[k].Row, tt.want[k].Count)
			}
		}
	}
	if _, err := (&Finishing{}).Apply([]row.RowCount{rc(-1, i(1))}); err == nil {
		t.Error("negative count accepted")
	}
	if _, err := (&Finishing{Project: []int{3}}).Apply(rows); err == nil {
		t.Error("projection out of range accepted")
	}
	if _, err := (&Finishing{}).Apply([]row.RowCount{{Row: row.Row{0x01}, Count: 1}}); err == nil {
		t.Error("corrupt row accepted")
	}
	if !(&Finishing{}).IsTrivial(2) || !(&Finishing{Project: []int{0, 1}}).IsTrivial(2) || (&Finishing{Project: []int{1}}).IsTrivial(2) {
		t.Error("IsTrivial wrong")
	}
}
