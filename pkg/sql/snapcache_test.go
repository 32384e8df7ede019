package sql_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestSnapshotReusedPerGeneration: statements over an unchanged catalog
// share one snapshot (no build per statement, whatever the catalog's
// size), and a catalog change by another session is seen by the next
// statement.
func TestSnapshotReusedPerGeneration(t *testing.T) {
	e := sql.NewEngine(sqltest.New())
	a, b := e.NewSession("alice"), e.NewSession("alice")
	run(t, a, "CREATE TABLE t (k int, v text); INSERT INTO t VALUES (1, 'x')")
	for i := range 20 {
		run(t, a, "CREATE VIEW v"+string(rune('a'+i))+" AS SELECT k FROM t")
	}
	wantRows(t, a, "SELECT v FROM t WHERE k = 1", "x")
	before := e.SnapshotBuilds()
	for range 10 {
		wantRows(t, a, "SELECT v FROM t WHERE k = 1", "x")
		wantRows(t, b, "SELECT v FROM t WHERE k = 1", "x")
	}
	if got := e.SnapshotBuilds() - before; got != 0 {
		t.Fatalf("20 reads of an unchanged catalog built %d snapshots, want 0", got)
	}

	steps := []struct {
		name, ddl, query string
		want             []string
		code             string
	}{
		{name: "create table", ddl: "CREATE TABLE u (a int); INSERT INTO u VALUES (7)", query: "SELECT a FROM u", want: []string{"7"}},
		{name: "alter table rename", ddl: "ALTER TABLE u RENAME TO w", query: "SELECT a FROM u", code: sqlerr.UndefinedTable},
		{name: "renamed table", query: "SELECT a FROM w", want: []string{"7"}},
		{name: "drop table", ddl: "DROP TABLE w", query: "SELECT a FROM w", code: sqlerr.UndefinedTable},
		{name: "create role", ddl: "CREATE ROLE r", query: "SELECT rolname FROM pg_roles WHERE rolname = 'r'", want: []string{"r"}},
		{name: "drop role", ddl: "DROP ROLE r", query: "SELECT rolname FROM pg_roles WHERE rolname = 'r'"},
	}
	for _, st := range steps {
		if st.ddl != "" {
			run(t, b, st.ddl)
		}
		if st.code != "" {
			wantCode(t, a, st.query, st.code)
			continue
		}
		wantRows(t, a, st.query, st.want...)
	}
}

// TestSnapshotEditsStayPrivate: a statement that edits its snapshot's
// roles and then fails leaves the shared snapshot as the catalog is.
func TestSnapshotEditsStayPrivate(t *testing.T) {
	e := sql.NewEngine(sqltest.New())
	s := e.NewSession("alice")
	run(t, s, "CREATE ROLE g")
	// The role is added to the statement's snapshot before its
	// memberships are refused (no role "missing"), and nothing is stored.
	wantCode(t, s, "CREATE ROLE x IN ROLE missing", sqlerr.UndefinedObject)
	// One statement records g's membership in m, then refuses g in g
	// (0LP01); nothing is stored.
	run(t, s, "CREATE ROLE h; CREATE ROLE m; GRANT g TO h")
	wantCode(t, s, "GRANT g TO m, g", sqlerr.InvalidGrantOperation)
	res, err := s.ExecuteSQL(context.Background(), "GRANT g TO m")
	if err != nil || len(res[0].Notices) != 0 {
		t.Fatalf("GRANT g TO m after a refused grant: %v, notices %v", err, res[0].Notices)
	}
	run(t, s, "CREATE ROLE x")
	wantRows(t, s, "SELECT rolname FROM pg_roles WHERE rolname = 'x'", "x")
}

// BenchmarkPointSelectCatalog200 runs a point read against a catalog of 200
// views (with -benchmem: the allocations per statement that the snapshot
// cache saves).
func BenchmarkPointSelectCatalog200(b *testing.B) {
	e := sql.NewEngine(sqltest.New())
	s := e.NewSession("alice")
	ctx := context.Background()
	if _, err := s.ExecuteSQL(ctx, "CREATE TABLE t (k int, v text); INSERT INTO t VALUES (1, 'x'); CREATE INDEX t_k ON t (k)"); err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		if _, err := s.ExecuteSQL(ctx, fmt.Sprintf("CREATE VIEW v%d AS SELECT k FROM t", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ExecuteSQL(ctx, "SELECT v FROM t WHERE k = 1"); err != nil {
			b.Fatal(err)
		}
	}
}
