package sql_test

import (
	"os"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestPsqlListings runs the queries psql 15 sends for \dt and \d
// (captured with psql -E, kept under testdata/psql) against the pg_catalog
// emulation.
func TestPsqlListings(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, `CREATE TABLE orders (id bigint); CREATE TABLE accounts (id bigint);
		CREATE VIEW big AS SELECT * FROM orders WHERE id > 10;
		CREATE MATERIALIZED VIEW n AS SELECT count(*) FROM orders;
		CREATE INDEX orders_id ON orders (id);
		CREATE SOURCE counter FROM LOAD GENERATOR COUNTER`)
	read := func(name string) string {
		b, err := os.ReadFile("testdata/psql/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	wantRows(t, s, read("dt.sql"), "public,accounts,table,alice", "public,orders,table,alice")
	wantRows(t, s, read("d.sql"), "public,accounts,table,alice", "public,big,view,alice",
		"public,counter,foreign table,alice", "public,n,materialized view,alice", "public,orders,table,alice")
	run(t, s, "DROP TABLE accounts")
	wantRows(t, s, read("dt.sql"), "public,orders,table,alice")

	// What psql's \d NAME and \di read is not emulated: the refusal says
	// what to use instead.
	wantCode(t, s, "SELECT * FROM pg_catalog.pg_constraint", sqlerr.FeatureNotSupported)
	wantCode(t, s, "SELECT * FROM pg_index", sqlerr.FeatureNotSupported)
	// A constant as of the statement cannot be maintained.
	wantCode(t, s, "CREATE MATERIALIZED VIEW rels AS SELECT relname FROM pg_class", sqlerr.FeatureNotSupported)
	wantCode(t, s, "SUBSCRIBE (SELECT relname FROM pg_class)", sqlerr.FeatureNotSupported)
}

// TestPsqlDu runs the query psql 15 sends for \du (captured with psql -E):
// attributes and "Member of".
func TestPsqlDu(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, `CREATE ROLE bob LOGIN PASSWORD 'x'; CREATE ROLE boss SUPERUSER;
		CREATE ROLE staff NOINHERIT IN ROLE boss ROLE bob`)
	b, err := os.ReadFile("testdata/psql/du.sql")
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, s, string(b), "bob,f,t,f,f,t,-1,NULL,{staff},f,f", "boss,t,t,t,t,f,-1,NULL,{},f,f",
		"staff,f,f,f,f,f,-1,NULL,{boss},f,f")
}

// TestRelACL: pg_class.relacl in aclitem's text form, as PostgreSQL 15
// writes it (checked by testdata/acl.slt): NULL without grants, the
// owner's entry first, grants as the owner's, PUBLIC without a name, odd
// names quoted, the owner's own grants merged into its entry.
func TestRelACL(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, `CREATE ROLE o; CREATE ROLE "r x"; CREATE ROLE w;
		CREATE TABLE t (a int); CREATE INDEX t_a ON t (a); ALTER TABLE t OWNER TO o`)
	wantRows(t, s, "SELECT relname, relacl FROM pg_class ORDER BY 1", "t,NULL", "t_a,NULL")
	run(t, s, `GRANT SELECT ON t TO PUBLIC; GRANT DELETE, UPDATE ON t TO "r x"; GRANT ALL ON t TO o`)
	wantRows(t, s, "SELECT relname, relacl FROM pg_class ORDER BY 1",
		`t,{o=arwdDxt/o,=r/o,"\"r x\"=wd/o"}`, "t_a,NULL")
	run(t, s, `REVOKE ALL ON t FROM PUBLIC, "r x"`)
	wantRows(t, s, "SELECT relname, relacl FROM pg_class ORDER BY 1", "t,{o=arwdDxt/o}", "t_a,NULL")
}
