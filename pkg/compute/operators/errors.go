package operators

import "fmt"

// SQLSTATE codes the operators report.
const (
	// CodeNumericOutOfRange is SQLSTATE 22003, e.g. integer sum overflow.
	CodeNumericOutOfRange = "22003"
	// CodeDatetimeFieldOverflow is SQLSTATE 22008, e.g. an interval sum
	// out of range.
	CodeDatetimeFieldOverflow = "22008"
	// CodeInternal is SQLSTATE XX000: the input violated an invariant the
	// plan promised (a negative multiplicity, a value of the wrong type).
	CodeInternal = "XX000"
)

// Error is an evaluation error of a stateful operator. It is a comparable
// value, so retracting an error is emitting an equal value with diff -1.
type Error struct {
	Code    string // SQLSTATE
	Message string
}

func (e Error) Error() string { return fmt.Sprintf("%s (SQLSTATE %s)", e.Message, e.Code) }

// SQLState returns the SQLSTATE code, for layers that map errors to wire
// protocols without importing this package's type.
func (e Error) SQLState() string { return e.Code }

// negativeMultiplicity is the error of a group whose input holds a row
// with negative multiplicity. The message names the operator but not the
// count, so it is a function of the group's state that any evaluator
// (including the reference) reproduces exactly.
func negativeMultiplicity(op string) error {
	return Error{Code: CodeInternal, Message: op + ": negative multiplicity in input"}
}
