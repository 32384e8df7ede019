package expr

import (
	"fmt"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Type infers the type of e over input columns of the given types, and
// checks e on the way: column references in range, argument counts,
// argument types. Errors are *EvalError values with SQLSTATE 42883
// (no such function for these argument types), 42804 (datatype
// mismatch) or XX000 (malformed tree), so the SQL layer can report them.
func (e Expr) Type(input []row.ColumnType) (row.ColumnType, error) { return e.typ(input) }

func (e *Expr) typ(input []row.ColumnType) (row.ColumnType, error) {
	switch e.Op {
	case OpColumn:
		if e.Index < 0 || e.Index >= len(input) {
			return row.ColumnType{}, evalErr(CodeInternal, "column #%d out of range: input has %d columns", e.Index, len(input))
		}
		return input[e.Index], nil
	case OpLiteral:
		if len(e.Args) != 0 {
			return row.ColumnType{}, evalErr(CodeInternal, "literal with arguments")
		}
		if !e.Typ.Valid() {
			return row.ColumnType{}, evalErr(CodeInternal, "literal %s has invalid type %s", e.Value.SQLLiteral(), e.Typ)
		}
		if !e.Value.IsNull() && e.Value.Type() != e.Typ {
			return row.ColumnType{}, evalErr(CodeInternal, "literal %s is not of its declared type %s", e.Value.SQLLiteral(), e.Typ)
		}
		return row.ColumnType{Type: e.Typ, Nullable: e.Value.IsNull()}, nil
	}
	args := make([]row.ColumnType, len(e.Args))
	for i := range e.Args {
		t, err := e.Args[i].typ(input)
		if err != nil {
			return row.ColumnType{}, err
		}
		args[i] = t
	}
	switch e.Op {
	case OpCall:
		def := e.Func.def()
		if def == nil {
			return row.ColumnType{}, evalErr(CodeInternal, "unknown function %s", e.Func)
		}
		if len(args) < def.minArgs || (def.maxArgs >= 0 && len(args) > def.maxArgs) {
			return row.ColumnType{}, evalErr(CodeUndefinedFunction, "function %s takes %s arguments, got %d", def.name, arityRange(def), len(args))
		}
		t, err := def.typeOf(args)
		if err != nil {
			return row.ColumnType{}, err
		}
		if def.strict {
			// A strict function is NULL on NULL input, and may be NULL
			// otherwise when its type says so (jsonb's ->).
			t.Nullable = t.Nullable || anyNullable(args)
		}
		return t, nil
	case OpAnd, OpOr:
		for i, a := range args {
			if a.Type != row.TypeBool && a.Type != row.TypeNull {
				return row.ColumnType{}, evalErr(CodeDatatypeMismatch, "argument %d of %s must be type bool, not type %s", i, strings.ToUpper(e.Op.String()), a.Type)
			}
		}
		return row.ColumnType{Type: row.TypeBool, Nullable: anyNullable(args)}, nil
	case OpIf:
		if len(args) != 3 {
			return row.ColumnType{}, evalErr(CodeInternal, "if takes 3 arguments, got %d", len(args))
		}
		if args[0].Type != row.TypeBool && args[0].Type != row.TypeNull {
			return row.ColumnType{}, evalErr(CodeDatatypeMismatch, "argument of CASE/WHEN must be type bool, not type %s", args[0].Type)
		}
		t, err := unify("CASE", args[1:])
		if err != nil {
			return row.ColumnType{}, err
		}
		return row.ColumnType{Type: t, Nullable: args[1].Nullable || args[2].Nullable}, nil
	case OpCoalesce:
		if len(args) == 0 {
			return row.ColumnType{}, evalErr(CodeInternal, "coalesce needs an argument")
		}
		t, err := unify("COALESCE", args)
		if err != nil {
			return row.ColumnType{}, err
		}
		nullable := true
		for _, a := range args {
			nullable = nullable && a.Nullable
		}
		return row.ColumnType{Type: t, Nullable: nullable}, nil
	case OpIn:
		if len(args) == 0 {
			return row.ColumnType{}, evalErr(CodeInternal, "in needs an argument")
		}
		for i, a := range args[1:] {
			if !comparable(args[0].Type, a.Type) {
				return row.ColumnType{}, evalErr(CodeUndefinedFunction, "IN list element %d of type %s cannot be compared with %s", i, a.Type, args[0].Type)
			}
		}
		return row.ColumnType{Type: row.TypeBool, Nullable: anyNullable(args)}, nil
	case OpCast:
		if len(args) != 1 {
			return row.ColumnType{}, evalErr(CodeInternal, "cast takes 1 argument, got %d", len(args))
		}
		if !CanCast(args[0].Type, e.Typ) {
			return row.ColumnType{}, evalErr(CodeUndefinedFunction, "cannot cast type %s to %s", args[0].Type, e.Typ)
		}
		return row.ColumnType{Type: e.Typ, Nullable: args[0].Nullable}, nil
	}
	return row.ColumnType{}, evalErr(CodeInternal, "invalid expression op %s", e.Op)
}

// Validate checks e against an input of the given types; it is Type
// without the result.
func (e Expr) Validate(input []row.ColumnType) error {
	_, err := e.typ(input)
	return err
}

func arityRange(d *funcDef) string {
	switch {
	case d.maxArgs < 0:
		return fmt.Sprintf("at least %d", d.minArgs)
	case d.minArgs == d.maxArgs:
		return fmt.Sprint(d.minArgs)
	default:
		return fmt.Sprintf("%d to %d", d.minArgs, d.maxArgs)
	}
}

func anyNullable(args []row.ColumnType) bool {
	for _, a := range args {
		if a.Nullable || a.Type == row.TypeNull {
			return true
		}
	}
	return false
}

// comparable reports whether values of types a and b may be compared.
func comparable(a, b row.Type) bool {
	if a == row.TypeJSON || b == row.TypeJSON || a == row.TypeJSONArray || b == row.TypeJSONArray {
		return false // json (and so json[]) has no equality or order (PostgreSQL: 42883)
	}
	return a == b || a == row.TypeNull || b == row.TypeNull || (a.IsNumeric() && b.IsNumeric())
}

// unify returns the common type of branches that must produce the same
// type (CASE, COALESCE, GREATEST): equal types, with untyped NULL fitting
// anything. Mixed int64/float64 is refused: the SQL layer inserts a cast,
// so a column never holds datums of two types.
func unify(what string, args []row.ColumnType) (row.Type, error) {
	t := row.TypeNull
	for _, a := range args {
		switch {
		case a.Type == row.TypeNull:
		case t == row.TypeNull:
			t = a.Type
		case a.Type != t:
			return row.TypeInvalid, evalErr(CodeDatatypeMismatch, "%s types %s and %s cannot be matched", what, t, a.Type)
		}
	}
	return t, nil
}

func typeSig(name string, args []row.ColumnType) *EvalError {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Type.String()
	}
	return evalErr(CodeUndefinedFunction, "function %s(%s) does not exist", name, strings.Join(names, ", "))
}

