package protocol

import (
	"errors"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrDecode is wrapped by every error a FromProto conversion returns.
var ErrDecode = errors.New("malformed message")

// DecodeError refuses a message that does not convert to the engine's
// types. Field is the path of the offending field from the decoded
// message down (e.g. "objects_to_build[0].plan.mfp.mfp.predicates[1].func").
// It carries gRPC's InvalidArgument.
type DecodeError struct {
	Field string
	Err   error
}

func (e *DecodeError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

// Unwrap returns the cause and ErrDecode.
func (e *DecodeError) Unwrap() []error { return []error{e.Err, ErrDecode} }

// GRPCStatus makes the error an InvalidArgument status.
func (e *DecodeError) GRPCStatus() *status.Status {
	return status.New(codes.InvalidArgument, e.Error())
}

// fieldErr reports err at field; only error paths call it, so a
// successful decode builds no paths.
func fieldErr(field string, err error) error {
	var de *DecodeError
	if errors.As(err, &de) {
		if de.Field == "" {
			return &DecodeError{Field: field, Err: de.Err}
		}
		sep := "."
		if de.Field[0] == '[' {
			sep = ""
		}
		return &DecodeError{Field: field + sep + de.Field, Err: de.Err}
	}
	return &DecodeError{Field: field, Err: err}
}

// indexErr reports err at element i of field.
func indexErr(field string, i int, err error) error {
	return fieldErr(field+"["+strconv.Itoa(i)+"]", err)
}

// missing is the error of an absent required field.
var errMissing = errors.New("required field is absent")

// InField reports err (a *DecodeError or any other) at field of the
// message being decoded, for decoders outside this package.
func InField(field string, err error) error { return fieldErr(field, err) }
