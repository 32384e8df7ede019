package render

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/expr"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// CodeInternal is the SQLSTATE of errors that carry no code of their own.
const CodeInternal = "XX000"

// EvalError is an error of the error collection of a rendered object: a
// SQLSTATE and a message. Errors are data: they travel as rows
// (code, message) beside the ok rows and are arranged like them.
type EvalError struct {
	Code    string
	Message string
}

func (e *EvalError) Error() string { return fmt.Sprintf("%s (SQLSTATE %s)", e.Message, e.Code) }

// SQLState returns the SQLSTATE code.
func (e *EvalError) SQLState() string { return e.Code }

// ErrorRow encodes err as an error-collection row (expr.ErrorRow).
func ErrorRow(err error) row.Row { return expr.ErrorRow(err) }

// DecodeErrorRow turns an error-collection row back into an *EvalError.
func DecodeErrorRow(r []byte) error {
	ds, err := row.Row(r).Unpack()
	if err != nil || len(ds) != 2 {
		return &EvalError{Code: CodeInternal, Message: fmt.Sprintf("undecodable error row %x", r)}
	}
	return &EvalError{Code: ds[0].Text(), Message: ds[1].Text()}
}