func is(a row.ColumnType, ts ...row.Type) bool {
	if a.Type == row.TypeNull {
		return true
	}
	for _, t := range ts {
		if a.Type == t {
			return true
		}
	}
	return false
}

func typeBool1(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeBool) {
		return row.ColumnType{}, typeSig("not", args)
	}
	return row.ColumnType{Type: row.TypeBool}, nil
}

func typeIsNull(args []row.ColumnType) (row.ColumnType, error) {
	return row.ColumnType{Type: row.TypeBool}, nil
}

func typeSingleValue(args []row.ColumnType) (row.ColumnType, error) {
	if args[0].Type != row.TypeInt64 {
		return row.ColumnType{}, typeSig("single_value", args)
	}
	return row.ColumnType{Type: args[1].Type, Nullable: true}, nil
}

func typeNullIf(args []row.ColumnType) (row.ColumnType, error) {
	if !comparable(args[0].Type, args[1].Type) {
		return row.ColumnType{}, typeSig("nullif", args)
	}
	return row.ColumnType{Type: args[0].Type, Nullable: true}, nil
}

func typeCompare(args []row.ColumnType) (row.ColumnType, error) {
	if !comparable(args[0].Type, args[1].Type) {
		return row.ColumnType{}, evalErr(CodeUndefinedFunction, "operator does not exist: %s = %s", args[0].Type, args[1].Type)
	}
	return row.ColumnType{Type: row.TypeBool}, nil
}

func typeNumeric1(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeInt64, row.TypeFloat64, row.TypeNumeric) {
		return row.ColumnType{}, typeSig("numeric function", args)
	}
	return row.ColumnType{Type: args[0].Type}, nil
}

func typeNumeric2(args []row.ColumnType) (row.ColumnType, error) {
	a, b := args[0].Type, args[1].Type
	if !is(args[0], row.TypeInt64, row.TypeFloat64, row.TypeNumeric) || !is(args[1], row.TypeInt64, row.TypeFloat64, row.TypeNumeric) {
		return row.ColumnType{}, evalErr(CodeUndefinedFunction, "operator does not exist: %s and %s", a, b)
	}
	switch {
	case a == row.TypeFloat64 || b == row.TypeFloat64:
		return row.ColumnType{Type: row.TypeFloat64}, nil
	case a == row.TypeNumeric || b == row.TypeNumeric:
		return row.ColumnType{Type: row.TypeNumeric}, nil
	case a == row.TypeInt64 || b == row.TypeInt64:
		return row.ColumnType{Type: row.TypeInt64}, nil
	}
	return row.ColumnType{Type: row.TypeNull}, nil
}

