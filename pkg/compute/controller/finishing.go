package controller

import (
	"fmt"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// replicaFinishing is the part of a finishing each replica process applies:
// ordering and a limit covering offset+limit, but no offset and no
// projection, so that the controller can merge several processes' answers
// and apply the exact finishing once (applyFinishing).
func replicaFinishing(f *computepb.RowSetFinishing) *computepb.RowSetFinishing {
	if f == nil {
		return nil
	}
	out := &computepb.RowSetFinishing{OrderBy: f.GetOrderBy()}
	if f.Limit != nil {
		l := f.GetLimit() + f.GetOffset()
		out.Limit = &l
	}
	return out
}

// applyFinishing orders rows, skips offset, keeps limit (counting
// multiplicities) and projects. Rows are encoded with pkg/compute/row.
func applyFinishing(rows []RowCount, f *computepb.RowSetFinishing) ([]RowCount, error) {
	if f == nil {
		return rows, nil
	}
	if len(f.GetOrderBy()) > 0 {
		type keyed struct {
			rc   RowCount
			cols []row.Datum
		}
		// cols holds only the order's columns, so the comparator reads
		// column i for the order's term i.
		local := make([]plan.ColumnOrder, len(f.GetOrderBy()))
		for i, o := range f.GetOrderBy() {
			local[i] = plan.ColumnOrder{Column: i, Desc: o.GetDesc(), NullsLast: o.GetNullsLast()}
		}
		ks := make([]keyed, len(rows))
		for i, rc := range rows {
			ks[i].rc = rc
			for _, o := range f.GetOrderBy() {
				d, err := row.Row(rc.Row).Column(int(o.GetColumn()))
				if err != nil {
					return nil, fmt.Errorf("finishing: order by column %d: %w", o.GetColumn(), err)
				}
				ks[i].cols = append(ks[i].cols, d)
			}
		}
		slices.SortStableFunc(ks, func(a, b keyed) int { return plan.CompareColumns(a.cols, b.cols, local) })
		for i := range ks {
			rows[i] = ks[i].rc
		}
	}
	offset := f.GetOffset()
	var out []RowCount
	var kept uint64
	for _, rc := range rows {
		n := rc.Count
		if offset > 0 {
			skip := min(offset, n)
			offset -= skip
			n -= skip
		}
		if f.Limit != nil {
			n = min(n, f.GetLimit()-kept)
		}
		if n == 0 {
			if f.Limit != nil && kept == f.GetLimit() {
				break
			}
			continue
		}
		kept += n
		r := rc.Row
		if len(f.GetProject()) > 0 {
			cols := make([]int, len(f.GetProject()))
			for i, c := range f.GetProject() {
				cols[i] = int(c)
			}
			p, err := row.Project(row.Row(r), cols)
			if err != nil {
				return nil, fmt.Errorf("finishing: project: %w", err)
			}
			r = p
		}
		out = append(out, RowCount{Row: r, Count: n})
	}
	return out, nil
}
