package expr

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Op is the kind of an expression node.
type Op uint8

// The node kinds. Calls of ordinary functions are OpCall; the others have
// evaluation rules that are not "evaluate every argument, then apply":
// they short-circuit, or give non-NULL results from NULL inputs.
const (
	OpInvalid  Op = iota
	OpColumn      // Index: a column of the input
	OpLiteral     // Value, Typ: a constant (Typ types a NULL)
	OpCall        // Func applied to Args
	OpAnd         // Args, SQL three-valued AND
	OpOr          // Args, SQL three-valued OR
	OpIf          // Args = [cond, then, else]: CASE WHEN cond THEN then ELSE else END
	OpCoalesce    // Args: the first non-NULL argument
	OpIn          // Args = [x, list...]: x IN (list...)
	OpCast        // Args = [x], Typ: CAST(x AS Typ)
)

var opNames = [...]string{
	OpInvalid:  "invalid",
	OpColumn:   "column",
	OpLiteral:  "literal",
	OpCall:     "call",
	OpAnd:      "and",
	OpOr:       "or",
	OpIf:       "if",
	OpCoalesce: "coalesce",
	OpIn:       "in",
	OpCast:     "cast",
}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// MarshalJSON encodes the op as its name.
func (o Op) MarshalJSON() ([]byte, error) {
	if o == OpInvalid || int(o) >= len(opNames) {
		return nil, fmt.Errorf("marshal expression op: invalid op %d", uint8(o))
	}
	return json.Marshal(o.String())
}

// UnmarshalJSON decodes an op name.
func (o *Op) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("unmarshal expression op: %w", err)
	}
	for i, n := range opNames {
		if Op(i) != OpInvalid && n == s {
			*o = Op(i)
			return nil
		}
	}
	return fmt.Errorf("unmarshal expression op: unknown op %q", s)
}

// Expr is a scalar expression over the columns of one input row. It is a
// plain value (a tagged union in one struct) so that it serialises to JSON
// without wrappers: {"op":"call","func":"add","args":[{"op":"column",
// "index":0},{"op":"literal","value":{"int64":1},"type":"int64"}]}.
// Build it with the constructors below; decoded expressions are checked
// by Type or Validate, and evaluating a malformed one returns an error,
// never panics.
type Expr struct {
	Op    Op        `json:"op"`
	Index int       `json:"index,omitzero"` // OpColumn
	Value row.Datum `json:"value,omitzero"` // OpLiteral (absent: NULL)
	Typ   row.Type  `json:"type,omitzero"`  // OpLiteral, OpCast: the literal's or the target type
	Func  Func      `json:"func,omitzero"`  // OpCall
	Args  []Expr    `json:"args,omitempty"`
	// compiled, set only on MFP.Prepare's copy, is a regular expression
	// call's constant pattern, compiled once (regexcache.go).
	compiled *compiledRegex
}

// Column references input column i.
func Column(i int) Expr { return Expr{Op: OpColumn, Index: i} }

// Literal returns the constant d, typed by d (use TypedNull for a typed
// NULL).
func Literal(d row.Datum) Expr { return Expr{Op: OpLiteral, Value: d, Typ: d.Type()} }

// TypedNull returns a NULL constant of type t.
func TypedNull(t row.Type) Expr { return Expr{Op: OpLiteral, Typ: t} }

// Call applies f to args. Whether the arity fits f is checked by Type and
// Validate (and evaluation reports it as an error).
func Call(f Func, args ...Expr) Expr { return Expr{Op: OpCall, Func: f, Args: args} }

// And is the SQL conjunction of args (true when empty).
func And(args ...Expr) Expr { return Expr{Op: OpAnd, Args: args} }

// Or is the SQL disjunction of args (false when empty).
func Or(args ...Expr) Expr { return Expr{Op: OpOr, Args: args} }

// Not is SQL NOT.
func Not(x Expr) Expr { return Call(FuncNot, x) }

// If is CASE WHEN cond THEN then ELSE els END. A NULL cond takes els.
func If(cond, then, els Expr) Expr { return Expr{Op: OpIf, Args: []Expr{cond, then, els}} }

// Case folds a searched CASE into nested Ifs: whens[i] pairs a condition
// with its result; els may be TypedNull for an absent ELSE.
func Case(whens [][2]Expr, els Expr) Expr {
	out := els
	for i := len(whens) - 1; i >= 0; i-- {
		out = If(whens[i][0], whens[i][1], out)
	}
	return out
}

