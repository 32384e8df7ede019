package sqlerr

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a panic recovered while a statement ran: the statement
// fails with XX000 and the process keeps serving. Stack is the panicking
// goroutine's stack, for the log line that reports it (it is not sent to
// the client).
type PanicError struct {
	Value any
	Stack []byte
}

// Recovered returns the PanicError for a value returned by recover,
// capturing the current stack (call it in the deferred function).
func Recovered(v any) *PanicError {
	return &PanicError{Value: v, Stack: debug.Stack()}
}

// Error returns the message the client sees.
func (e *PanicError) Error() string { return fmt.Sprintf("internal error: %v", e.Value) }

// SQLState returns XX000.
func (e *PanicError) SQLState() string { return InternalError }
