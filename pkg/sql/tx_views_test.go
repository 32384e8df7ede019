package sql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestTransactionBlockReadsViewsOverItsWrites pins read-your-writes
// through maintained views: inside a block that wrote a table, a
// materialized view or an indexed view over it (directly or through
// other views) answers as its query would over the table as the block
// sees it, the same as the plain view v (an inlined query, which
// PostgreSQL answers the same way: the oracle checks it with plain views
// standing in for them, testdata/transactions.slt). Outside the block,
// and after a ROLLBACK, they show committed data only; after COMMIT, the
// committed writes.
func TestTransactionBlockReadsViewsOverItsWrites(t *testing.T) {
	const setup = `CREATE TABLE t (a int PRIMARY KEY, b text);
		INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'x');
		CREATE TABLE u (k int); INSERT INTO u VALUES (7);
		CREATE VIEW v AS SELECT b, count(*) AS n FROM t GROUP BY b;
		CREATE MATERIALIZED VIEW m AS SELECT b, count(*) AS n FROM t GROUP BY b;
		CREATE VIEW iv AS SELECT b, sum(a) AS s FROM t GROUP BY b;
		CREATE INDEX iv_b ON iv (b);
		CREATE MATERIALIZED VIEW mm AS SELECT count(*) AS groups FROM m;
		CREATE VIEW over_iv AS SELECT s FROM iv WHERE b = 'x';
		CREATE MATERIALIZED VIEW mu AS SELECT k FROM u`
	// Every case reads each relation below after its writes; want is
	// its rows (ordered) as the block sees them.
	reads := []struct{ name, sql string }{
		{"view", "SELECT b, n FROM v ORDER BY b"},
		{"materialized view", "SELECT b, n FROM m ORDER BY b"},
		{"indexed view", "SELECT b, s FROM iv ORDER BY b"},
		{"indexed view by key", "SELECT s FROM iv WHERE b = 'x'"},
		{"materialized view over a materialized view", "SELECT groups FROM mm"},
		{"view over an indexed view", "SELECT s FROM over_iv"},
		{"join of a materialized view and a table", "SELECT m.b, m.n, t.a FROM m JOIN t ON m.b = t.b ORDER BY t.a"},
		{"materialized view of an unwritten table", "SELECT k FROM mu"},
	}
	committed := [][]string{
		{"x,2", "y,1"}, {"x,2", "y,1"}, {"x,4", "y,2"}, {"4"}, {"2"}, {"4"},
		{"x,2,1", "y,1,2", "x,2,3"}, {"7"},
	}
	cases := []struct {
		name   string
		writes string
		want   [][]string // per read
	}{
		{name: "insert", writes: "INSERT INTO t VALUES (4, 'z'), (5, 'x')", want: [][]string{
			{"x,3", "y,1", "z,1"}, {"x,3", "y,1", "z,1"}, {"x,9", "y,2", "z,4"}, {"9"}, {"3"}, {"9"},
			{"x,3,1", "y,1,2", "x,3,3", "z,1,4", "x,3,5"}, {"7"},
		}},
		{name: "update and delete", writes: "UPDATE t SET b = 'y' WHERE a = 3; DELETE FROM t WHERE a = 1", want: [][]string{
			{"y,2"}, {"y,2"}, {"y,5"}, nil, {"1"}, nil,
			{"y,2,2", "y,2,3"}, {"7"},
		}},
		{name: "truncate", writes: "TRUNCATE t", want: [][]string{
			nil, nil, nil, nil, {"0"}, nil, nil, {"7"},
		}},
		{name: "unrelated table", writes: "INSERT INTO u VALUES (8)", want: [][]string{
			committed[0], committed[1], committed[2], committed[3], committed[4], committed[5], committed[6], {"7", "8"},
		}},
	}
	for _, tc := range cases {
		for _, end := range []string{"ROLLBACK", "COMMIT"} {
			t.Run(tc.name+"/"+end, func(t *testing.T) {
				f := sqltest.New()
				s := sql.NewEngine(f).NewSession("alice")
				run(t, s, setup)
				other := sql.NewEngine(f).NewSession("alice")
				run(t, s, "BEGIN")
				run(t, s, tc.writes)
				for i, r := range reads {
					if got := run(t, s, r.sql); strings.Join(got, "|") != strings.Join(tc.want[i], "|") {
						t.Errorf("%s in the block (%s):\n got %q\nwant %q", r.name, r.sql, got, tc.want[i])
					}
					// Not yet committed: another session sees the
					// committed rows.
					if got := run(t, other, r.sql); strings.Join(got, "|") != strings.Join(committed[i], "|") {
						t.Errorf("%s outside the block (%s):\n got %q\nwant %q", r.name, r.sql, got, committed[i])
					}
				}
				run(t, s, end)
				for i, r := range reads {
					want := committed[i]
					if end == "COMMIT" {
						want = tc.want[i]
					}
					if got := run(t, s, r.sql); strings.Join(got, "|") != strings.Join(want, "|") {
						t.Errorf("%s after %s (%s):\n got %q\nwant %q", r.name, end, r.sql, got, want)
					}
				}
			})
		}
	}
}

// TestSubscribeToViewOverBlockWrites: a SUBSCRIBE in a block that reads a
// table the block wrote only through a materialized view or an indexed
// view is refused like one that reads the table: its snapshot, computed
// on a replica from committed data, would contradict the block's own
// reads of the view.
func TestSubscribeToViewOverBlockWrites(t *testing.T) {
	for _, sub := range []string{"SUBSCRIBE m", "SUBSCRIBE iv", "SUBSCRIBE (SELECT groups FROM mm)"} {
		t.Run(sub, func(t *testing.T) {
			s, _ := newSession(t)
			run(t, s, `CREATE TABLE t (a int, b text); INSERT INTO t VALUES (1, 'x');
				CREATE MATERIALIZED VIEW m AS SELECT b, count(*) AS n FROM t GROUP BY b;
				CREATE MATERIALIZED VIEW mm AS SELECT count(*) AS groups FROM m;
				CREATE VIEW iv AS SELECT b FROM t; CREATE INDEX iv_b ON iv (b)`)
			run(t, s, "BEGIN")
			run(t, s, "DELETE FROM t WHERE a = 1")
			_, err := s.ExecuteSQL(t.Context(), sub)
			if sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), fmt.Sprintf("%q", "t")) {
				t.Fatalf("%s after a DELETE from t: %v, want 0A000 naming %q", sub, err, "t")
			}
			run(t, s, "ROLLBACK")
		})
	}
}
