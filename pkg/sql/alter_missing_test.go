package sql_test

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestAlterMissingTable: ALTER TABLE and its RENAME forms on a missing
// table fail with 42P01, and do nothing under IF EXISTS; the catalog lock
// is released either way (the statements after them run).
func TestAlterMissingTable(t *testing.T) {
	s, _ := newSession(t)
	for _, tc := range []struct {
		query string
		code  string // "" means it succeeds
	}{
		{"ALTER TABLE nope ADD COLUMN b int", sqlerr.UndefinedTable},
		{"ALTER TABLE IF EXISTS nope ADD COLUMN b int", ""},
		{"ALTER TABLE nope RENAME TO other", sqlerr.UndefinedTable},
		{"ALTER TABLE IF EXISTS nope RENAME TO other", ""},
		{"ALTER TABLE nope RENAME COLUMN a TO b", sqlerr.UndefinedTable},
		{"ALTER TABLE IF EXISTS nope RENAME COLUMN a TO b", ""},
	} {
		if tc.code != "" {
			wantCode(t, s, tc.query, tc.code)
		} else {
			run(t, s, tc.query)
		}
	}
	run(t, s, "CREATE TABLE t (a int)")
	run(t, s, "ALTER TABLE t RENAME COLUMN a TO b")
	run(t, s, "ALTER TABLE IF EXISTS t ADD COLUMN c int")
}
