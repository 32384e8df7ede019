package planner

import (
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// MaxParams bounds $n parameter numbers, as the wire protocol's 16-bit
// parameter count does.
const MaxParams = 65535

// paramRef lowers $n. With values bound it becomes a literal; otherwise
// its type is inferred from context (see settle) and it stands as a typed
// NULL, which is enough to type-check and describe the statement.
func (p *Planner) paramRef(n int) (typed, error) {
	if n < 1 || n > MaxParams {
		return typed{}, sqlerr.Errorf(sqlerr.UndefinedParameterRef, "there is no parameter $%d", n)
	}
	if p.ParamValues != nil && n > len(p.ParamValues) {
		return typed{}, sqlerr.Errorf(sqlerr.UndefinedParameterRef, "there is no parameter $%d", n)
	}
	if n <= len(p.ParamTypes) && p.ParamTypes[n-1] != row.TypeInvalid {
		return p.param(n, p.ParamTypes[n-1])
	}
	return typed{param: n, t: row.ColumnType{Type: row.TypeText, Nullable: true}}, nil
}

// param returns $n as type t, recording t as the parameter's type when it
// had none.
func (p *Planner) param(n int, t row.Type) (typed, error) {
	for len(p.ParamTypes) < n {
		p.ParamTypes = append(p.ParamTypes, row.TypeInvalid)
	}
	if p.ParamTypes[n-1] == row.TypeInvalid {
		p.ParamTypes[n-1] = t
	}
	t = p.ParamTypes[n-1]
	if p.ParamValues == nil {
		return typed{e: expr.TypedNull(t), t: row.ColumnType{Type: t, Nullable: true}}, nil
	}
	d, err := expr.CastDatum(p.ParamValues[n-1], t)
	if err != nil {
		return typed{}, err
	}
	if d.IsNull() {
		return typed{e: expr.TypedNull(t), t: row.ColumnType{Type: t, Nullable: true}}, nil
	}
	return typed{e: expr.Literal(d), t: row.ColumnType{Type: t}}, nil
}

// ResolvedParamTypes returns the parameter types after planning, with
// parameters whose type nothing determined as text.
func (p *Planner) ResolvedParamTypes() []row.Type {
	out := make([]row.Type, len(p.ParamTypes))
	for i, t := range p.ParamTypes {
		if t == row.TypeInvalid {
			t = row.TypeText
		}
		out[i] = t
	}
	return out
}
