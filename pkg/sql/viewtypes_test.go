package sql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestIndexedViewKeepsColumnTypes: a view read from its index describes
// its columns as the view's query types them (int4 stays int4, char(n)
// stays char(n) and is padded, numeric(p,s) keeps its scale), exactly as
// the view's query read directly does, and a key lookup on the index stays
// on the fast path.
func TestIndexedViewKeepsColumnTypes(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, "CREATE TABLE t (id int, s smallint, c char(4), v varchar(3), n numeric(6,2), a int[], b bigint)")
	run(t, s, "INSERT INTO t VALUES (1, 2, 'a', 'x', 1.5, '{1}', 3)")
	run(t, s, "CREATE VIEW v AS SELECT * FROM t")
	run(t, s, "CREATE VIEW w AS SELECT id, c || 'z' AS cz, n * 2 AS n2, s + 1 AS s1, c FROM t")
	run(t, s, "CREATE INDEX v_id ON v (id)")
	run(t, s, "CREATE INDEX w_id ON w (id)")
	for _, tc := range []struct{ read, same string }{
		{"SELECT * FROM v", "SELECT * FROM t"},
		{"SELECT * FROM v WHERE id = 1", "SELECT * FROM t"},
		{"SELECT * FROM w", "SELECT id, c || 'z' AS cz, n * 2 AS n2, s + 1 AS s1, c FROM t"},
	} {
		got, want := columns(t, s, tc.read), columns(t, s, tc.same)
		if len(got) != len(want) {
			t.Fatalf("%s: %d columns, want %d", tc.read, len(got), len(want))
		}
		for i := range got {
			if got[i].Width != want[i].Width || got[i].Mod != want[i].Mod || got[i].Type != want[i].Type {
				t.Errorf("%s: column %s is %+v, want %+v (as %s)", tc.read, got[i].Name, got[i], want[i], tc.same)
			}
		}
	}
	c := columns(t, s, "SELECT * FROM v")
	if c[1].Width != planner.IntWidth2 || c[2].Mod != (planner.TypeMod{Kind: planner.ModBpchar, N: 4}) ||
		c[4].Mod != (planner.TypeMod{Kind: planner.ModNumeric, N: 6, Scale: 2}) {
		t.Errorf("SELECT * FROM v: s %+v, c %+v, n %+v; want smallint, char(4), numeric(6,2)", c[1], c[2], c[4])
	}
	if plan := strings.Join(run(t, s, "EXPLAIN SELECT * FROM v WHERE id = 1"), "\n"); !strings.Contains(plan, "Fast path") {
		t.Errorf("EXPLAIN SELECT * FROM v WHERE id = 1 is not a fast path:\n%s", plan)
	}
}

// columns returns the result columns of q's last statement.
func columns(t *testing.T, s *sql.Session, q string) []sql.Column {
	t.Helper()
	res, err := s.ExecuteSQL(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res[len(res)-1].Columns
}

// TestNumericToTextKeepsScale: casting a numeric of known display scale to
// text prints that scale, as numeric_out does.
func TestNumericToTextKeepsScale(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, "CREATE TABLE n (a numeric(6,2), b numeric)")
	run(t, s, "INSERT INTO n VALUES (1.5, 1.50), (NULL, NULL)")
	for _, tc := range []struct{ q, want string }{
		{"SELECT a::text, (a * 2)::text, CAST(a AS varchar(10)), 2.50::text FROM n WHERE a IS NOT NULL", "1.50,3.00,1.50,2.50"},
		{"SELECT a::text FROM n WHERE a IS NULL", "NULL"},
	} {
		wantRows(t, s, tc.q, tc.want)
	}
}

// TestIndexedViewReadPlansNoDefinition: once a view's column types are
// derived, reads of its index (point reads and scans, views of views
// included) plan no view definition; a changed definition underneath
// (ALTER TABLE changes the table's text) derives them again, once.
func TestIndexedViewReadPlansNoDefinition(t *testing.T) {
	e := sql.NewEngine(sqltest.New())
	planned := map[string]int{}
	e.SetOnViewPlan(func(v string) { planned[v]++ })
	s := e.NewSession("alice")
	run(t, s, "CREATE TABLE t (id int, c char(4), n numeric(6,2))")
	run(t, s, "INSERT INTO t VALUES (1, 'a', 1.5)")
	run(t, s, "CREATE VIEW v AS SELECT id, c, n * 2 AS n2 FROM t")
	run(t, s, "CREATE VIEW w AS SELECT id, c FROM v")
	run(t, s, "CREATE INDEX v_id ON v (id)")
	run(t, s, "CREATE INDEX w_id ON w (id)")
	for _, q := range []string{"SELECT * FROM v WHERE id = 1", "SELECT * FROM w WHERE id = 1"} {
		run(t, s, q) // the first read after the definitions derives the types
		clear(planned)
		for range 3 {
			c := columns(t, s, q)
			if c[1].Mod != (planner.TypeMod{Kind: planner.ModBpchar, N: 4}) {
				t.Fatalf("%s: c is %+v, want char(4)", q, c[1])
			}
		}
		if len(planned) != 0 {
			t.Errorf("%s: 3 reads planned view definitions %v, want none", q, planned)
		}
	}
	run(t, s, "ALTER TABLE t ADD CONSTRAINT pos CHECK (id > 0)")
	clear(planned)
	run(t, s, "SELECT * FROM v WHERE id = 1")
	run(t, s, "SELECT * FROM v WHERE id = 1")
	if planned["v"] != 1 {
		t.Errorf("after ALTER TABLE, 2 reads planned v %d times, want 1 (derived again once)", planned["v"])
	}
}
