package expr

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// MFP is a fused map, filter and project over rows of a fixed input
// arity n:
//
//   - Expressions are appended as new columns n, n+1, ...; expression i
//     may reference input columns and the columns of expressions before it;
//   - Predicates may reference any of those columns; a row is kept only
//     if every predicate is true (NULL and false both drop it);
//   - Projection lists the output columns (it may reorder, repeat or drop
//     columns; empty means a zero-column output).
//
// Evaluation order is part of the contract, because errors are data:
// predicates run in the order given, and an expression is evaluated only
// once a predicate needs it or once the row has passed every predicate.
// So `WHERE x <> 0` listed before a predicate on `1 / x` keeps the
// division from failing on rows the first predicate drops, and a dropped
// row never reports an error from a projection-only expression.
type MFP struct {
	Expressions []Expr `json:"expressions"`
	Predicates  []Expr `json:"predicates"`
	Projection  []int  `json:"projection"`
}

// Identity returns the MFP that passes rows of the given arity unchanged.
func Identity(arity int) MFP {
	p := make([]int, arity)
	for i := range p {
		p[i] = i
	}
	return MFP{Projection: p}
}

// IsIdentity reports whether m passes rows of the given arity unchanged.
func (m *MFP) IsIdentity(arity int) bool {
	if len(m.Expressions) != 0 || len(m.Predicates) != 0 || len(m.Projection) != arity {
		return false
	}
	for i, c := range m.Projection {
		if c != i {
			return false
		}
	}
	return true
}

// Filter returns m with predicates appended (they see m's columns before
// projection).
func (m MFP) Filter(preds ...Expr) MFP {
	m.Predicates = append(append([]Expr(nil), m.Predicates...), preds...)
	return m
}

// Map returns m with expressions appended as new columns, which the
// projection does not include until Project names them.
func (m MFP) Map(exprs ...Expr) MFP {
	m.Expressions = append(append([]Expr(nil), m.Expressions...), exprs...)
	return m
}

// Project returns m with its projection replaced by cols, which index
// the columns before projection (input then expressions).
func (m MFP) Project(cols ...int) MFP {
	m.Projection = append([]int(nil), cols...)
	return m
}

// OutputTypes type-checks m over an input of the given column types and
// returns the types of its output columns. It reports every reference to
// a column that does not exist yet where it is made.
func (m *MFP) OutputTypes(input []row.ColumnType) ([]row.ColumnType, error) {
	cols := append([]row.ColumnType(nil), input...)
	for i := range m.Expressions {
		t, err := m.Expressions[i].typ(cols)
		if err != nil {
			return nil, fmt.Errorf("mfp expression %d (%s): %w", i, m.Expressions[i], err)
		}
		cols = append(cols, t)
	}
	for i := range m.Predicates {
		t, err := m.Predicates[i].typ(cols)
		if err != nil {
			return nil, fmt.Errorf("mfp predicate %d (%s): %w", i, m.Predicates[i], err)
		}
		if t.Type != row.TypeBool && t.Type != row.TypeNull {
			return nil, fmt.Errorf("mfp predicate %d (%s): has type %s, want bool", i, m.Predicates[i], t.Type)
		}
	}
	out := make([]row.ColumnType, len(m.Projection))
	for i, c := range m.Projection {
		if c < 0 || c >= len(cols) {
			return nil, fmt.Errorf("mfp projection %d: column #%d out of range (%d columns)", i, c, len(cols))
		}
		out[i] = cols[c]
	}
	return out, nil
}

// Scratch holds the buffers an MFP evaluation reuses across rows. The
// zero value is ready; a Scratch must not be shared between goroutines.
type Scratch struct {
	cols []row.Datum
	out  []row.Datum
}

// Evaluate applies m to one input row. It returns the output columns
// (valid until the next call with the same Scratch), whether the row is
// kept, and the first evaluation error. A nil scratch allocates.
func (m *MFP) Evaluate(input []row.Datum, s *Scratch) ([]row.Datum, bool, error) {
	return m.evaluate(input, s, nil)
}

