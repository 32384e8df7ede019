package reference

import (
	"sort"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// concatAgg computes aggregate i, a concat_agg, over group g by its
// definition: list every non-NULL argument as often as its multiplicity,
// sort the list by the ORDER BY terms then by value, keep the first of
// each run of equal arguments under DISTINCT, and build one array (or
// jsonb array) from all their elements, decoded one by one. NULL when
// the list is empty.
func concatAgg(red *plan.Reduce, i int, g Collection) (row.Datum, error) {
	at := orderedArgsAt(red, i)
	a := red.Aggregates[i]
	items := orderedItems(g, a.OrderBy, i, -1, at)
	if len(items) == 0 {
		return row.Null(), nil
	}
	typ := items[0].v.Type()
	var elems []row.Datum
	var jelems []row.JSON
	for j, it := range items {
		if a.Distinct && j > 0 && row.Equal(items[j-1].v, it.v) {
			continue
		}
		switch {
		case it.v.Type() != typ || (!typ.IsArray() && typ != row.TypeJSONB):
			return row.Null(), &evalError{"XX000", "concat_agg: argument types " + typ.String() + " and " + it.v.Type().String()}
		case typ == row.TypeJSONB && it.v.JSON().Kind != row.JSONArray:
			return row.Null(), &evalError{"XX000", "concat_agg: jsonb argument is not an array"}
		case typ == row.TypeJSONB:
			jelems = append(jelems, it.v.JSON().Elems...)
		default:
			elems = append(elems, it.v.ArrayElems()...)
		}
	}
	if typ == row.TypeJSONB {
		return row.JSONB(row.JSON{Kind: row.JSONArray, Elems: jelems}), nil
	}
	d, err := row.Array(typ, elems)
	if err != nil {
		return row.Null(), &evalError{"XX000", "concat_agg: " + err.Error()}
	}
	return d, nil
}

// compareAggOrder compares two rows' ORDER BY values, the j-th value
// under the j-th term (row.ColumnOrder.Compare: NULLs first or last as
// each term says, whatever its direction).
func compareAggOrder(order []plan.AggOrder, x, y []row.Datum) int {
	for j, o := range order {
		if c := (row.ColumnOrder{Desc: o.Desc, NullsLast: o.NullsLast}).Compare(x[j], y[j]); c != 0 {
			return c
		}
	}
	return 0
}

// aggItem is one non-NULL argument of an ordered aggregate: its value,
// its separator (string_agg; NULL otherwise) and its ORDER BY keys.
type aggItem struct {
	v, sep row.Datum
	keys   []row.Datum
}

// orderedItems lists group g's non-NULL values of column i, each as often
// as its multiplicity, with the separator at column sepAt (-1: none) and
// the ORDER BY keys from column keysAt, sorted by the ORDER BY terms, then
// by value, then by separator.
func orderedItems(g Collection, order []plan.AggOrder, i, sepAt, keysAt int) []aggItem {
	var items []aggItem
	for k, n := range g {
		ds := unpack(k)
		it := aggItem{v: ds[i], keys: ds[keysAt : keysAt+len(order)]}
		if sepAt >= 0 {
			it.sep = ds[sepAt]
		}
		if it.v.IsNull() {
			continue
		}
		for range n {
			items = append(items, it)
		}
	}
	sort.SliceStable(items, func(x, y int) bool {
		if c := compareAggOrder(order, items[x].keys, items[y].keys); c != 0 {
			return c < 0
		}
		if c := row.Compare(items[x].v, items[y].v); c != 0 {
			return c < 0
		}
		return row.Compare(items[x].sep, items[y].sep) < 0
	})
	return items
}
