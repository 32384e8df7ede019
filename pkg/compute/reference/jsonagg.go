package reference

import (
	"sort"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// jsonAggregate is jsonb_agg and jsonb_object_agg by their definition:
// list every argument (each as often as its multiplicity, or once with
// DISTINCT), NULLs included, sort the list in SQL order, then build the
// array (a NULL as json null) or merge the one-pair objects, a later key
// replacing an earlier one. No arguments: NULL.
func jsonAggregate(kind aggKind, distinct bool, vals []weighted) (row.Datum, error) {
	var list []row.Datum
	for _, v := range vals {
		for range v.n {
			list = append(list, v.d)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return row.Compare(list[i], list[j]) < 0 })
	if distinct {
		var uniq []row.Datum
		for _, d := range list {
			if len(uniq) == 0 || !row.Equal(uniq[len(uniq)-1], d) {
				uniq = append(uniq, d)
			}
		}
		list = uniq
	}
	if len(list) == 0 {
		return row.Null(), nil
	}
	if kind == aggJSONObjectAgg {
		obj := map[string]row.JSON{}
		var keys []string
		for _, d := range list {
			j := d.JSON()
			for i, k := range j.Keys {
				if _, seen := obj[k]; !seen {
					keys = append(keys, k)
				}
				obj[k] = j.Vals[i]
			}
		}
		vs := make([]row.JSON, len(keys))
		for i, k := range keys {
			vs[i] = obj[k]
		}
		return row.JSONB(row.JSONObjectOf(keys, vs)), nil
	}
	out := row.JSON{Kind: row.JSONArray}
	for _, d := range list {
		j := row.JSON{Kind: row.JSONNull}
		if !d.IsNull() {
			j = d.JSON()
		}
		out.Elems = append(out.Elems, j)
	}
	return row.JSONB(out), nil
}
