package oracle

import (
	"strings"
	"testing"
)

func TestParseScript(t *testing.T) {
	recs, err := ParseScript(`# comment
statement ok
CREATE TABLE t (a int)

query ordered
SELECT a
FROM t ORDER BY a

statement error 22012
SELECT 1/0

tandem ok
CREATE INDEX ON t (a)

tandem error 0A000
WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[4].Kind != TandemError || recs[4].Code != "0A000" || recs[1].Kind != Query || !recs[1].Ordered || recs[1].SQL != "SELECT a\nFROM t ORDER BY a" ||
		recs[2].Code != "22012" || recs[3].Kind != TandemOnly || recs[1].Line != 5 {
		t.Fatalf("%+v", recs)
	}
	for _, bad := range []string{"frobnicate\nSELECT 1", "statement ok\n", "query sideways\nSELECT 1", "tandem error\nSELECT 1"} {
		if _, err := ParseScript(bad); err == nil || !strings.Contains(err.Error(), "line") {
			t.Fatalf("%q: err %v", bad, err)
		}
	}
}
