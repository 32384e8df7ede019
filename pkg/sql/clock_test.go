package sql_test

import (
	"context"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestNowFollowsTheClock drives now() with a controllable clock: each
// statement reads it once, a transaction block keeps its first value, and
// the session's TimeZone decides how it is shown.
func TestNowFollowsTheClock(t *testing.T) {
	e := sql.NewEngine(sqltest.New())
	clock := time.Date(2024, 3, 10, 6, 59, 59, 999_999_000, time.UTC)
	e.SetClock(func() time.Time { return clock })
	s := e.NewSession("alice")
	// Millisecond resolution, like the engine's timestamps.
	wantRows(t, s, "SELECT now(), current_date, localtimestamp(0)", "2024-03-10 06:59:59.999+00,2024-03-10,2024-03-10 07:00:00")
	run(t, s, "SET TimeZone = 'America/New_York'")
	wantRows(t, s, "SELECT now()::text, current_date", "2024-03-10 01:59:59.999-05,2024-03-10")
	clock = clock.Add(time.Hour)
	wantRows(t, s, "SELECT now()::text, (now() - interval '1 hour')::text", "2024-03-10 03:59:59.999-04,2024-03-10 01:59:59.999-05")
	run(t, s, "BEGIN")
	wantRows(t, s, "SELECT now()::text", "2024-03-10 03:59:59.999-04")
	clock = clock.Add(time.Minute)
	wantRows(t, s, "SELECT now()::text", "2024-03-10 03:59:59.999-04")
	run(t, s, "COMMIT")
	wantRows(t, s, "SELECT now()::text", "2024-03-10 04:00:59.999-04")
	if _, err := s.ExecuteSQL(context.Background(), "SET TimeZone = 'Nowhere'"); err == nil {
		t.Fatal("SET TimeZone to an unknown zone succeeded")
	}
}
