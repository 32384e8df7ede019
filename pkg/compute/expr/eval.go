package expr

import (
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Eval evaluates e over one input row. SQL NULL propagates through strict
// functions; AND, OR, CASE, COALESCE, IN and IS NULL follow SQL's
// three-valued rules. Every failure is an *EvalError (never a panic),
// including a malformed tree (code XX000).
func (e Expr) Eval(datums []row.Datum) (row.Datum, error) { return e.eval(datums) }

// eval is Eval without copying the node: the recursion walks pointers
// into the Args slices.
func (e *Expr) eval(datums []row.Datum) (row.Datum, error) {
	switch e.Op {
	case OpColumn:
		if e.Index < 0 || e.Index >= len(datums) {
			return row.Null(), evalErr(CodeInternal, "column #%d out of range: row has %d columns", e.Index, len(datums))
		}
		return datums[e.Index], nil
	case OpLiteral:
		return e.Value, nil
	case OpCall:
		return e.evalCall(datums)
	case OpAnd, OpOr:
		return e.evalLogic(datums)
	case OpIf:
		if len(e.Args) != 3 {
			return row.Null(), evalErr(CodeInternal, "if takes 3 arguments, got %d", len(e.Args))
		}
		c, err := e.Args[0].eval(datums)
		if err != nil {
			return row.Null(), err
		}
		if c.Bool() {
			return e.Args[1].eval(datums)
		}
		return e.Args[2].eval(datums)
	case OpCoalesce:
		for i := range e.Args {
			v, err := e.Args[i].eval(datums)
			if err != nil || !v.IsNull() {
				return v, err
			}
		}
		return row.Null(), nil
	case OpIn:
		return e.evalIn(datums)
	case OpCast:
		if len(e.Args) != 1 {
			return row.Null(), evalErr(CodeInternal, "cast takes 1 argument, got %d", len(e.Args))
		}
		v, err := e.Args[0].eval(datums)
		if err != nil {
			return row.Null(), err
		}
		return CastDatum(v, e.Typ)
	}
	return row.Null(), evalErr(CodeInternal, "invalid expression op %s", e.Op)
}

// evalLogic evaluates AND (OR) with SQL three-valued logic. A false (true)
// argument decides the result even if another argument errors, whatever
// the order: the result does not depend on the order of the arguments,
// so a planner may reorder them. Otherwise the first error wins, then
// NULL, then true (false).
func (e *Expr) evalLogic(datums []row.Datum) (row.Datum, error) {
	decisive := e.Op == OpOr // OR is decided by true, AND by false
	sawNull := false
	var firstErr error
	for i := range e.Args {
		v, err := e.Args[i].eval(datums)
		switch {
		case err != nil:
			if firstErr == nil {
				firstErr = err
			}
		case v.IsNull():
			sawNull = true
		case v.Type() != row.TypeBool:
			if firstErr == nil {
				firstErr = evalErr(CodeDatatypeMismatch, "argument of %s must be type boolean, not type %s", e.Op, v.Type().PGName())
			}
		case v.Bool() == decisive:
			return v, nil
		}
	}
	switch {
	case firstErr != nil:
		return row.Null(), firstErr
	case sawNull:
		return row.Null(), nil
	}
	return row.Bool(!decisive), nil
}

func (e *Expr) evalIn(datums []row.Datum) (row.Datum, error) {
	if len(e.Args) == 0 {
		return row.Null(), evalErr(CodeInternal, "in needs an argument")
	}
	x, err := e.Args[0].eval(datums)
	if err != nil {
		return row.Null(), err
	}
	if x.IsNull() {
		return row.Null(), nil
	}
	sawNull := false
	for i := 1; i < len(e.Args); i++ {
		v, err := e.Args[i].eval(datums)
		if err != nil {
			return row.Null(), err
		}
		if v.IsNull() {
			sawNull = true
			continue
		}
		c, err := compareDatums(x, v)
		if err != nil {
			return row.Null(), err
		}
		if c == 0 {
			return row.True, nil
		}
	}
	if sawNull {
		return row.Null(), nil
	}
	return row.False, nil
}

func (e *Expr) evalCall(datums []row.Datum) (row.Datum, error) {
	def := e.Func.def()
	if def == nil {
		return row.Null(), evalErr(CodeInternal, "unknown function %s", e.Func)
	}
	n := len(e.Args)
	if n < def.minArgs || (def.maxArgs >= 0 && n > def.maxArgs) {
		return row.Null(), evalErr(CodeUndefinedFunction, "function %s takes %s arguments, got %d", def.name, arityRange(def), n)
	}
	if e.compiled != nil {
		return e.evalCompiled(datums)
	}
	// Fixed arities evaluate into locals so that the hot path does not
	// allocate an argument slice.
	var a, b, c row.Datum
	var err error
	switch {
	case n == 1 && def.eval1 != nil:
		if a, err = e.Args[0].eval(datums); err != nil {
			return row.Null(), err
		}
		if def.strict && a.IsNull() {
			return row.Null(), nil
		}
		return def.eval1(a)
	case n == 2 && def.eval2 != nil:
		if a, err = e.Args[0].eval(datums); err != nil {
			return row.Null(), err
		}
		if b, err = e.Args[1].eval(datums); err != nil {
			return row.Null(), err
		}
		if def.strict && (a.IsNull() || b.IsNull()) {
			return row.Null(), nil
		}
		return def.eval2(a, b)
	case n == 3 && def.eval3 != nil:
		if a, err = e.Args[0].eval(datums); err != nil {
			return row.Null(), err
		}
		if b, err = e.Args[1].eval(datums); err != nil {
			return row.Null(), err
		}
		if c, err = e.Args[2].eval(datums); err != nil {
			return row.Null(), err
		}
		if def.strict && (a.IsNull() || b.IsNull() || c.IsNull()) {
			return row.Null(), nil
		}
		return def.eval3(a, b, c)
	case def.evalN != nil:
		args := make([]row.Datum, n)
		for i := range e.Args {
			if args[i], err = e.Args[i].eval(datums); err != nil {
				return row.Null(), err
			}
			if def.strict && args[i].IsNull() {
				return row.Null(), nil
			}
		}
		return def.evalN(args)
	}
	return row.Null(), evalErr(CodeInternal, "function %s has no %d-argument form", def.name, n)
}

// evalCompiled evaluates a regular expression call whose constant
// pattern Prepare compiled (regexcache.go); the functions are strict.
func (e *Expr) evalCompiled(datums []row.Datum) (row.Datum, error) {
	args := make([]row.Datum, len(e.Args))
	for i := range e.Args {
		v, err := e.Args[i].eval(datums)
		if err != nil {
			return row.Null(), err
		}
		if v.IsNull() {
			return row.Null(), nil
		}
		args[i] = v
	}
	if e.Func == FuncRegexMatch && args[0].Type() != row.TypeText {
		return row.Null(), undefinedFunc("regex_match", args[0], args[1])
	}
	return evalWithRegex(e.Func, args, e.compiled)
}
