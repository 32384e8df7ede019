package planner

import (
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// eventsCatalog has events(id bigint, at timestamptz, ends timestamp,
// day date, label text) beside the test catalog's tables.
func eventsCatalog() mapCatalog {
	c := testCatalog()
	c["events"] = Relation{ID: plan.User(10), Name: "events", Desc: row.RelationDesc{
		Names: []string{"id", "at", "ends", "day", "label"},
		Types: []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeTimestampTZ, Nullable: true},
			{Type: row.TypeTimestamp, Nullable: true}, {Type: row.TypeDate, Nullable: true}, {Type: row.TypeText, Nullable: true}},
	}}
	return c
}

func maintainedPlanner() *Planner {
	return &Planner{Catalog: eventsCatalog(), Session: SessionInfo{Now: 1, TimeZone: "Europe/Paris"}, Maintained: true}
}

// temporalBounds returns the bounds of the plan's temporal filters, as
// "expr op now()", in plan order.
func temporalBounds(p plan.Plan) []string {
	var out []string
	if p.TemporalFilter != nil {
		for _, b := range p.TemporalFilter.Bounds {
			out = append(out, b.String())
		}
	}
	for _, in := range p.Inputs() {
		out = append(out, temporalBounds(*in)...)
	}
	return out
}

// TestTemporalFilterPlans checks which WHERE conjuncts become temporal
// bounds in a maintained definition, with now() on either side.
func TestTemporalFilterPlans(t *testing.T) {
	tests := []struct {
		sql  string
		want []string // the bounds; the rest of the WHERE stays a filter
	}{
		{"SELECT id FROM events WHERE at <= now()", []string{"#1 <= now()"}},
		{"SELECT id FROM events WHERE now() < at + interval '10 seconds'", []string{"tz_plus(#1, '00:00:10'::interval, 'Europe/Paris') > now()"}},
		{"SELECT id FROM events WHERE at >= current_timestamp AND label = 'x' AND at < now()", []string{"#1 >= now()", "#1 < now()"}},
		{"SELECT id FROM events WHERE now() BETWEEN at AND at + interval '1 hour'", []string{"#1 <= now()", "tz_plus(#1, '01:00:00'::interval, 'Europe/Paris') >= now()"}},
		{"SELECT id FROM events WHERE transaction_timestamp() = at", []string{"#1 = now()"}},
		{"SELECT id FROM events WHERE ends > now()", []string{"timezone('Europe/Paris', #2) > now()"}},
		{"SELECT id FROM events WHERE day >= now()", []string{"timezone('Europe/Paris', CAST(#3 AS timestamp)) >= now()"}},
		{"SELECT id FROM events WHERE '2024-01-01 00:00' < now()", []string{"'2023-12-31 23:00:00+00'::timestamptz < now()"}},
		// A global aggregate reads its input twice (its row over no input).
		{"SELECT count(*) FROM (SELECT * FROM events WHERE at > now()) e", []string{"#1 > now()", "#1 > now()"}},
		{"SELECT e.id FROM events e JOIN kv ON e.id = kv.k WHERE e.at + interval '1 day' > now() AND kv.v = 'a'", nil},
		{"SELECT k FROM kv WHERE EXISTS (SELECT 1 FROM events WHERE events.id = kv.k AND at > now())", nil},
		{"SELECT id FROM events WHERE at < now() UNION SELECT id FROM events WHERE at IS NULL", nil},
	}
	for _, tt := range tests {
		q, err := planSQL(t, maintainedPlanner(), tt.sql)
		if err != nil {
			t.Errorf("%s: %v", tt.sql, err)
			continue
		}
		got := temporalBounds(q.Plan)
		if tt.want == nil {
			if len(got) != 1 {
				t.Errorf("%s: bounds %q, want one", tt.sql, got)
			}
			continue
		}
		if strings.Join(got, " AND ") != strings.Join(tt.want, " AND ") {
			t.Errorf("%s:\n got bounds %q\nwant %q", tt.sql, got, tt.want)
		}
		if !strings.Contains(Explain(q), "TemporalFilter ") {
			t.Errorf("%s: EXPLAIN does not show the temporal filter:\n%s", tt.sql, Explain(q))
		}
		if _, err := q.Plan.Desc(testEnv(eventsCatalog())); err != nil {
			t.Errorf("%s: plan does not type-check: %v", tt.sql, err)
		}
	}
}

