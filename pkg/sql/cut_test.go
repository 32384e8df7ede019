package sql_test

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// An ORDER BY with a LIMIT is offered to the backend as a cut of
// OFFSET+LIMIT rows in the query's order; anything else is not, and the
// answer is the same either way.
func TestTopKCutIsOffered(t *testing.T) {
	s, f := newSession(t)
	run(t, s, "CREATE TABLE t (a int NOT NULL, b text)")
	run(t, s, "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z'), (3, 'w')")
	cases := []struct {
		query string
		want  []string
		limit int64 // 0: no cut
		desc  bool
	}{
		{"SELECT a, b FROM t ORDER BY a DESC, b LIMIT 2 OFFSET 1", []string{"3,z", "2,y"}, 3, true},
		{"SELECT a FROM t ORDER BY a LIMIT 1", []string{"1"}, 1, false},
		{"SELECT a FROM t ORDER BY a", []string{"1", "2", "3", "3"}, 0, false},
		{"SELECT a FROM t LIMIT 0", nil, 0, false},
		{"SELECT a FROM t ORDER BY a LIMIT 100000", []string{"1", "2", "3", "3"}, 0, false},
	}
	for _, tc := range cases {
		wantRows(t, s, tc.query, tc.want...)
		cut := f.LastPeek().Cut
		switch {
		case tc.limit == 0 && cut != nil:
			t.Errorf("%s: cut %+v offered, want none", tc.query, cut)
		case tc.limit == 0:
		case cut == nil || cut.Limit == nil || *cut.Limit != tc.limit || len(cut.Order) == 0 ||
			cut.Order[0] != (plan.ColumnOrder{Column: 0, Desc: tc.desc, NullsLast: !tc.desc}) || cut.Offset != 0 || cut.Project != nil:
			t.Errorf("%s: cut %+v, want the order with limit %d, no offset, no projection", tc.query, cut, tc.limit)
		}
	}
}
