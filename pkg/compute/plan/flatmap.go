package plan

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// FlatMap applies a table function to every input row: each output row
// is the input row followed by one of the rows the call produces (and,
// with Ordinality, its 1-based position among them as an int64), with
// the input row's multiplicity. It is stateless, so a retracted input row
// retracts exactly the rows it produced: a table function over a changing
// input is maintained for free. An evaluation error becomes an error row
// with the input's multiplicity, retracted with it too.
type FlatMap struct {
	Input      *Plan          `json:"input"`
	Call       expr.TableCall `json:"call"`
	Ordinality bool           `json:"ordinality,omitempty"`
}

// NewFlatMap returns a FlatMap node.
func NewFlatMap(input Plan, call expr.TableCall, ordinality bool) Plan {
	return Plan{FlatMap: &FlatMap{Input: &input, Call: call, Ordinality: ordinality}}
}

// OutputTypes is the columns the call adds to each input row.
func (f *FlatMap) OutputTypes(in []row.ColumnType) ([]row.ColumnType, error) {
	out, err := f.Call.OutputTypes(in)
	if err != nil {
		return nil, err
	}
	if f.Ordinality {
		out = append(out, row.ColumnType{Type: row.TypeInt64})
	}
	return out, nil
}

func (f *FlatMap) desc(env Env) (row.RelationDesc, error) {
	in, err := inputDesc("flat_map", f.Input, env)
	if err != nil {
		return row.RelationDesc{}, err
	}
	types, err := f.OutputTypes(in.Types)
	if err != nil {
		return row.RelationDesc{}, fmt.Errorf("flat_map: %s: %w", f.Call, err)
	}
	names := make([]string, len(types))
	for i := range names {
		names[i] = string(f.Call.Func)
	}
	if f.Ordinality {
		names[len(names)-1] = "ordinality"
	}
	return in.Concat(row.RelationDesc{Names: names, Types: types}), nil
}
