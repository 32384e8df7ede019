package expr

import (
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TableRowsFrom runs several table functions in lockstep, as PostgreSQL
// runs the set-returning functions of one select list (and ROWS FROM):
// its i-th row is the i-th row of each call, a call that has ended
// giving NULLs, until every call has ended. Its arguments are, per call,
// the function's name (a text literal), its argument count and column
// count (integer literals) and its arguments, so that it encodes as any
// other call.
const TableRowsFrom TableFunc = "rows_from"

// RowsFrom builds the lockstep call of calls, of widths[i] columns each.
func RowsFrom(calls []TableCall, widths []int) TableCall {
	var args []Expr
	for i, c := range calls {
		args = append(args, Literal(row.Text(string(c.Func))), Literal(row.Int64(int64(len(c.Args)))),
			Literal(row.Int64(int64(widths[i]))))
		args = append(args, c.Args...)
	}
	return TableCall{Func: TableRowsFrom, Args: args}
}

// rowsFromCalls decodes a rows_from call's arguments (RowsFrom): the
// calls and their widths.
func rowsFromCalls(args []Expr) ([]TableCall, []int, error) {
	var calls []TableCall
	var widths []int
	for i := 0; i < len(args); {
		if i+3 > len(args) {
			return nil, nil, evalErr(CodeInvalidParameterValue, "rows_from: malformed arguments at %d", i)
		}
		name, ok1 := args[i].IsLiteral()
		n, ok2 := args[i+1].IsLiteral()
		w, ok3 := args[i+2].IsLiteral()
		if !ok1 || !ok2 || !ok3 || name.Type() != row.TypeText || n.Type() != row.TypeInt64 || w.Type() != row.TypeInt64 ||
			n.Int64() < 0 || w.Int64() < 1 || int64(len(args)-i-3) < n.Int64() || TableFunc(name.Text()) == TableRowsFrom {
			return nil, nil, evalErr(CodeInvalidParameterValue, "rows_from: malformed arguments at %d", i)
		}
		end := i + 3 + int(n.Int64())
		calls = append(calls, TableCall{Func: TableFunc(name.Text()), Args: args[i+3 : end]})
		widths = append(widths, int(w.Int64()))
		i = end
	}
	if len(calls) == 0 {
		return nil, nil, evalErr(CodeInvalidParameterValue, "rows_from: no calls")
	}
	return calls, widths, nil
}

// rowsFromTypes is the calls' columns side by side, each nullable (a
// call that has ended pads with NULLs).
func rowsFromTypes(args []Expr, input []row.ColumnType) ([]row.ColumnType, error) {
	calls, widths, err := rowsFromCalls(args)
	if err != nil {
		return nil, err
	}
	var out []row.ColumnType
	for i, c := range calls {
		ts, err := c.OutputTypes(input)
		if err != nil {
			return nil, err
		}
		if len(ts) != widths[i] {
			return nil, evalErr(CodeInvalidParameterValue, "rows_from: %s has %d columns, not %d", c.Func, len(ts), widths[i])
		}
		for _, t := range ts {
			out = append(out, row.ColumnType{Type: t.Type, Nullable: true})
		}
	}
	return out, nil
}

// rowsFrom is a rows_from call decoded (Prepare), so that a FlatMap
// decodes the calls once and not for every input row.
type rowsFrom struct {
	calls  []TableCall
	widths []int
}

// eval evaluates each call over datums and emits their rows in lockstep.
// Each call's rows are bounded by MaxTableFuncRows.
func (rf *rowsFrom) eval(datums []row.Datum, emit func([]row.Datum) error) error {
	rows := make([][][]row.Datum, len(rf.calls))
	longest := 0
	for i, c := range rf.calls {
		if err := c.Eval(datums, func(r []row.Datum) error {
			if len(r) != rf.widths[i] {
				return evalErr(CodeInvalidParameterValue, "rows_from: %s gave %d columns, not %d", c.Func, len(r), rf.widths[i])
			}
			rows[i] = append(rows[i], append([]row.Datum(nil), r...))
			return nil
		}); err != nil {
			return err
		}
		longest = max(longest, len(rows[i]))
	}
	for j := range longest {
		var out []row.Datum
		for i := range rf.calls {
			if j < len(rows[i]) {
				out = append(out, rows[i][j]...)
				continue
			}
			for range rf.widths[i] {
				out = append(out, row.Null())
			}
		}
		if err := emit(out); err != nil {
			return err
		}
	}
	return nil
}

// rowsFromString renders the calls ("rows_from(unnest(#1), generate_series(1, 3))").
func rowsFromString(args []Expr) string {
	calls, _, err := rowsFromCalls(args)
	if err != nil {
		return "rows_from(?)"
	}
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.String()
	}
	return "rows_from(" + strings.Join(parts, ", ") + ")"
}
