package sql_test

import (
	"context"
	"testing"
)

// TestGrantOption: WITH GRANT OPTION shows as "*" in relacl (also on the
// owner's entry that took over a grantee's options), REVOKE GRANT OPTION
// FOR keeps the privilege, REVOKE takes both, PUBLIC cannot hold grant
// options (checked by testdata/grant_option.slt against PostgreSQL).
func TestGrantOption(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, `CREATE ROLE o; CREATE ROLE a; CREATE ROLE b;
		CREATE TABLE t (x int); ALTER TABLE t OWNER TO o`)
	steps := []struct{ sql, want string }{
		{"GRANT SELECT, INSERT ON t TO a WITH GRANT OPTION; GRANT UPDATE ON t TO a", "{o=arwdDxt/o,a=a*r*w/o}"},
		{"GRANT SELECT ON t TO b; GRANT UPDATE ON t TO b WITH GRANT OPTION", "{o=arwdDxt/o,a=a*r*w/o,b=rw*/o}"},
		{"GRANT SELECT ON t TO b WITH GRANT OPTION; GRANT UPDATE ON t TO b", "{o=arwdDxt/o,a=a*r*w/o,b=r*w*/o}"},
		{"REVOKE GRANT OPTION FOR INSERT, UPDATE ON t FROM a", "{o=arwdDxt/o,a=ar*w/o,b=r*w*/o}"},
		{"REVOKE UPDATE ON t FROM b", "{o=arwdDxt/o,a=ar*w/o,b=r*/o}"},
		{"REVOKE GRANT OPTION FOR SELECT ON t FROM PUBLIC", "{o=arwdDxt/o,a=ar*w/o,b=r*/o}"},
		{"ALTER TABLE t OWNER TO a", "{a=ar*wdDxt/a,b=r*/a}"},
		{"REVOKE ALL ON t FROM b", "{a=ar*wdDxt/a}"},
	}
	for _, st := range steps {
		run(t, s, st.sql)
		wantRows(t, s, "SELECT relacl FROM pg_class WHERE relname = 't'", st.want)
	}
	wantCode(t, s, "GRANT SELECT ON t TO PUBLIC WITH GRANT OPTION", "0LP01")
	wantCode(t, s, "GRANT SELECT ON t TO b, PUBLIC WITH GRANT OPTION", "0LP01")
	wantRows(t, s, "SELECT relacl FROM pg_class WHERE relname = 't'", "{a=ar*wdDxt/a}")
}

// TestGrantOptionNotOwner: a non-owner without the grant option gets the
// WARNING and changes nothing (but grant options to PUBLIC are 0LP01
// first, as in PostgreSQL); one holding it grants onward, as the grantor
// of what it grants; revoking the option it granted with is 2BP01 unless
// CASCADE, which takes the onward grant too; a grant option is not a
// privilege check.
func TestGrantOptionNotOwner(t *testing.T) {
	s, _ := newSession(t)
	run(t, s, `CREATE ROLE o; CREATE ROLE a; CREATE ROLE b;
		CREATE TABLE t (x int); ALTER TABLE t OWNER TO o;
		GRANT SELECT ON t TO a WITH GRANT OPTION; GRANT INSERT ON t TO a; SET ROLE a`)
	res, err := s.ExecuteSQL(context.Background(), "GRANT INSERT ON t TO b")
	if err != nil || len(res) != 1 || len(res[0].Notices) != 1 || res[0].Notices[0].Code != "01007" {
		t.Fatalf("GRANT without the grant option: %+v, %v", res, err)
	}
	wantCode(t, s, "GRANT INSERT ON t TO PUBLIC WITH GRANT OPTION", "0LP01")
	res, err = s.ExecuteSQL(context.Background(), "GRANT SELECT, INSERT ON t TO b")
	if err != nil || len(res) != 1 || len(res[0].Notices) != 1 || res[0].Notices[0].Message != `not all privileges were granted for "t"` {
		t.Fatalf("GRANT of some privileges with their option: %+v, %v", res, err)
	}
	run(t, s, "GRANT ALL ON t TO b")
	wantCode(t, s, "UPDATE t SET x = 1", "42501")
	run(t, s, "RESET ROLE")
	const relacl = "SELECT relacl FROM pg_class WHERE relname = 't'"
	wantRows(t, s, relacl, "{o=arwdDxt/o,a=ar*/o,b=r/a}")
	wantCode(t, s, "REVOKE SELECT ON t FROM a", "2BP01")
	wantCode(t, s, "REVOKE GRANT OPTION FOR SELECT ON t FROM a", "2BP01")
	run(t, s, "REVOKE GRANT OPTION FOR SELECT ON t FROM a CASCADE")
	wantRows(t, s, relacl, "{o=arwdDxt/o,a=ar/o}")
}
