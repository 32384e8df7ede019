package plan

import (
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// ErrUnknownID is wrapped by the error for a Get of an id the
// environment does not know.
var ErrUnknownID = errors.New("unknown id")

// Env resolves the description of a collection a plan reads.
type Env func(id GlobalID) (row.RelationDesc, bool)

// MapEnv returns an Env over a map.
func MapEnv(m map[GlobalID]row.RelationDesc) Env {
	return func(id GlobalID) (row.RelationDesc, bool) {
		d, ok := m[id]
		return d, ok
	}
}

// Desc infers the output description of p given the descriptions of the
// collections it reads, checking the whole tree on the way. Errors name
// the path to the failing node, e.g. "join.left: mfp: ...".
func (p Plan) Desc(env Env) (row.RelationDesc, error) {
	switch n := p.Node().(type) {
	case *Get:
		d, ok := env(n.ID)
		if !ok {
			return row.RelationDesc{}, fmt.Errorf("get: %w %s", ErrUnknownID, n.ID)
		}
		return d, nil
	case *Constant:
		return n.desc()
	case *Mfp:
		in, err := inputDesc("mfp", n.Input, env)
		if err != nil {
			return row.RelationDesc{}, err
		}
		types, err := n.MFP.OutputTypes(in.Types)
		if err != nil {
			return row.RelationDesc{}, fmt.Errorf("mfp: %w", err)
		}
		names := make([]string, len(n.MFP.Projection))
		for i, c := range n.MFP.Projection {
			if c < len(in.Names) {
				names[i] = in.Names[c]
			}
		}
		return row.RelationDesc{Names: names, Types: types}, nil
	case *Join:
		return n.desc(env)
	case *Reduce:
		return n.desc(env)
	case *Distinct:
		return inputDesc("distinct", n.Input, env)
	case *Threshold:
		return inputDesc("threshold", n.Input, env)
	case *Negate:
		return inputDesc("negate", n.Input, env)
	case *Union:
		return n.desc(env)
	case *TopK:
		return n.desc(env)
	case *Window:
		return n.desc(env)
	case *Recursive:
		return n.desc(env)
	case *Let:
		return n.desc(env)
	case *FlatMap:
		return n.desc(env)
	case *TemporalFilter:
		return n.desc(env)
	case *ArrangeBy:
		in, err := inputDesc("arrange_by", n.Input, env)
		if err != nil {
			return row.RelationDesc{}, err
		}
		if len(n.Keys) == 0 {
			return row.RelationDesc{}, errors.New("arrange_by: no keys")
		}
		for k, key := range n.Keys {
			if _, err := keyTypes(key, in); err != nil {
				return row.RelationDesc{}, fmt.Errorf("arrange_by: key %d: %w", k, err)
			}
		}
		return in, nil
	}
	return row.RelationDesc{}, errors.New(p.String())
}

func inputDesc(what string, in *Plan, env Env) (row.RelationDesc, error) {
	if in == nil {
		return row.RelationDesc{}, fmt.Errorf("%s: missing input", what)
	}
	d, err := in.Desc(env)
	if err != nil {
		return row.RelationDesc{}, fmt.Errorf("%s.%w", what, err)
	}
	return d, nil
}

// keyTypes types each key expression over desc.
func keyTypes(key []expr.Expr, desc row.RelationDesc) ([]row.ColumnType, error) {
	out := make([]row.ColumnType, len(key))
	for i := range key {
		t, err := key[i].Type(desc.Types)
		if err != nil {
			return nil, fmt.Errorf("key expression %d (%s): %w", i, key[i], err)
		}
		// An untyped NULL key (SELECT NULL ... read through a one-shot
		// index, GROUP BY NULL) is fine: every value encodes as NULL.
		out[i] = t
	}
	return out, nil
}

func (c *Constant) desc() (row.RelationDesc, error) {
	if err := c.Desc.Validate(); err != nil {
		return row.RelationDesc{}, fmt.Errorf("constant: %w", err)
	}
	for i, r := range c.Rows {
		if r.Diff == 0 {
			return row.RelationDesc{}, fmt.Errorf("constant: row %d has multiplicity 0", i)
		}
		if err := c.Desc.Check(r.Datums); err != nil {
			return row.RelationDesc{}, fmt.Errorf("constant: row %d: %w", i, err)
		}
	}
	return c.Desc, nil
}

func (j *Join) desc(env Env) (row.RelationDesc, error) {
	left, err := inputDesc("join.left", j.Left, env)
	if err != nil {
		return row.RelationDesc{}, err
	}
	right, err := inputDesc("join.right", j.Right, env)
	if err != nil {
		return row.RelationDesc{}, err
	}
	if len(j.LeftKey) != len(j.RightKey) {
		return row.RelationDesc{}, fmt.Errorf("join: left key has %d columns, right key has %d", len(j.LeftKey), len(j.RightKey))
	}
	lt, err := keyTypes(j.LeftKey, left)
	if err != nil {
		return row.RelationDesc{}, fmt.Errorf("join: left %w", err)
	}
	rt, err := keyTypes(j.RightKey, right)
	if err != nil {
		return row.RelationDesc{}, fmt.Errorf("join: right %w", err)
	}
	// Keys match by their encoded bytes, so the types must be identical:
	// int64 1 and float64 1 encode differently.
	for i := range lt {
		if lt[i].Type != rt[i].Type {
			return row.RelationDesc{}, fmt.Errorf("join: left key %d has type %s, right key %d has type %s", i, lt[i].Type, i, rt[i].Type)
		}
	}
	return left.Concat(right), nil
}

// AggregateType returns the output type of aggregate a over an input of
// the given description.
func (a *Aggregate) AggregateType(in row.RelationDesc) (row.ColumnType, error) {
	if a.Func == AggCountStar {
		if a.Expr.Op != expr.OpInvalid {
			return row.ColumnType{}, fmt.Errorf("count_star takes no expression, got %s", a.Expr)
		}
		if a.Distinct {
			return row.ColumnType{}, errors.New("count_star cannot be distinct")
		}
		return row.ColumnType{Type: row.TypeInt64}, nil
	}
	t, err := a.Expr.Type(in.Types)
	if err != nil {
		return row.ColumnType{}, fmt.Errorf("%s(%s): %w", a.Func, a.Expr, err)
	}
	switch a.Func {
	case AggCount:
		return row.ColumnType{Type: row.TypeInt64}, nil
	case AggSum:
		if !t.Type.IsNumeric() && t.Type != row.TypeInterval {
			return row.ColumnType{}, fmt.Errorf("sum(%s): argument has type %s, want int64, float64, numeric or interval", a.Expr, t.Type)
		}
		return row.ColumnType{Type: t.Type, Nullable: t.Nullable}, nil
	case AggAvg:
		if t.Type == row.TypeInterval {
			return row.ColumnType{Type: row.TypeInterval, Nullable: t.Nullable}, nil
		}
		if !t.Type.IsNumeric() || t.Type == row.TypeNumeric {
			return row.ColumnType{}, fmt.Errorf("avg(%s): argument has type %s, want int64, float64 or interval", a.Expr, t.Type)
		}
		return row.ColumnType{Type: row.TypeFloat64, Nullable: t.Nullable}, nil
	case AggMin, AggMax:
		if t.Type == row.TypeNull {
			return row.ColumnType{}, fmt.Errorf("%s(%s): argument has no type", a.Func, a.Expr)
		}
		return t, nil
	case AggStringAgg:
		return a.stringAggType(in, t)
	case AggSumSquares:
		if t.Type != row.TypeNumeric {
			return row.ColumnType{}, fmt.Errorf("%s(%s): argument has type %s, want numeric", a.Func, a.Expr, t.Type)
		}
		return row.ColumnType{Type: row.TypeNumeric, Nullable: true}, nil
	case AggVarPop, AggVarSamp, AggStddevPop, AggStddevSamp:
		if t.Type != row.TypeFloat64 {
			return row.ColumnType{}, fmt.Errorf("%s(%s): argument has type %s, want float64", a.Func, a.Expr, t.Type)
		}
		return row.ColumnType{Type: row.TypeFloat64, Nullable: true}, nil
	case AggConcat:
		return a.concatAggType(in, t)
	case AggJSONAgg, AggJSONObjectAgg:
		if t.Type != row.TypeJSONB && t.Type != row.TypeNull {
			return row.ColumnType{}, fmt.Errorf("%s(%s): argument has type %s, want jsonb", a.Func, a.Expr, t.Type)
		}
		return row.ColumnType{Type: row.TypeJSONB, Nullable: true}, nil
	}
	return row.ColumnType{}, fmt.Errorf("unknown aggregate function %q", a.Func)
}

// stringAggType checks string_agg's separator and order expressions.
func (a *Aggregate) stringAggType(in row.RelationDesc, t row.ColumnType) (row.ColumnType, error) {
	if t.Type != row.TypeText && t.Type != row.TypeBytes {
		return row.ColumnType{}, fmt.Errorf("string_agg(%s): argument has type %s, want text or bytes", a.Expr, t.Type)
	}
	if a.Sep == nil {
		return row.ColumnType{}, fmt.Errorf("string_agg(%s): no separator", a.Expr)
	}
	st, err := a.Sep.Type(in.Types)
	if err != nil {
		return row.ColumnType{}, fmt.Errorf("string_agg separator %s: %w", a.Sep, err)
	}
	if st.Type != t.Type && st.Type != row.TypeNull {
		return row.ColumnType{}, fmt.Errorf("string_agg(%s, %s): separator has type %s, want %s", a.Expr, a.Sep, st.Type, t.Type)
	}
	for _, o := range a.OrderBy {
		if _, err := o.Expr.Type(in.Types); err != nil {
			return row.ColumnType{}, fmt.Errorf("string_agg order %s: %w", o.Expr, err)
		}
	}
	return row.ColumnType{Type: t.Type, Nullable: true}, nil
}

// concatAggType checks concat_agg's argument (an array or jsonb) and
// order expressions.
func (a *Aggregate) concatAggType(in row.RelationDesc, t row.ColumnType) (row.ColumnType, error) {
	if !t.Type.IsArray() && t.Type != row.TypeJSONB {
		return row.ColumnType{}, fmt.Errorf("concat_agg(%s): argument has type %s, want an array or jsonb", a.Expr, t.Type)
	}
	for _, o := range a.OrderBy {
		if _, err := o.Expr.Type(in.Types); err != nil {
			return row.ColumnType{}, fmt.Errorf("concat_agg order %s: %w", o.Expr, err)
		}
	}
	return row.ColumnType{Type: t.Type, Nullable: true}, nil
}

func (r *Reduce) desc(env Env) (row.RelationDesc, error) {
	in, err := inputDesc("reduce", r.Input, env)
	if err != nil {
		return row.RelationDesc{}, err
	}
	kt, err := keyTypes(r.GroupKey, in)
	if err != nil {
		return row.RelationDesc{}, fmt.Errorf("reduce: group %w", err)
	}
	out := row.RelationDesc{}
	for i, t := range kt {
		name := ""
		if r.GroupKey[i].Op == expr.OpColumn {
			name = in.Name(r.GroupKey[i].Index)
		}
		out.Names = append(out.Names, name)
		out.Types = append(out.Types, t)
	}
	for i := range r.Aggregates {
		t, err := r.Aggregates[i].AggregateType(in)
		if err != nil {
			return row.RelationDesc{}, fmt.Errorf("reduce: aggregate %d: %w", i, err)
		}
		out.Names = append(out.Names, string(r.Aggregates[i].Func))
		out.Types = append(out.Types, t)
	}
	return out, nil
}

func (u *Union) desc(env Env) (row.RelationDesc, error) {
	if len(u.Inputs) == 0 {
		return row.RelationDesc{}, errors.New("union: no inputs")
	}
	var out row.RelationDesc
	for i := range u.Inputs {
		d, err := u.Inputs[i].Desc(env)
		if err != nil {
			return row.RelationDesc{}, fmt.Errorf("union.inputs[%d].%w", i, err)
		}
		if i == 0 {
			out = row.RelationDesc{Names: append([]string(nil), d.Names...), Types: append([]row.ColumnType(nil), d.Types...)}
			continue
		}
		if d.Arity() != out.Arity() {
			return row.RelationDesc{}, fmt.Errorf("union: input %d has %d columns, input 0 has %d", i, d.Arity(), out.Arity())
		}
		for c := range d.Types {
			if d.Types[c].Type != out.Types[c].Type {
				return row.RelationDesc{}, fmt.Errorf("union: input %d column %d has type %s, input 0 has type %s", i, c, d.Types[c].Type, out.Types[c].Type)
			}
			out.Types[c].Nullable = out.Types[c].Nullable || d.Types[c].Nullable
		}
	}
	return out, nil
}

func (t *TopK) desc(env Env) (row.RelationDesc, error) {
	in, err := inputDesc("top_k", t.Input, env)
	if err != nil {
		return row.RelationDesc{}, err
	}
	for i, c := range t.GroupKey {
		if c < 0 || c >= in.Arity() {
			return row.RelationDesc{}, fmt.Errorf("top_k: group key %d: column #%d out of range (%d columns)", i, c, in.Arity())
		}
	}
	for i, o := range t.Order {
		if o.Column < 0 || o.Column >= in.Arity() {
			return row.RelationDesc{}, fmt.Errorf("top_k: order %d: column #%d out of range (%d columns)", i, o.Column, in.Arity())
		}
	}
	if t.Limit != nil && *t.Limit < 0 {
		return row.RelationDesc{}, fmt.Errorf("top_k: negative limit %d", *t.Limit)
	}
	if t.Offset < 0 {
		return row.RelationDesc{}, fmt.Errorf("top_k: negative offset %d", t.Offset)
	}
	return in, nil
}
