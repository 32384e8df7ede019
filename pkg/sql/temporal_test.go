package sql_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestTemporalFilterDefinitions: a view or materialized view may compare
// rows with now() in its WHERE (a temporal filter, which EXPLAIN CREATE
// MATERIALIZED VIEW shows); a one-shot read of a plain view evaluates the
// same predicate with now() the statement's time; other uses of now() in
// a definition are refused with 0A000.
func TestTemporalFilterDefinitions(t *testing.T) {
	e := sql.NewEngine(sqltest.New())
	clock := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	e.SetClock(func() time.Time { return clock })
	s := e.NewSession("alice")
	run(t, s, `CREATE TABLE ev (id int, at timestamptz);
		INSERT INTO ev VALUES (1, '2030-01-01 11:59:50+00'), (2, '2030-01-01 12:00:10+00'), (3, NULL);
		CREATE VIEW live AS SELECT id FROM ev WHERE at <= now() AND at + interval '20 seconds' > now();
		CREATE MATERIALIZED VIEW live_mv AS SELECT id FROM ev WHERE now() BETWEEN at AND at + interval '20 seconds'`)
	plan := strings.Join(run(t, s, "EXPLAIN CREATE MATERIALIZED VIEW x AS SELECT id FROM ev WHERE at <= now() AND at + interval '20 seconds' > now()"), "\n")
	if !strings.Contains(plan, "Dataflow (maintained)") ||
		!strings.Contains(plan, "TemporalFilter #1 <= now() AND tz_plus(#1, '00:00:20'::interval, 'UTC') > now()") {
		t.Errorf("EXPLAIN CREATE MATERIALIZED VIEW does not show the temporal filter:\n%s", plan)
	}
	if plan := strings.Join(run(t, s, "EXPLAIN SELECT id FROM live"), "\n"); strings.Contains(plan, "TemporalFilter") {
		t.Errorf("a one-shot read of the view plans a temporal filter:\n%s", plan)
	}
	wantRows(t, s, "SELECT id FROM live", "1")
	clock = clock.Add(10 * time.Second)
	wantRows(t, s, "SELECT id FROM live", "2")
	clock = clock.Add(20 * time.Second)
	wantRows(t, s, "SELECT id FROM live")
	for _, q := range []string{
		"CREATE VIEW bad AS SELECT id, now() FROM ev",
		"CREATE VIEW bad AS SELECT id FROM ev WHERE at > now() OR id = 1",
		"CREATE MATERIALIZED VIEW bad AS SELECT id FROM ev WHERE at > now() - interval '1 hour'",
		"CREATE INDEX bad ON ev ((at > now()))",
		"SUBSCRIBE TO (SELECT id FROM ev WHERE current_date > at)",
	} {
		_, err := s.ExecuteSQL(t.Context(), q)
		if sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), "except in a temporal filter") {
			t.Errorf("%s: %v, want 0A000 naming the temporal filter rule", q, err)
		}
	}
}
