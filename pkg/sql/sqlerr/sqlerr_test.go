package sqlerr

import (
	"errors"
	"fmt"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"testing"
)

type foreign struct{ code string }

func (f foreign) Error() string    { return "foreign " + f.code }
func (f foreign) SQLState() string { return f.code }

func TestCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"plain", errors.New("x"), InternalError},
		{"own", New(SyntaxError, "bad"), SyntaxError},
		{"wrapped", fmt.Errorf("ctx: %w", New(UndefinedTable, "t")), UndefinedTable},
		{"foreign", fmt.Errorf("eval: %w", foreign{DivisionByZero}), DivisionByZero},
		{"empty foreign code", foreign{""}, InternalError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Code(tc.err); got != tc.want {
				t.Fatalf("Code = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestConvertKeepsContext(t *testing.T) {
	inner := &Error{Code: UndefinedColumn, Message: "column x does not exist", Position: 8}
	got := Convert(fmt.Errorf("plan select: %w", inner))
	if got.Code != UndefinedColumn || got.Message != "plan select: column x does not exist" || got.Position != 8 {
		t.Fatalf("Convert = %+v", got)
	}
	if Convert(inner) != inner {
		t.Fatal("Convert of an *Error must return it unchanged")
	}
}

func TestCodeOfEvalError(t *testing.T) {
	err := fmt.Errorf("peek: %w", &expr.EvalError{Code: expr.CodeDivisionByZero, Msg: "division by zero"})
	if got := Code(err); got != DivisionByZero {
		t.Fatalf("Code = %q", got)
	}
	if got := Convert(&expr.EvalError{Code: "22012", Msg: "division by zero"}); got.Message != "division by zero" {
		t.Fatalf("Convert message %q", got.Message)
	}
}

// replicaError is an error as it arrives from a replica: coded, with the
// evaluator's "(SQLSTATE x)" suffix in its text.
type replicaError struct{ code, msg string }

func (e replicaError) Error() string    { return e.msg + " (SQLSTATE " + e.code + ")" }
func (e replicaError) SQLState() string { return e.code }

func TestConvertDropsSQLStateSuffix(t *testing.T) {
	for _, tt := range []struct {
		err      error
		code     string
		wantText string
	}{
		{replicaError{"22012", "division by zero"}, "22012", "division by zero"},
		{fmt.Errorf("peek: %w", replicaError{"22003", "integer out of range"}), "22003", "peek: integer out of range"},
		// A suffix naming another code is part of the message.
		{Errorf(InternalError, "odd (SQLSTATE 22012)"), InternalError, "odd (SQLSTATE 22012)"},
	} {
		got := Convert(tt.err)
		if got.Code != tt.code || got.Message != tt.wantText {
			t.Errorf("Convert(%v) = %s %q, want %s %q", tt.err, got.Code, got.Message, tt.code, tt.wantText)
		}
	}
}
