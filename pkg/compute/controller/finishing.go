package controller

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// replicaFinishing is the part of a finishing each replica process applies:
// ordering and a limit covering offset+limit, but no offset and no
// projection, so that the controller can merge several processes' answers
// and apply the exact finishing once (applyFinishing). Nil when there is
// nothing for a replica to cut.
func replicaFinishing(f *plan.Finishing) *plan.Finishing {
	if f == nil || (len(f.Order) == 0 && f.Limit == nil) {
		return nil
	}
	out := &plan.Finishing{Order: f.Order}
	if f.Limit != nil {
		l := *f.Limit + f.Offset
		if l < *f.Limit { // overflow: no cut
			return &plan.Finishing{Order: f.Order}
		}
		out.Limit = &l
	}
	return out
}

// applyFinishing orders rows, skips offset, keeps limit (counting
// multiplicities) and projects, with plan.Finishing.Apply. Nil keeps rows
// as they are.
func applyFinishing(rows []row.RowCount, f *plan.Finishing) ([]row.RowCount, error) {
	if f == nil {
		return rows, nil
	}
	out, err := f.Apply(rows)
	if err != nil {
		return nil, fmt.Errorf("peek: %w", err)
	}
	return out, nil
}
