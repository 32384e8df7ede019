// Package sqlerr defines the error values of the SQL layer: each carries a
// PostgreSQL SQLSTATE code so that the wire protocol can report it in an
// ErrorResponse and clients can act on it.
//
// Invariant: every error the SQL layer returns to a client has a code.
// Code(err) finds the outermost coded error in a wrapped chain (this
// package's *Error, or any error with a SQLState() string method, which is
// how errors of the expression evaluator are recognised) and falls back to
// XX000 (internal_error) for errors that carry none.
package sqlerr
