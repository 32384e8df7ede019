package sqlerr

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/expr"
)

// SQLSTATE codes used by the SQL layer. Names follow PostgreSQL's
// errcodes.txt.
const (
	SuccessfulCompletion       = "00000"
	FeatureNotSupported        = "0A000"
	InvalidParameterValue      = "22023"
	DivisionByZero             = "22012"
	NumericValueOutOfRange     = "22003"
	DatetimeFieldOverflow      = "22008"
	InvalidTextRepresentation  = "22P02"
	DatatypeMismatch           = "42804"
	CardinalityViolation       = "21000"
	NotNullViolation           = "23502"
	InvalidCursorName          = "34000"
	SyntaxError                = "42601"
	UndefinedTable             = "42P01"
	UndefinedColumn            = "42703"
	UndefinedFunction          = "42883"
	UndefinedObject            = "42704"
	DuplicateObject            = "42710"
	DuplicateTable             = "42P07"
	DuplicateColumn            = "42701"
	AmbiguousColumn            = "42702"
	GroupingError              = "42803"
	WrongObjectType            = "42809"
	DependentObjectsStillExist = "2BP01"
	InvalidTransactionState    = "25000"
	ActiveSQLTransaction       = "25001"
	InFailedTransaction        = "25P02"
	UndefinedParameterRef      = "42P02"
	ProtocolViolation          = "08P01"
	InvalidPassword            = "28P01"
	InvalidAuthorization       = "28000"
	InvalidCatalogName         = "3D000"
	InsufficientPrivilege      = "42501"
	QueryCanceled              = "57014"
	InternalError              = "XX000"
	UndefinedParameter         = "42704"
	CantChangeRuntimeParam     = "55P02"
	InvalidParameterType       = "42P18"
)

// Error is an error with a SQLSTATE code and the optional fields of a
// PostgreSQL ErrorResponse.
type Error struct {
	Code    string
	Message string
	Detail  string
	Hint    string
	// Where is the context the error arose in (CONTEXT: a COPY's line).
	Where string
	// Position is the 1-based character position in the statement text the
	// error refers to, or 0 when unknown.
	Position int
}

// Error returns the message (the code is reported separately on the wire).
func (e *Error) Error() string { return e.Message }

// SQLState returns the SQLSTATE code.
func (e *Error) SQLState() string { return e.Code }

// New returns an error with the given code and message.
func New(code, msg string) *Error { return &Error{Code: code, Message: msg} }

// Errorf returns an error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Unsupported returns a 0A000 error naming the unsupported feature; the
// SQL layer uses it instead of guessing at semantics it does not implement.
func Unsupported(feature string) *Error {
	return &Error{Code: FeatureNotSupported, Message: feature + " not supported"}
}

// coded is implemented by errors that carry a SQLSTATE, including this
// package's *Error and the expression evaluator's errors.
type coded interface {
	error
	SQLState() string
}

// Code returns the SQLSTATE of the outermost coded error in err's chain,
// or InternalError when there is none. Code(nil) is "".
func Code(err error) string {
	if err == nil {
		return ""
	}
	var c coded
	if errors.As(err, &c) {
		if s := c.SQLState(); s != "" {
			return s
		}
	}
	if s := expr.Code(err); s != "" {
		return s
	}
	return InternalError
}

// Convert returns err as an *Error: the outermost *Error of its chain if
// the message is the same, otherwise a new *Error with err's code and full
// message (so wrapping context is preserved).
func Convert(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) && e.Message == err.Error() {
		return e
	}
	msg := err.Error()
	var ee *expr.EvalError
	if errors.As(err, &ee) && msg == ee.Error() {
		// The evaluator appends "(SQLSTATE x)" for logs; on the wire the
		// code travels in its own field.
		msg = ee.Msg
	}
	code := Code(err)
	// Errors raised on a replica travel as text ending in the same suffix;
	// the code has its own field on the wire, so the suffix goes.
	msg = strings.TrimSuffix(msg, " (SQLSTATE "+code+")")
	out := &Error{Code: code, Message: msg}
	if errors.As(err, &e) {
		out.Detail, out.Hint, out.Position = e.Detail, e.Hint, e.Position
	}
	return out
}

// Codes of resource limits (PostgreSQL's class 53 and 54).
const (
	OutOfMemory          = "53200"
	TooManyConnections   = "53300"
	ProgramLimitExceeded = "54000"
)

// Codes of roles and privileges.
const (
	ObjectInUse  = "55006"
	ReservedName = "42939"
)

// InvalidGrantOperation is a privilege that does not apply to the object.
const InvalidGrantOperation = "0LP01"
