package operators

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// stringAggEntry is one row of a string_agg group with a non-null value.
type stringAggEntry struct {
	ds []row.Datum
	n  int64
}

// stringAgg computes string_agg over a group's unpacked value rows ds
// (multiplicities in input): values in Order, ties by value then
// separator, so the result depends only on the group's multiset. As in
// PostgreSQL each value is preceded by its own row's separator except the
// first, and a NULL separator adds nothing. Distinct keeps one of each
// (value, separator) pair: PostgreSQL requires a DISTINCT call's ORDER BY
// to be over its arguments, so equal pairs sort next to each other.
func stringAgg(a Aggregate, ds [][]row.Datum, input []ValDiff) (row.Datum, error) {
	cols := []int{a.Column, a.Sep}
	for _, o := range a.Order {
		cols = append(cols, o.Column)
	}
	entries := make([]stringAggEntry, 0, len(ds))
	for i, d := range ds {
		for _, c := range cols {
			if c < 0 || c >= len(d) {
				return row.Null(), Error{Code: CodeInternal, Message: "reduce: " + a.String() + " reads a missing column"}
			}
		}
		if d[a.Column].IsNull() {
			continue
		}
		entries = append(entries, stringAggEntry{ds: d, n: input[i].Diff})
	}
	if len(entries) == 0 {
		return row.Null(), nil
	}
	slices.SortFunc(entries, func(x, y stringAggEntry) int { return compareStringAgg(a, x.ds, y.ds) })
	var sb strings.Builder
	typ := entries[0].ds[a.Column].Type()
	first := true
	for i, e := range entries {
		v, sep := e.ds[a.Column], e.ds[a.Sep]
		if v.Type() != typ || (!sep.IsNull() && sep.Type() != typ) || (typ != row.TypeText && typ != row.TypeBytes) {
			return row.Null(), Error{Code: CodeInternal, Message: fmt.Sprintf("string_agg: argument types %s and %s", v.Type(), sep.Type())}
		}
		n := e.n
		if a.Distinct {
			prev := entries[max(i-1, 0)].ds
			if i > 0 && row.Equal(prev[a.Column], v) && row.Equal(prev[a.Sep], sep) {
				continue
			}
			n = 1
		}
		for range n {
			if !first && !sep.IsNull() {
				sb.WriteString(rawString(sep))
			}
			sb.WriteString(rawString(v))
			first = false
		}
	}
	if typ == row.TypeBytes {
		return row.BytesString(sb.String()), nil
	}
	return row.Text(sb.String()), nil
}

// compareStringAgg orders two rows of a string_agg group.
func compareStringAgg(a Aggregate, x, y []row.Datum) int {
	for _, o := range a.Order {
		if c := o.Compare(x[o.Column], y[o.Column]); c != 0 {
			return c
		}
	}
	if c := row.Compare(x[a.Column], y[a.Column]); c != 0 {
		return c
	}
	return row.Compare(x[a.Sep], y[a.Sep])
}

// rawString is a text or bytea datum's content.
func rawString(d row.Datum) string {
	if d.Type() == row.TypeBytes {
		return d.BytesString()
	}
	return d.Text()
}
