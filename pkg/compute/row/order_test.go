package row

import "testing"

func TestCompareColumns(t *testing.T) {
	asc := ColumnOrder{Column: 0, NullsLast: true} // PostgreSQL's ASC default
	desc := ColumnOrder{Column: 0, Desc: true}     // PostgreSQL's DESC default
	ascNullsFirst := ColumnOrder{Column: 0}        // ASC NULLS FIRST
	descNullsLast := ColumnOrder{Column: 0, Desc: true, NullsLast: true}
	second := ColumnOrder{Column: 1, NullsLast: true}
	one, two := Int64(1), Int64(2)
	tests := []struct {
		name  string
		a, b  []Datum
		order []ColumnOrder
		want  int
	}{
		{"asc less", []Datum{one}, []Datum{two}, []ColumnOrder{asc}, -1},
		{"asc greater", []Datum{two}, []Datum{one}, []ColumnOrder{asc}, 1},
		{"desc reverses", []Datum{one}, []Datum{two}, []ColumnOrder{desc}, 1},
		{"equal", []Datum{one}, []Datum{one}, []ColumnOrder{asc}, 0},
		{"no order", []Datum{one}, []Datum{two}, nil, 0},
		{"asc nulls last", []Datum{Null()}, []Datum{one}, []ColumnOrder{asc}, 1},
		{"asc nulls first", []Datum{Null()}, []Datum{one}, []ColumnOrder{ascNullsFirst}, -1},
		{"desc nulls first", []Datum{Null()}, []Datum{one}, []ColumnOrder{desc}, -1},
		{"desc nulls last", []Datum{one}, []Datum{Null()}, []ColumnOrder{descNullsLast}, -1},
		{"both null", []Datum{Null()}, []Datum{Null()}, []ColumnOrder{asc, desc}, 0},
		{"tie then second", []Datum{one, two}, []Datum{one, one}, []ColumnOrder{asc, second}, 1},
		{"first decides", []Datum{one, two}, []Datum{two, one}, []ColumnOrder{asc, second}, -1},
		{"column past the end is NULL", []Datum{one}, []Datum{one, one}, []ColumnOrder{second}, 1},
		{"negative column is NULL", []Datum{one}, []Datum{one}, []ColumnOrder{{Column: -1}}, 0},
		{"text", []Datum{Text("a")}, []Datum{Text("b")}, []ColumnOrder{asc}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CompareColumns(tc.a, tc.b, tc.order); got != tc.want {
				t.Errorf("CompareColumns(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := CompareColumns(tc.b, tc.a, tc.order); got != -tc.want {
				t.Errorf("CompareColumns(%v, %v) (swapped) = %d, want %d", tc.b, tc.a, got, -tc.want)
			}
		})
	}
}
