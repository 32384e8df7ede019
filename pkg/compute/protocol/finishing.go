package protocol

import (
	"fmt"
	"math"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// FinishingToProto encodes f; nil encodes as absent.
func FinishingToProto(f *plan.Finishing) *computepb.RowSetFinishing {
	if f == nil {
		return nil
	}
	p := &computepb.RowSetFinishing{OrderBy: ordersToProto(f.Order), Offset: uint64(max(f.Offset, 0)), Project: intsToProto(f.Project)}
	if f.Limit != nil {
		l := uint64(max(*f.Limit, 0))
		p.Limit = &l
	}
	return p
}

// FinishingFromProto decodes a finishing. An absent one, or one that
// neither orders, limits, offsets nor projects, is nil. An empty
// projection on the wire keeps every column. Limits and offsets beyond
// int64 are refused.
func FinishingFromProto(p *computepb.RowSetFinishing) (*plan.Finishing, error) {
	if p == nil || (len(p.GetOrderBy()) == 0 && p.Limit == nil && p.GetOffset() == 0 && len(p.GetProject()) == 0) {
		return nil, nil
	}
	f := &plan.Finishing{Project: intsFromProto(p.GetProject())}
	var err error
	if f.Order, err = ordersFromProto(p.GetOrderBy()); err != nil {
		return nil, fieldErr("order_by", err)
	}
	if p.GetOffset() > math.MaxInt64 {
		return nil, fieldErr("offset", fmt.Errorf("offset %d is beyond int64", p.GetOffset()))
	}
	f.Offset = int64(p.GetOffset())
	if p.Limit != nil {
		if p.GetLimit() > math.MaxInt64 {
			return nil, fieldErr("limit", fmt.Errorf("limit %d is beyond int64", p.GetLimit()))
		}
		l := int64(p.GetLimit())
		f.Limit = &l
	}
	return f, nil
}

// RowCountToProto encodes a result row; its count is positive (the
// replica refuses a result with another before it gets here).
func RowCountToProto(r row.RowCount) *computepb.RowCount {
	return &computepb.RowCount{Row: r.Row, Count: uint64(max(r.Count, 0))}
}

// RowCountFromProto decodes a result row; a count beyond int64 is a
// *DecodeError.
func RowCountFromProto(p *computepb.RowCount) (row.RowCount, error) {
	if p.GetCount() > math.MaxInt64 {
		return row.RowCount{}, fieldErr("count", fmt.Errorf("count %d is beyond int64", p.GetCount()))
	}
	return row.RowCount{Row: p.GetRow(), Count: int64(p.GetCount())}, nil
}
