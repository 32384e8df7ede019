package operators

import "github.com/tandemdb/tandem/pkg/compute/row"

// jsonAggregate computes jsonb_agg (AggJSONAgg: an array of the
// arguments, NULL arguments as json null) and jsonb_object_agg
// (AggJSONObjectAgg: the arguments are one-pair objects, merged, a later
// key replacing an earlier one). args must be sorted in SQL order: the
// elements come in value order (PostgreSQL's come in input order, which
// SQL leaves unspecified without ORDER BY, and which a maintained
// collection does not have). The result of a group without arguments is
// NULL.
func jsonAggregate(a Aggregate, args []argCount, mult func(int) int64) (row.Datum, error) {
	var elems []row.JSON
	var keys []string
	var vals []row.JSON
	any := false
	for i, v := range args {
		n := mult(i)
		if n <= 0 {
			continue
		}
		any = true
		j := row.JSON{Kind: row.JSONNull}
		switch {
		case v.d.IsNull():
		case v.d.Type() == row.TypeJSONB:
			j = v.d.JSON()
		default:
			return row.Null(), Error{Code: CodeInternal, Message: a.Func.String() + ": argument of type " + v.d.Type().String()}
		}
		if a.Func == AggJSONObjectAgg {
			if j.Kind != row.JSONObject {
				return row.Null(), Error{Code: CodeInternal, Message: "jsonb_object_agg: argument is not an object"}
			}
			keys, vals = append(keys, j.Keys...), append(vals, j.Vals...)
			continue
		}
		for range n {
			elems = append(elems, j)
		}
	}
	if !any {
		return row.Null(), nil
	}
	if a.Func == AggJSONObjectAgg {
		return row.JSONB(row.JSONObjectOf(keys, vals)), nil
	}
	return row.JSONB(row.JSON{Kind: row.JSONArray, Elems: elems}), nil
}