// Coalesce returns its first non-NULL argument, evaluating no further.
func Coalesce(args ...Expr) Expr { return Expr{Op: OpCoalesce, Args: args} }

// In is x IN (list...): true if some element equals x, else NULL if x or
// some element is NULL, else false.
func In(x Expr, list ...Expr) Expr {
	return Expr{Op: OpIn, Args: append([]Expr{x}, list...)}
}

// Between is x BETWEEN lo AND hi, that is lo <= x AND x <= hi.
func Between(x, lo, hi Expr) Expr { return And(Call(FuncGte, x, lo), Call(FuncLte, x, hi)) }

// Cast converts x to type to.
func Cast(x Expr, to row.Type) Expr { return Expr{Op: OpCast, Typ: to, Args: []Expr{x}} }

// IsNull is x IS NULL.
func IsNull(x Expr) Expr { return Call(FuncIsNull, x) }

// NullIf is NULLIF(a, b).
func NullIf(a, b Expr) Expr { return Call(FuncNullIf, a, b) }

// Binary shorthands.
func Add(a, b Expr) Expr { return Call(FuncAdd, a, b) }
func Sub(a, b Expr) Expr { return Call(FuncSub, a, b) }
func Mul(a, b Expr) Expr { return Call(FuncMul, a, b) }
func Div(a, b Expr) Expr { return Call(FuncDiv, a, b) }
func Mod(a, b Expr) Expr { return Call(FuncMod, a, b) }
func Eq(a, b Expr) Expr  { return Call(FuncEq, a, b) }
func Neq(a, b Expr) Expr { return Call(FuncNeq, a, b) }
func Lt(a, b Expr) Expr  { return Call(FuncLt, a, b) }
func Gt(a, b Expr) Expr  { return Call(FuncGt, a, b) }
func Gte(a, b Expr) Expr { return Call(FuncGte, a, b) }

// Like is a LIKE pattern (with % and _, backslash escapes).
func Like(s, pattern Expr) Expr { return Call(FuncLike, s, pattern) }

