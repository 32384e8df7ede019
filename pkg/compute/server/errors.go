package server

import (
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/expr"
)

// SQLSTATE codes of the errors the server answers with.
const (
	CodeUndefinedObject   = "42704" // unknown GlobalId or peek target
	CodeDuplicateObject   = "42710" // export already exists, duplicate peek uuid
	CodeInvalidPlan       = "XX000" // dataflow description does not decode or validate
	CodeProtocolViolation = "08P01" // malformed or out-of-order command
	CodeReadOutOfRange    = "55000" // peek time before since or at/after until
	CodeResultTooLarge    = "54000" // peek result above max_result_size
	CodeInternal          = "XX000" // runtime failure without a code of its own
)

// CodedError is an error with a SQLSTATE code. Runtimes may return it (or
// wrap it) so the controller sees a precise code.
type CodedError struct {
	Code string
	Err  error
}

func (e *CodedError) Error() string { return e.Err.Error() }
func (e *CodedError) Unwrap() error { return e.Err }

func coded(code, format string, args ...any) *CodedError {
	return &CodedError{Code: code, Err: fmt.Errorf(format, args...)}
}

// sqlstate returns err's SQLSTATE: a CodedError's, an expr.EvalError's, or
// internal_error.
func sqlstate(err error) string {
	var ce *CodedError
	if errors.As(err, &ce) {
		return ce.Code
	}
	if c := expr.Code(err); c != "" {
		return c
	}
	// Errors read back from a dataflow's error collection carry their code.
	var st interface{ SQLState() string }
	if errors.As(err, &st) && st.SQLState() != "" {
		return st.SQLState()
	}
	return CodeInternal
}
