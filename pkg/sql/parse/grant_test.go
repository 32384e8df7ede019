package parse

import (
	"reflect"
	"testing"
)

func TestGrantCluster(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want *GrantCluster
	}{
		{"GRANT USAGE ON CLUSTER c TO bob", &GrantCluster{Privileges: []string{"USAGE"}, Clusters: []string{"c"}, Grantees: []string{"bob"}}},
		{"grant usage, create on cluster c, \"D\" to public, x", &GrantCluster{Privileges: []string{"USAGE", "CREATE"}, Clusters: []string{"c", "D"}, Grantees: []string{"", "x"}}},
		{"REVOKE ALL PRIVILEGES ON CLUSTER c FROM bob CASCADE", &GrantCluster{Revoke: true, Clusters: []string{"c"}, Grantees: []string{"bob"}}},
	} {
		st, err := ParseOne(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		g, ok := st.(*GrantCluster)
		if !ok {
			t.Fatalf("%s: %T", tc.sql, st)
		}
		tc.want.SQL = tc.sql
		if !reflect.DeepEqual(g, tc.want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", tc.sql, g, tc.want)
		}
	}
	for _, bad := range []string{"GRANT USAGE ON CLUSTER TO bob", "GRANT USAGE ON CLUSTER c FROM bob", "REVOKE USAGE ON CLUSTER c TO bob", "GRANT USAGE ON CLUSTER c TO"} {
		if _, err := ParseOne(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	// Other GRANTs are the PostgreSQL grammar's.
	if st, err := ParseOne("GRANT SELECT ON t TO bob"); err != nil {
		t.Fatal(err)
	} else if _, ok := st.(*Postgres); !ok {
		t.Fatalf("GRANT ON a table parsed as %T", st)
	}
}
