package environment

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestReadErrorCodes: the controller's refusals of a read reach the client
// with PostgreSQL's SQLSTATEs, however they were wrapped on the way.
func TestReadErrorCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"admission queue full", fmt.Errorf("peek u1: %w", &controller.PeekError{SQLState: controller.CodeInsufficientResources, Message: "too many concurrent reads"}), "53000"},
		{"deadline while queued", fmt.Errorf("peek u1: waiting for read admission: %w", context.DeadlineExceeded), sqlerr.QueryCanceled},
		{"canceled while queued", fmt.Errorf("peek u1: %w", context.Canceled), sqlerr.QueryCanceled},
		{"result too large", &controller.PeekError{SQLState: controller.CodeResultTooLarge, Message: "too large"}, "54000"},
	} {
		var se *sqlerr.Error
		if err := readError(tc.err); !errors.As(err, &se) || se.Code != tc.want {
			t.Errorf("%s: readError = %v, want SQLSTATE %s", tc.name, err, tc.want)
		}
	}
}