// TestNowOutsideTemporalFiltersRefused: every other use of now() in a
// maintained definition is refused with 0A000 naming the rule, and a
// bound of a type that does not compare with timestamptz is 42883.
func TestNowOutsideTemporalFiltersRefused(t *testing.T) {
	tests := []struct{ sql, code string }{
		{"SELECT now() FROM events", sqlerr.FeatureNotSupported},
		{"SELECT id FROM events WHERE at > now() OR id = 1", sqlerr.FeatureNotSupported},
		{"SELECT id FROM events WHERE NOT (at > now())", sqlerr.FeatureNotSupported},
		{"SELECT id FROM events WHERE at > now() - interval '1 hour'", sqlerr.FeatureNotSupported},
		{"SELECT id FROM events WHERE date_trunc('day', now()) < at", sqlerr.FeatureNotSupported},
		{"SELECT id FROM events WHERE now() <> at", sqlerr.FeatureNotSupported},
		{"SELECT id FROM events WHERE now() NOT BETWEEN at AND at", sqlerr.FeatureNotSupported},
		{"SELECT id FROM events WHERE now() BETWEEN at AND now()", sqlerr.FeatureNotSupported},
		{"SELECT id FROM events WHERE current_timestamp(0) > at", sqlerr.FeatureNotSupported},
		{"SELECT id FROM events WHERE current_date > day", sqlerr.FeatureNotSupported},
		{"SELECT count(*) FROM events GROUP BY id HAVING max(at) > now()", sqlerr.FeatureNotSupported},
		{"SELECT e.id FROM events e JOIN events f ON e.at < now()", sqlerr.FeatureNotSupported},
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r, events WHERE at < now() AND n < 3) SELECT n FROM r", sqlerr.FeatureNotSupported},
		{"SELECT id FROM events WHERE id < now()", sqlerr.UndefinedFunction},
		{"SELECT id FROM events WHERE (SELECT max(at) FROM events) < now()", "0A000 subquery"},
	}
	for _, tt := range tests {
		_, err := planSQL(t, maintainedPlanner(), tt.sql)
		if tt.code == "0A000 subquery" {
			// A subquery in a bound is refused as in other places
			// that do not take subqueries.
			if sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), "subquer") {
				t.Errorf("%s: %v, want 0A000 naming subqueries", tt.sql, err)
			}
			continue
		}
		if sqlerr.Code(err) != tt.code {
			t.Errorf("%s: %v, want %s", tt.sql, err, tt.code)
			continue
		}
		if tt.code == sqlerr.FeatureNotSupported && !strings.Contains(err.Error(), "temporal filter") {
			t.Errorf("%s: %v does not name the temporal filter rule", tt.sql, err)
		}
	}
}

// TestOneShotNowStaysALiteral: outside maintained definitions now() is
// the statement's time and no temporal filter is planned.
func TestOneShotNowStaysALiteral(t *testing.T) {
	p := &Planner{Catalog: eventsCatalog(), Session: SessionInfo{Now: 1_700_000_000_000_000, TimeZone: "UTC"}}
	q, err := planSQL(t, p, "SELECT id FROM events WHERE at <= now()")
	if err != nil {
		t.Fatal(err)
	}
	if b := temporalBounds(q.Plan); len(b) != 0 {
		t.Fatalf("one-shot plan has temporal bounds %q", b)
	}
	if !strings.Contains(Explain(q), "'2023-11-14 22:13:20+00'::timestamptz") {
		t.Errorf("now() is not the statement's time:\n%s", Explain(q))
	}
}

// testEnv describes the catalog's relations by id, for Desc.
func testEnv(c mapCatalog) plan.Env {
	m := map[plan.GlobalID]row.RelationDesc{}
	for _, r := range c {
		m[r.ID] = r.Desc
	}
	return plan.MapEnv(m)
}
