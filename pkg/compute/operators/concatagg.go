package operators

import (
	"fmt"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// concatEntry is one row of a concat_agg group with a non-null argument.
type concatEntry struct {
	ds []row.Datum
	n  int64
}

// concatAgg computes AggConcat over a group's unpacked value rows ds
// (multiplicities in input): the non-NULL arguments in Order, ties by
// value, so the result depends only on the group's multiset; each
// argument is repeated by its multiplicity (once under Distinct, which
// keeps one of each run of equal arguments: PostgreSQL requires a
// DISTINCT call's ORDER BY to be over its argument, so equal arguments
// sort next to each other). Arguments are arrays of one type, whose
// elements are concatenated, or jsonb arrays, whose elements make one
// jsonb array. NULL when no argument is non-NULL.
func concatAgg(a Aggregate, ds [][]row.Datum, input []ValDiff) (row.Datum, error) {
	entries := make([]concatEntry, 0, len(ds))
	for i, d := range ds {
		if a.Column < 0 || a.Column >= len(d) {
			return row.Null(), Error{Code: CodeInternal, Message: "reduce: " + a.String() + " reads a missing column"}
		}
		for _, o := range a.Order {
			if o.Column < 0 || o.Column >= len(d) {
				return row.Null(), Error{Code: CodeInternal, Message: "reduce: " + a.String() + " reads a missing column"}
			}
		}
		if d[a.Column].IsNull() {
			continue
		}
		entries = append(entries, concatEntry{ds: d, n: input[i].Diff})
	}
	if len(entries) == 0 {
		return row.Null(), nil
	}
	slices.SortFunc(entries, func(x, y concatEntry) int {
		for _, o := range a.Order {
			if c := o.Compare(x.ds[o.Column], y.ds[o.Column]); c != 0 {
				return c
			}
		}
		return row.Compare(x.ds[a.Column], y.ds[a.Column])
	})
	typ := entries[0].ds[a.Column].Type()
	var parts []row.Datum
	for i, e := range entries {
		v := e.ds[a.Column]
		if v.Type() != typ || (!typ.IsArray() && typ != row.TypeJSONB) {
			return row.Null(), Error{Code: CodeInternal, Message: fmt.Sprintf("concat_agg: argument types %s and %s", typ, v.Type())}
		}
		n := e.n
		if a.Distinct {
			if i > 0 && row.Equal(entries[i-1].ds[a.Column], v) {
				continue
			}
			n = 1
		}
		for range n {
			parts = append(parts, v)
		}
	}
	if typ == row.TypeJSONB {
		return concatJSONArrays(parts)
	}
	d, err := row.ArrayConcat(typ, parts...)
	if err != nil {
		return row.Null(), Error{Code: CodeInternal, Message: "concat_agg: " + err.Error()}
	}
	return d, nil
}

// concatJSONArrays is the jsonb array of the elements of jsonb arrays.
func concatJSONArrays(parts []row.Datum) (row.Datum, error) {
	out := row.JSON{Kind: row.JSONArray}
	for _, p := range parts {
		j := p.JSON()
		if j.Kind != row.JSONArray {
			return row.Null(), Error{Code: CodeInternal, Message: "concat_agg: jsonb argument is not an array"}
		}
		out.Elems = append(out.Elems, j.Elems...)
	}
	return row.JSONB(out), nil
}
