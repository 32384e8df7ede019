package expr

import (
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// SQLSTATE codes of the errors evaluation can produce.
const (
	CodeDivisionByZero          = "22012" // division_by_zero
	CodeNullValueNotAllowed     = "22004" // null_value_not_allowed
	CodeNumericValueOutOfRange  = "22003" // numeric_value_out_of_range
	CodeInvalidTextRepr         = "22P02" // invalid_text_representation
	CodeInvalidParameterValue   = "22023" // invalid_parameter_value
	CodeInvalidArgumentForPower = "2201F" // invalid_argument_for_power_function
	CodeSubstringError          = "22011" // substring_error
	CodeInvalidEscapeSequence   = "22025" // invalid_escape_sequence
	CodeInvalidDatetimeFormat   = "22007" // invalid_datetime_format
	CodeDatetimeFieldOverflow   = "22008" // datetime_field_overflow
	CodeIntervalFieldOverflow   = "22015" // interval_field_overflow
	CodeFeatureNotSupported     = "0A000" // feature_not_supported
	CodeInvalidRegex            = "2201B" // invalid_regular_expression
	CodeCardinalityViolation    = "21000" // cardinality_violation
	CodeDatatypeMismatch        = "42804" // datatype_mismatch
	CodeUndefinedFunction       = "42883" // undefined_function
	CodeInternal                = "XX000" // internal_error: a malformed expression
)

// EvalError is the error every evaluation failure returns: a SQLSTATE code
// and a message in Postgres' wording. Errors are data in Tandem (a
// dataflow turns them into an error collection that reads report), so
// they must be comparable and cheap to carry; they never panic.
type EvalError struct {
	Code string `json:"code"`
	Msg  string `json:"msg"`
}

func (e *EvalError) Error() string { return e.Msg + " (SQLSTATE " + e.Code + ")" }

// Is makes errors.Is match two EvalErrors with the same code and message.
func (e *EvalError) Is(target error) bool {
	t, ok := target.(*EvalError)
	return ok && t.Code == e.Code && (t.Msg == "" || t.Msg == e.Msg)
}

func evalErr(code, format string, args ...any) *EvalError {
	return &EvalError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Frequent errors, allocated once. They are never mutated.
var (
	errDivisionByZero = &EvalError{Code: CodeDivisionByZero, Msg: "division by zero"}
	errBigintRange    = &EvalError{Code: CodeNumericValueOutOfRange, Msg: "bigint out of range"}
	errFloatOverflow  = &EvalError{Code: CodeNumericValueOutOfRange, Msg: "value out of range: overflow"}
	errFloatUnderflow = &EvalError{Code: CodeNumericValueOutOfRange, Msg: "value out of range: underflow"}
)

// Code returns the SQLSTATE of err if it is (or wraps) an *EvalError, and
// "" otherwise.
func Code(err error) string {
	var e *EvalError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// ErrorRow encodes err as an error-collection row (SQLSTATE, message): the
// code of an *EvalError or of an error with a SQLState method, else XX000;
// the message is err's text without its " (SQLSTATE code)" suffix.
func ErrorRow(err error) row.Row {
	code := Code(err)
	var coded interface{ SQLState() string }
	if code == "" && errors.As(err, &coded) {
		code = coded.SQLState()
	}
	if code == "" {
		code = CodeInternal
	}
	msg := err.Error()
	if suffix := fmt.Sprintf(" (SQLSTATE %s)", code); len(msg) > len(suffix) && msg[len(msg)-len(suffix):] == suffix {
		msg = msg[:len(msg)-len(suffix)]
	}
	return row.Pack(row.Text(code), row.Text(msg))
}