// typeArith types a binary arithmetic operator: numbers, or the date/time
// forms of temporalResult.
func typeArith(op string) func(args []row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		a, b := args[0].Type, args[1].Type
		if !a.IsTemporal() && !b.IsTemporal() {
			return typeNumeric2(args)
		}
		if a == row.TypeNull || b == row.TypeNull {
			t := a
			if t == row.TypeNull {
				t = b
			}
			// With an untyped NULL the other operand's type decides, as
			// for numbers: interval ± NULL is an interval, and so on.
			if t == row.TypeDate && op == "-" {
				return row.ColumnType{Type: row.TypeDate}, nil
			}
			return row.ColumnType{Type: t}, nil
		}
		if t := temporalResult(op, a, b); t != row.TypeInvalid {
			return row.ColumnType{Type: t}, nil
		}
		return row.ColumnType{}, evalErr(CodeUndefinedFunction, "operator does not exist: %s %s %s", a.PGName(), op, b.PGName())
	}
}

func typeNeg(args []row.ColumnType) (row.ColumnType, error) {
	if is(args[0], row.TypeInterval) {
		return row.ColumnType{Type: args[0].Type}, nil
	}
	return typeNumeric1(args)
}

func typeFloat1(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeInt64, row.TypeFloat64) {
		return row.ColumnType{}, typeSig("sqrt", args)
	}
	return row.ColumnType{Type: row.TypeFloat64}, nil
}

func typeFloat2(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeInt64, row.TypeFloat64) || !is(args[1], row.TypeInt64, row.TypeFloat64) {
		return row.ColumnType{}, typeSig("power", args)
	}
	return row.ColumnType{Type: row.TypeFloat64}, nil
}

func typeRound(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeInt64, row.TypeFloat64, row.TypeNumeric) || (len(args) == 2 && !is(args[1], row.TypeInt64)) {
		return row.ColumnType{}, typeSig("round", args)
	}
	return row.ColumnType{Type: args[0].Type}, nil
}

// typeTrunc types trunc(x) (x's type) and trunc(x, digits) (numeric).
func typeTrunc(args []row.ColumnType) (row.ColumnType, error) {
	if len(args) == 2 {
		if !is(args[0], row.TypeInt64, row.TypeNumeric) || !is(args[1], row.TypeInt64) {
			return row.ColumnType{}, typeSig("trunc", args)
		}
		return row.ColumnType{Type: row.TypeNumeric}, nil
	}
	return typeRound(args)
}

// typeSqrt types sqrt: numeric for a numeric, float64 otherwise.
func typeSqrt(args []row.ColumnType) (row.ColumnType, error) {
	if args[0].Type == row.TypeNumeric {
		return row.ColumnType{Type: row.TypeNumeric}, nil
	}
	return typeFloat1(args)
}

// typeText types a function of up to n text arguments returning result;
// substr-like integer arguments have their own typers.
func typeText(n int, result row.Type) func(args []row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		for _, a := range args[:min(n, len(args))] {
			if !is(a, row.TypeText) {
				return row.ColumnType{}, typeSig("text function", args)
			}
		}
		return row.ColumnType{Type: result}, nil
	}
}

func typeLength(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeText, row.TypeBytes) {
		return row.ColumnType{}, typeSig("length", args)
	}
	return row.ColumnType{Type: row.TypeInt64}, nil
}

func typeAnyToText(args []row.ColumnType) (row.ColumnType, error) {
	return row.ColumnType{Type: row.TypeText}, nil
}

func typeConcat(args []row.ColumnType) (row.ColumnType, error) {
	return row.ColumnType{Type: row.TypeText}, nil
}

func typeSubstr(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeText) || !is(args[1], row.TypeInt64) || (len(args) == 3 && !is(args[2], row.TypeInt64)) {
		return row.ColumnType{}, typeSig("substr", args)
	}
	return row.ColumnType{Type: row.TypeText}, nil
}

func typeExtreme(args []row.ColumnType) (row.ColumnType, error) {
	t, err := unify("GREATEST/LEAST", args)
	if err != nil {
		return row.ColumnType{}, err
	}
	nullable := true
	for _, a := range args {
		nullable = nullable && a.Nullable
	}
	return row.ColumnType{Type: t, Nullable: nullable || t == row.TypeNull}, nil
}
