package operators

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TopKSpec describes a TopK: per group, the rows ordered by Order (ties
// broken by the encoded row, so the result is a deterministic function of
// the group's multiset), skipping Offset rows and keeping at most Limit
// (Limit < 0 means no limit). A row with multiplicity n counts as n rows.
type TopKSpec struct {
	Order  []row.ColumnOrder
	Limit  int64
	Offset int64
}

// CompareRows orders two unpacked rows by the spec's order columns, then by
// their encodings ea and eb. It is exported so the reference evaluator and
// the operator share the one definition of TopK's order.
func (s TopKSpec) CompareRows(a, b []row.Datum, ea, eb []byte) int {
	if c := row.CompareColumns(a, b, s.Order); c != 0 {
		return c
	}
	return bytes.Compare(ea, eb)
}

// TopKLogic returns the group logic of TopK: the input is arranged by the
// group key with the whole row as value; the output is the group's rows in
// positions [Offset, Offset+Limit) of the order, with multiplicities cut at
// the window's edges. A negative multiplicity is an error (XX000).
func TopKLogic(spec TopKSpec) GroupLogic {
	type entry struct {
		ds  []row.Datum
		val []byte
		n   int64
	}
	var entries []entry
	return func(key []byte, input []ValDiff) ([]ValDiff, error) {
		entries = entries[:0]
		for _, v := range input {
			if v.Diff < 0 {
				return nil, negativeMultiplicity("topk")
			}
			ds, err := row.Row(v.Val).Unpack()
			if err != nil {
				return nil, Error{Code: CodeInternal, Message: fmt.Sprintf("topk: %v", err)}
			}
			entries = append(entries, entry{ds: ds, val: v.Val, n: v.Diff})
		}
		slices.SortFunc(entries, func(a, b entry) int { return spec.CompareRows(a.ds, b.ds, a.val, b.val) })
		var out []ValDiff
		skip, left := spec.Offset, spec.Limit
		for _, e := range entries {
			if left == 0 {
				break
			}
			n := e.n
			if skip > 0 {
				s := min(skip, n)
				skip -= s
				n -= s
			}
			if left > 0 {
				n = min(n, left)
				left -= n
			}
			if n > 0 {
				out = append(out, ValDiff{Val: e.val, Diff: n})
			}
		}
		// The window is in order-by order; outputs are val-sorted.
		slices.SortFunc(out, func(a, b ValDiff) int { return bytes.Compare(a.Val, b.Val) })
		return out, nil
	}
}