// Columns returns the distinct input columns e references, in ascending
// order.
func (e Expr) Columns() []int {
	seen := map[int]bool{}
	var out []int
	e.visit(func(n *Expr) {
		if n.Op == OpColumn && !seen[n.Index] {
			seen[n.Index] = true
			out = append(out, n.Index)
		}
	})
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Support returns one more than the largest column e references (0 if
// none): the number of input columns e needs.
func (e Expr) Support() int {
	n := 0
	e.visit(func(x *Expr) {
		if x.Op == OpColumn && x.Index+1 > n {
			n = x.Index + 1
		}
	})
	return n
}

func (e *Expr) visit(f func(*Expr)) {
	f(e)
	for i := range e.Args {
		e.Args[i].visit(f)
	}
}

// Permute returns a copy of e with every column reference c replaced by
// mapping[c]; references beyond mapping are left unchanged (Validate or
// Type reports them).
func (e Expr) Permute(mapping []int) Expr {
	return e.Substitute(func(c int) (Expr, bool) {
		if c >= 0 && c < len(mapping) {
			return Column(mapping[c]), true
		}
		return Expr{}, false
	})
}

// Substitute returns a copy of e where each column reference c for which
// f returns (x, true) is replaced by x. It is how a planner composes an
// expression with the expressions that produce its input columns.
func (e Expr) Substitute(f func(col int) (Expr, bool)) Expr {
	if e.Op == OpColumn {
		if x, ok := f(e.Index); ok {
			return x
		}
		return e
	}
	if len(e.Args) > 0 {
		args := make([]Expr, len(e.Args))
		for i := range e.Args {
			args[i] = e.Args[i].Substitute(f)
		}
		e.Args = args
	}
	return e
}

// Equal reports whether e and f are the same tree.
func (e Expr) Equal(f Expr) bool { return e.equal(&f) }

func (e *Expr) equal(f *Expr) bool {
	if e.Op != f.Op || e.Index != f.Index || e.Typ != f.Typ || e.Func != f.Func ||
		e.Value != f.Value || len(e.Args) != len(f.Args) {
		return false
	}
	for i := range e.Args {
		if !e.Args[i].equal(&f.Args[i]) {
			return false
		}
	}
	return true
}

// IsLiteral reports whether e is a constant, and returns it.
func (e Expr) IsLiteral() (row.Datum, bool) {
	return e.Value, e.Op == OpLiteral
}

// String renders e in a SQL-like syntax with columns as #i, for EXPLAIN
// and error messages.
func (e Expr) String() string {
	var sb strings.Builder
	e.write(&sb)
	return sb.String()
}

var infix = map[Func]string{
	FuncAdd: "+", FuncSub: "-", FuncMul: "*", FuncDiv: "/", FuncMod: "%",
	FuncEq: "=", FuncNeq: "<>", FuncLt: "<", FuncLte: "<=", FuncGt: ">", FuncGte: ">=",
	FuncConcatOp: "||", FuncLike: "LIKE", FuncILike: "ILIKE",
}

func (e *Expr) write(sb *strings.Builder) {
	list := func(args []Expr, sep string) {
		for i := range args {
			if i > 0 {
				sb.WriteString(sep)
			}
			args[i].write(sb)
		}
	}
	switch e.Op {
	case OpColumn:
		sb.WriteString("#" + strconv.Itoa(e.Index))
	case OpLiteral:
		if e.Value.IsNull() && e.Typ != row.TypeNull {
			sb.WriteString("NULL::" + e.Typ.String())
		} else {
			sb.WriteString(e.Value.SQLLiteral())
		}
	case OpCall:
		if op, ok := infix[e.Func]; ok && len(e.Args) == 2 {
			sb.WriteByte('(')
			list(e.Args, " "+op+" ")
			sb.WriteByte(')')
			return
		}
		switch {
		case e.Func == FuncNot && len(e.Args) == 1:
			sb.WriteString("NOT ")
			e.Args[0].write(sb)
			return
		case e.Func == FuncIsNull && len(e.Args) == 1:
			sb.WriteByte('(')
			e.Args[0].write(sb)
			sb.WriteString(" IS NULL)")
			return
		}
		sb.WriteString(e.Func.String() + "(")
		list(e.Args, ", ")
		sb.WriteByte(')')
	case OpAnd, OpOr:
		if len(e.Args) == 0 {
			sb.WriteString(strconv.FormatBool(e.Op == OpAnd))
			return
		}
		sb.WriteByte('(')
		list(e.Args, " "+strings.ToUpper(e.Op.String())+" ")
		sb.WriteByte(')')
	case OpIf:
		if len(e.Args) != 3 {
			break
		}
		sb.WriteString("CASE WHEN ")
		e.Args[0].write(sb)
		sb.WriteString(" THEN ")
		e.Args[1].write(sb)
		sb.WriteString(" ELSE ")
		e.Args[2].write(sb)
		sb.WriteString(" END")
		return
	case OpCoalesce:
		sb.WriteString("coalesce(")
		list(e.Args, ", ")
		sb.WriteByte(')')
		return
	case OpIn:
		if len(e.Args) == 0 {
			break
		}
		sb.WriteByte('(')
		e.Args[0].write(sb)
		sb.WriteString(" IN (")
		list(e.Args[1:], ", ")
		sb.WriteString("))")
		return
	case OpCast:
		if len(e.Args) != 1 {
			break
		}
		sb.WriteString("CAST(")
		e.Args[0].write(sb)
		sb.WriteString(" AS " + e.Typ.String() + ")")
		return
	}
	if e.Op != OpColumn && e.Op != OpLiteral && e.Op != OpCall && e.Op != OpAnd && e.Op != OpOr {
		sb.WriteString("<malformed " + e.Op.String() + ">")
	}
}

// exprWire is Expr's JSON form. It differs from the default encoding only
// in always writing a column's index, so that {"op":"column","index":0}
// reads as what it is; decoding uses Expr's own field tags.
type exprWire struct {
	Op    Op        `json:"op"`
	Index *int      `json:"index,omitempty"`
	Value row.Datum `json:"value,omitzero"`
	Typ   row.Type  `json:"type,omitzero"`
	Func  Func      `json:"func,omitzero"`
	Args  []Expr    `json:"args,omitempty"`
}

// MarshalJSON encodes e as a tagged object; see Expr.
func (e Expr) MarshalJSON() ([]byte, error) {
	w := exprWire{Op: e.Op, Value: e.Value, Typ: e.Typ, Func: e.Func, Args: e.Args}
	if e.Op == OpColumn || e.Index != 0 {
		i := e.Index
		w.Index = &i
	}
	return json.Marshal(w)
}
