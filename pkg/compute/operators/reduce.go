package operators

import (
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// ReduceGroups is the stateful unary operator shared by Reduce, Distinct,
// Threshold and TopK. Its input is an arrangement whose batches are split
// at the interval start f0: old holds every batch with upper <= f0 (times
// possibly advanced by logical compaction, never to or past the times in
// fresh), fresh the batches covering [f0, f1). For every key with an update
// in fresh, it accumulates the key's old state, then for each distinct
// fresh time in ascending order applies that time's updates, recomputes the
// group's output with logic, and emits the change of output rows (emit) and
// of errors (emitErr) at that time. Keys without fresh updates emit
// nothing: their output cannot have changed.
//
// The previous output is recomputed from the old input state rather than
// read from an output arrangement, so the operator needs no state of its
// own beyond the input trace; the price is that a touched key's whole old
// history is read once per call.
func ReduceGroups(old, fresh []*batch.Batch, logic GroupLogic, emit Emit, emitErr EmitErr) {
	ReduceGroupsBounded(old, fresh, logic, emit, emitErr, 0, &Progress{})
}

// AggregateLogic returns the group logic of a SQL GROUP BY: the input is
// arranged by the group key, each value a row of the aggregates' argument
// columns; the output of a non-empty group is one row, key ++ (one datum per
// aggregate). A group with no rows has no output row: a global aggregate
// (no GROUP BY) over an empty input must be given its row of defaults (0
// for counts, NULL otherwise) by the SQL layer, typically as a union with a
// constant minus the keys present. A negative input multiplicity is an
// error (XX000), as is an argument of a type the function cannot take.
func AggregateLogic(aggs []Aggregate) GroupLogic {
	return AggregateLogicShowingKey(aggs, -1)
}

// AggregateLogicShowingKey is AggregateLogic over values that may carry
// the group key as written (KeySpec.DisplayKey): a value row longer than
// width columns ends with the key's datums at their display scale, and the
// output row shows the greatest such key (ShownKey) instead of the
// arranged key, whose numerics are at their minimal scale. width < 0:
// values never carry the key.
func AggregateLogicShowingKey(aggs []Aggregate, width int) GroupLogic {
	var (
		datums [][]row.Datum
		args   []argCount
		out    []row.Datum
	)
	return func(key []byte, input []ValDiff) ([]ValDiff, error) {
		var rows int64
		// Inner slices are reused across calls; UnpackInto aliases the
		// immutable input rows, so decoding allocates nothing steady-state.
		for len(datums) < len(input) {
			datums = append(datums, nil)
		}
		for i, v := range input {
			if v.Diff < 0 {
				return nil, negativeMultiplicity("reduce")
			}
			rows += v.Diff
			ds, err := row.Row(v.Val).UnpackInto(datums[i])
			if err != nil {
				return nil, Error{Code: CodeInternal, Message: "reduce: " + err.Error()}
			}
			datums[i] = ds
		}
		out = out[:0]
		for _, a := range aggs {
			if a.Func == AggStringAgg || a.Func == AggConcat {
				ordered := stringAgg
				if a.Func == AggConcat {
					ordered = concatAgg
				}
				d, err := ordered(a, datums[:len(input)], input)
				if err != nil {
					return nil, err
				}
				out = append(out, d)
				continue
			}
			args = args[:0]
			if a.Func != AggCountStar {
				for i, ds := range datums[:len(input)] {
					if a.Column < 0 || a.Column >= len(ds) {
						return nil, Error{Code: CodeInternal, Message: "reduce: " + a.String() + " reads a missing column"}
					}
					args = append(args, argCount{d: ds[a.Column], n: input[i].Diff})
				}
				if needsSorted(a, args) {
					slices.SortFunc(args, func(x, y argCount) int { return row.Compare(x.d, y.d) })
				}
			}
			d, err := evalAggregate(a, args, rows)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		shown := key
		if width >= 0 {
			shown = shownKeyInValues(key, input, datums[:len(input)], width)
		}
		r := row.AppendDatums(append(make([]byte, 0, len(shown)+16*len(out)), shown...), out...)
		return []ValDiff{{Val: r, Diff: 1}}, nil
	}
}

// shownKeyInValues returns the greatest key as written among the values
// that carry one (their columns from width on), or key when none does.
func shownKeyInValues(key []byte, input []ValDiff, datums [][]row.Datum, width int) []byte {
	var best []row.Datum
	for i, ds := range datums {
		if len(ds) <= width || input[i].Diff <= 0 {
			continue
		}
		if best == nil || row.CompareDatums(ds[width:], best) > 0 {
			best = ds[width:]
		}
	}
	if best == nil {
		return key
	}
	return row.Pack(best...)
}

// DistinctLogic returns the group logic of DISTINCT: the input is arranged
// by the whole row with empty values, or the row as written when the key
// dropped a numeric scale (KeySpec.DisplayKey), and a row with positive
// multiplicity is output once, as ShownKey shows it. A negative
// multiplicity is an error (XX000).
func DistinctLogic() GroupLogic {
	return func(key []byte, input []ValDiff) ([]ValDiff, error) {
		n := totalDiff(input)
		switch {
		case n < 0:
			return nil, negativeMultiplicity("distinct")
		case n == 0:
			return nil, nil
		}
		return []ValDiff{{Val: ShownKey(key, input), Diff: 1}}, nil
	}
}

// ThresholdLogic returns the group logic of Threshold: the input is arranged
// by the whole row, and a row is output with its multiplicity when that is
// positive and not at all otherwise (it turns a difference of collections
// into EXCEPT ALL semantics), as ShownKey shows it.
func ThresholdLogic() GroupLogic {
	return func(key []byte, input []ValDiff) ([]ValDiff, error) {
		if n := totalDiff(input); n > 0 {
			return []ValDiff{{Val: ShownKey(key, input), Diff: n}}, nil
		}
		return nil, nil
	}
}

// ShownKey returns the row a group arranged by the whole row shows: its
// key holds numerics at their minimal scale, so that 1.5 and 1.50 are one
// group; a value is empty (the row as written is the key) or the row as
// written, and the group shows the greatest of those with a positive
// multiplicity. Rows in one group differ only in numeric scales, so this
// is the largest scale present (in the first column where rows differ): a
// deterministic function of the group's contents, which a maintained view
// needs (PostgreSQL shows whichever row it met first).
func ShownKey(key []byte, input []ValDiff) []byte {
	for i := len(input) - 1; i >= 0; i-- {
		if input[i].Diff > 0 {
			if len(input[i].Val) == 0 {
				return key
			}
			return input[i].Val
		}
	}
	return key
}

func totalDiff(input []ValDiff) int64 {
	var n int64
	for _, v := range input {
		n += v.Diff
	}
	return n
}