// Prepared is an MFP checked against its input arity, with the
// per-predicate schedule computed once; use it in per-row loops.
type Prepared struct {
	mfp   MFP
	arity int
	needs []int // needs[i]: expressions that must exist before predicate i
}

// Prepare checks that every column reference of m is in range for an
// input of the given arity and precomputes the evaluation schedule.
func (m *MFP) Prepare(inputArity int) (*Prepared, error) {
	if inputArity < 0 {
		return nil, fmt.Errorf("prepare mfp: negative arity %d", inputArity)
	}
	for i := range m.Expressions {
		if s := m.Expressions[i].Support(); s > inputArity+i {
			return nil, fmt.Errorf("prepare mfp: expression %d (%s) references column #%d, but only %d exist before it",
				i, m.Expressions[i], s-1, inputArity+i)
		}
	}
	total := inputArity + len(m.Expressions)
	p := &Prepared{mfp: *m, arity: inputArity, needs: make([]int, len(m.Predicates))}
	p.mfp.Expressions = prepareAll(m.Expressions)
	p.mfp.Predicates = prepareAll(m.Predicates)
	for i := range m.Predicates {
		s := m.Predicates[i].Support()
		if s > total {
			return nil, fmt.Errorf("prepare mfp: predicate %d (%s) references column #%d of %d", i, m.Predicates[i], s-1, total)
		}
		p.needs[i] = max(0, s-inputArity)
	}
	for i, c := range m.Projection {
		if c < 0 || c >= total {
			return nil, fmt.Errorf("prepare mfp: projection %d references column #%d of %d", i, c, total)
		}
	}
	return p, nil
}

// Evaluate is MFP.Evaluate for a prepared MFP.
func (p *Prepared) Evaluate(input []row.Datum, s *Scratch) ([]row.Datum, bool, error) {
	if len(input) != p.arity {
		return nil, false, evalErr(CodeInternal, "mfp prepared for %d columns got a row of %d", p.arity, len(input))
	}
	return p.mfp.evaluate(input, s, p.needs)
}

// MFP returns the prepared MFP.
func (p *Prepared) MFP() *MFP { return &p.mfp }

func (m *MFP) evaluate(input []row.Datum, s *Scratch, needs []int) ([]row.Datum, bool, error) {
	if s == nil {
		s = &Scratch{}
	}
	cols := append(s.cols[:0], input...)
	defer func() { s.cols = cols[:0] }()
	done := 0 // expressions evaluated so far
	evalUpTo := func(k int) error {
		for ; done < k && done < len(m.Expressions); done++ {
			v, err := m.Expressions[done].eval(cols)
			if err != nil {
				return err
			}
			cols = append(cols, v)
		}
		return nil
	}
	for i := range m.Predicates {
		var need int
		if needs != nil {
			need = needs[i]
		} else {
			need = m.Predicates[i].Support() - len(input)
		}
		if err := evalUpTo(need); err != nil {
			return nil, false, err
		}
		v, err := m.Predicates[i].eval(cols)
		if err != nil {
			return nil, false, err
		}
		if !v.Bool() {
			return nil, false, nil
		}
	}
	if err := evalUpTo(len(m.Expressions)); err != nil {
		return nil, false, err
	}
	out := s.out[:0]
	for _, c := range m.Projection {
		if c < 0 || c >= len(cols) {
			return nil, false, evalErr(CodeInternal, "mfp projection column #%d out of range (%d columns)", c, len(cols))
		}
		out = append(out, cols[c])
	}
	s.out = out
	return out, true, nil
}

// prepareAll compiles the constant patterns of es (regexcache.go) into a
// new slice; es is not modified.
func prepareAll(es []Expr) []Expr {
	if es == nil {
		return nil
	}
	out := make([]Expr, len(es))
	for i := range es {
		out[i] = prepareRegexes(es[i])
	}
	return out
}
