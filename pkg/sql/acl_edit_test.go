package sql_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// relacl is t's pg_class.relacl.
const relacl = "SELECT relacl FROM pg_class WHERE relname = 't'"

// TestRelACLOrderAndOwnerEntry: relacl lists entries in PostgreSQL's
// order (a new grantee last, a re-granted one last again), keeps the
// owner's entry once every grant is revoked (NULL only before the first
// GRANT or REVOKE), and ALTER ... OWNER TO moves the old owner's entry to
// the new owner, merged with the new owner's (checked by testdata/acl.slt
// against PostgreSQL).
func TestRelACLOrderAndOwnerEntry(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, `CREATE ROLE o; CREATE ROLE a; CREATE ROLE b; CREATE ROLE c;
		CREATE TABLE t (x int); ALTER TABLE t OWNER TO o`)
	steps := []struct{ sql, want string }{
		{"SELECT 1", "NULL"},
		{"REVOKE SELECT ON t FROM b", "{o=arwdDxt/o}"},
		{"GRANT SELECT ON t TO c; GRANT SELECT ON t TO b; GRANT INSERT ON t TO a; GRANT UPDATE ON t TO c",
			"{o=arwdDxt/o,c=rw/o,b=r/o,a=a/o}"},
		{"REVOKE ALL ON t FROM b; GRANT SELECT ON t TO b", "{o=arwdDxt/o,c=rw/o,a=a/o,b=r/o}"},
		{"GRANT SELECT ON t TO b, b, o", "{o=arwdDxt/o,c=rw/o,a=a/o,b=r/o}"},
		{"REVOKE ALL ON t FROM a, b, c", "{o=arwdDxt/o}"},
		{"GRANT DELETE ON t TO PUBLIC; GRANT SELECT ON t TO b", "{o=arwdDxt/o,=d/o,b=r/o}"},
		{"ALTER TABLE t OWNER TO b", "{b=arwdDxt/b,=d/b}"},
		{"REVOKE DELETE ON t FROM PUBLIC", "{b=arwdDxt/b}"},
	}
	for _, st := range steps {
		run(t, s, st.sql)
		wantRows(t, s, relacl, st.want)
	}
	// The old owner kept nothing: o may be dropped.
	run(t, s, "DROP ROLE o")
}

// TestRedundantGrantNotices: PostgreSQL 15's NOTICE and WARNINGs for
// grants and revokes that change nothing, with their severities and codes.
func TestRedundantGrantNotices(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, `CREATE ROLE o; CREATE ROLE a; CREATE ROLE b; CREATE ROLE c;
		CREATE TABLE t (x int, y text); ALTER TABLE t OWNER TO o; CREATE VIEW v AS SELECT x FROM t;
		ALTER VIEW v OWNER TO o; GRANT SELECT ON t, v TO b; GRANT b TO a`)
	cases := []struct {
		sql  string
		want []string
	}{
		{"GRANT b TO a", []string{`NOTICE 00000 role "a" is already a member of role "b"`}},
		{"GRANT b TO a WITH ADMIN OPTION", nil},
		{"GRANT b TO a", []string{`NOTICE 00000 role "a" is already a member of role "b"`}},
		{"REVOKE b FROM c", []string{`WARNING 01000 role "c" is not a member of role "b"`}},
		{"REVOKE ADMIN OPTION FOR b FROM c", []string{`WARNING 01000 role "c" is not a member of role "b"`}},
		{"GRANT SELECT ON t TO b", nil},
		{"REVOKE SELECT ON t FROM c", nil},
		{"SET ROLE b; GRANT SELECT ON t TO c", []string{`WARNING 01007 no privileges were granted for "t"`}},
		{"REVOKE DELETE ON t FROM c", []string{`WARNING 01006 no privileges could be revoked for "t"`}},
		{"REVOKE SELECT ON v FROM c", []string{`WARNING 01006 no privileges could be revoked for "v"`,
			`WARNING 01006 no privileges could be revoked for column "x" of relation "v"`}},
		{"REVOKE ALL ON t FROM c", []string{`WARNING 01006 no privileges could be revoked for "t"`,
			`WARNING 01006 no privileges could be revoked for column "tableoid" of relation "t"`,
			`WARNING 01006 no privileges could be revoked for column "cmax" of relation "t"`,
			`WARNING 01006 no privileges could be revoked for column "xmax" of relation "t"`,
			`WARNING 01006 no privileges could be revoked for column "cmin" of relation "t"`,
			`WARNING 01006 no privileges could be revoked for column "xmin" of relation "t"`,
			`WARNING 01006 no privileges could be revoked for column "ctid" of relation "t"`,
			`WARNING 01006 no privileges could be revoked for column "x" of relation "t"`,
			`WARNING 01006 no privileges could be revoked for column "y" of relation "t"`}},
		{"RESET ROLE", nil},
	}
	for _, c := range cases {
		res, err := s.ExecuteSQL(context.Background(), c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		var got []string
		for _, r := range res {
			for _, n := range r.Notices {
				got = append(got, fmt.Sprintf("%s %s %s", n.Severity, n.Code, n.Message))
			}
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Fatalf("%s: notices\n%s\nwant\n%s", c.sql, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
	// A role holding no privilege on t is refused, as in PostgreSQL.
	run(t, s, "SET ROLE c")
	wantCode(t, s, "GRANT SELECT ON t TO a", "42501")
	wantRows(t, s, relacl, "{o=arwdDxt/o,b=r/o}")
}

// TestPsqlDp runs the query psql 15 sends for \dp (captured with psql -E,
// testdata/psql/dp.sql): access privileges from relacl, column privileges
// from pg_attribute.attacl (none in Tandem) and policies from pg_policy
// (none), with the nested correlated ARRAY subqueries psql writes.
func TestPsqlDp(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, `CREATE ROLE o; CREATE ROLE b; CREATE TABLE t (a int); CREATE VIEW v AS SELECT a FROM t;
		CREATE INDEX t_a ON t (a); ALTER TABLE t OWNER TO o; GRANT SELECT, UPDATE ON t TO b; GRANT SELECT ON v TO PUBLIC`)
	b, err := os.ReadFile("testdata/psql/dp.sql")
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, s, string(b), "public,t,table,o=arwdDxt/o\nb=rw/o,,", "public,v,view,alice=arwdDxt/alice\n=r/alice,,")
	wantRows(t, s, "SELECT attname, attnum, attacl FROM pg_attribute JOIN pg_class ON attrelid = pg_class.oid WHERE relname = 't' ORDER BY attnum",
		"tableoid,-6,NULL", "cmax,-5,NULL", "xmax,-4,NULL", "cmin,-3,NULL", "xmin,-2,NULL", "ctid,-1,NULL", "a,1,NULL")
	wantRows(t, s, "SELECT count(*) FROM pg_policy", "0")
}
