package plan

import (
	"fmt"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Finishing is the part of a read done on the collected result rather
// than in a dataflow: ORDER BY, OFFSET, LIMIT, then a final projection.
// Both the replica (to cut what it sends) and the controller (to merge
// the answers of several workers) apply it. A nil Project keeps every
// column; an empty non-nil one keeps none.
type Finishing struct {
	Order   []ColumnOrder `json:"order,omitempty"`
	Limit   *int64        `json:"limit,omitempty"`
	Offset  int64         `json:"offset,omitempty"`
	Project []int         `json:"project"`
}

// IsTrivial reports whether f only projects the identity of the given
// arity, so rows can be passed through untouched.
func (f *Finishing) IsTrivial(arity int) bool {
	if len(f.Order) != 0 || f.Limit != nil || f.Offset != 0 {
		return false
	}
	if f.Project == nil {
		return true
	}
	if len(f.Project) != arity {
		return false
	}
	for i, c := range f.Project {
		if c != i {
			return false
		}
	}
	return true
}

// Validate checks f against rows of the given arity.
func (f *Finishing) Validate(arity int) error {
	for i, o := range f.Order {
		if o.Column < 0 || o.Column >= arity {
			return fmt.Errorf("finishing: order %d: column #%d out of range (%d columns)", i, o.Column, arity)
		}
	}
	for i, c := range f.Project {
		if c < 0 || c >= arity {
			return fmt.Errorf("finishing: project %d: column #%d out of range (%d columns)", i, c, arity)
		}
	}
	if f.Limit != nil && *f.Limit < 0 {
		return fmt.Errorf("finishing: negative limit %d", *f.Limit)
	}
	if f.Offset < 0 {
		return fmt.Errorf("finishing: negative offset %d", f.Offset)
	}
	return nil
}

// CompareOrdered compares two rows by order, then (so that the order is
// total and every replica produces the same answer) by the whole row.
func CompareOrdered(a, b []row.Datum, order []ColumnOrder) int {
	if c := row.CompareColumns(a, b, order); c != 0 {
		return c
	}
	return row.CompareDatums(a, b)
}

// Apply finishes rows: it drops rows with count zero, rejects a negative
// count (a read must never see a retraction without its row), sorts by
// Order, skips Offset rows and keeps Limit rows
// counting multiplicities (a row with count 3 is three rows), and
// projects. Rows equal after projection stay separate entries.
func (f *Finishing) Apply(rows []row.RowCount) ([]row.RowCount, error) {
	type decoded struct {
		datums []row.Datum
		rc     row.RowCount
	}
	ds := make([]decoded, 0, len(rows))
	for i, r := range rows {
		if r.Count < 0 {
			return nil, fmt.Errorf("finishing: row %d (%s) has negative count %d", i, r.Row, r.Count)
		}
		if r.Count == 0 {
			continue
		}
		datums, err := r.Row.Unpack()
		if err != nil {
			return nil, fmt.Errorf("finishing: row %d: %w", i, err)
		}
		if err := f.Validate(len(datums)); err != nil {
			return nil, err
		}
		ds = append(ds, decoded{datums, r})
	}
	if len(f.Order) > 0 || f.Limit != nil || f.Offset > 0 {
		slices.SortFunc(ds, func(a, b decoded) int {
			return CompareOrdered(a.datums, b.datums, f.Order)
		})
	}
	skip := f.Offset
	remaining := int64(-1)
	if f.Limit != nil {
		remaining = *f.Limit
	}
	out := make([]row.RowCount, 0, len(ds))
	for _, d := range ds {
		if remaining == 0 {
			break
		}
		n := d.rc.Count
		if skip > 0 {
			cut := min(skip, n)
			skip -= cut
			n -= cut
			if n == 0 {
				continue
			}
		}
		if remaining > 0 {
			n = min(n, remaining)
			remaining -= n
		}
		r := d.rc.Row
		if f.Project != nil {
			r = nil
			for _, c := range f.Project {
				r = row.AppendDatum(r, d.datums[c])
			}
		}
		out = append(out, row.RowCount{Row: r, Count: n})
	}
	return out, nil
}
