package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestReasonOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&pgconn.PgError{Code: "42P01", Message: `relation "tab3" does not exist`}, "42P01 relation … does not exist"},
		{&pgconn.PgError{Code: "2BP01", Message: "cannot drop view view_1_tab0_153 because other objects depend on it"},
			"2BP01 cannot drop view N because other objects depend on it"},
		{fmt.Errorf("statement timeout: %w", errors.New("context deadline exceeded")), "(client) statement timeout"},
	} {
		if got := reasonOf(tc.err); got != tc.want {
			t.Errorf("reasonOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
