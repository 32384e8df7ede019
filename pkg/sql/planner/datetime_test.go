package planner

import (
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestNowIsTheStatementTime checks that now() and its relatives are the
// planner's statement time, folded to constants, in the session's zone.
func TestNowIsTheStatementTime(t *testing.T) {
	const now = 1_700_000_000_123_000 // 2023-11-14 22:13:20.123 UTC
	p := &Planner{Catalog: testCatalog(), Session: SessionInfo{Now: now, TimeZone: "Asia/Tokyo"}}
	q, err := planSQL(t, p, "SELECT now(), current_timestamp(0), current_date, localtimestamp, now() - interval '1 day' FROM kv")
	if err != nil {
		t.Fatal(err)
	}
	got := Explain(q)
	for _, want := range []string{"'2023-11-14 22:13:20.123+00'::timestamptz", "'2023-11-14 22:13:20+00'::timestamptz",
		"'2023-11-15'::date", "'2023-11-15 07:13:20.123'::timestamp"} {
		if !strings.Contains(got, want) {
			t.Errorf("plan does not contain %s:\n%s", want, got)
		}
	}
}

// TestNowRefusedInMaintainedPlans checks that a definition maintained as
// time passes cannot read the clock.
func TestNowRefusedInMaintainedPlans(t *testing.T) {
	for _, sql := range []string{"SELECT now()", "SELECT k FROM kv WHERE current_date > '2024-01-01'", "SELECT localtimestamp", "SELECT age(timestamp '2024-01-01')"} {
		p := &Planner{Catalog: testCatalog(), Session: SessionInfo{Now: 1}, Maintained: true}
		_, err := planSQL(t, p, sql)
		if sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), "not allowed in a view") {
			t.Errorf("%s: %v, want 0A000 naming views", sql, err)
		}
	}
}

func TestTemporalColumnPrecisionRefused(t *testing.T) {
	_, err := planSQL(t, &Planner{Catalog: testCatalog()}, "SELECT '2024-01-01'::timestamp(2)::text")
	if err != nil {
		t.Fatalf("cast with precision: %v", err)
	}
	if _, err := TypeFromName(typeNameFor(t, "timestamp(3)")); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("column type timestamp(3): %v, want 0A000", err)
	}
	if typ, err := TypeFromName(typeNameFor(t, "timestamp with time zone")); err != nil || typ != row.TypeTimestampTZ {
		t.Errorf("timestamp with time zone = %v, %v", typ, err)
	}
}

// typeNameFor parses the type name of "SELECT NULL::<name>".
func typeNameFor(t *testing.T, name string) *pg.TypeName {
	t.Helper()
	tree, err := pg.Parse("SELECT NULL::" + name)
	if err != nil {
		t.Fatal(err)
	}
	return tree.Stmts[0].GetStmt().GetSelectStmt().TargetList[0].GetResTarget().GetVal().GetTypeCast().GetTypeName()
}
